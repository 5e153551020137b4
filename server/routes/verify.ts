/** POST /api/verify: does the one face of this image (or of each frame) belong to this person? */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { normalizeLabel } from '../../shared/api/labels.js';
import { mayVerifyAnyone, VERIFIER } from '../../shared/api/roles.js';
import type { VerifyResponse } from '../../shared/api/verify.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { keepVerification, verificationPixels } from '../sightings/hooks.js';
import { RateLimitedError, VerifyRateLimiter, type VerifyAttempt } from '../verify/rate-limit.js';

/**
 * #35: who asks, and whether they may verify anyone. Under AUTH_MODE=oidc a user may verify only their own label
 * (their `preferred_username`, normalised as a label) unless their token holds biometric-verifier or
 * biometric-admin; with AUTH_MODE=off there is no one to tell apart: the caller is the client address, and it may
 * verify anyone (the answers are as they were).
 */
function callerOf(c: Context, label: string): VerifyAttempt {
  const principal = c.get('principal');
  if (!principal) {
    let address = 'unknown';
    try {
      address = getConnInfo(c).remote.address ?? address;
    } catch {
      // Not served by @hono/node-server (app.fetch called directly): one bucket for all.
    }
    return { caller: `address:${address}`, verifier: true, label };
  }
  const verifier = mayVerifyAnyone(principal.roles);
  const caller =
    principal.kind === 'client' ? `client:${principal.client ?? principal.subject}` : `user:${principal.subject || principal.username}`;
  if (!verifier) {
    const own = principal.username === null ? null : normalizeLabel(principal.username);
    if (!own?.ok || own.label !== label)
      throw new ApiError(
        'not_own_label',
        `a user may verify only their own label${own?.ok ? ` (${own.label})` : ''}; verifying "${label}" needs the role ${VERIFIER} or biometric-admin`,
      );
  }
  return { caller, verifier, label };
}

/** A frame's verdict without the continuous scores, for a caller that may not verify anyone. */
function withoutScores<T extends { distance?: unknown; confidence?: unknown }>(answer: T): Omit<T, 'distance' | 'confidence'> {
  const { distance: _distance, confidence: _confidence, ...rest } = answer;
  return rest;
}

export function verifyRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const { settings } = ctx;
  const limiter = new VerifyRateLimiter(
    ctx.db,
    () => ({
      windowS: settings.verifyRateWindowS,
      perCaller: settings.verifyRatePerCaller,
      perVerifier: settings.verifyRatePerVerifier,
      perLabel: settings.verifyRatePerLabel,
    }),
    ctx.log,
  );
  mountRoute(app, 'verify', async (c, { body }) => {
    const checked = normalizeLabel(body.label);
    if (!checked.ok) throw new ApiError('invalid_label', checked.reason);
    // Who may ask, then how often: both before any image is read.
    const attempt = callerOf(c, checked.label);
    try {
      await limiter.admit(attempt);
    } catch (err) {
      if (err instanceof RateLimitedError) c.header('retry-after', String(err.retryAfterSeconds));
      throw err;
    }
    const model = body.recognition_model === 'dlib' ? 'embedding' : body.recognition_model;
    // Every frame is read before any work, so one bad frame is a 400 whatever the others hold.
    const images = (body.frames ?? [body.image!]).map((text) => decodeBase64Image(text));
    // Timed as recognition work: the same detectors and recognizers.
    // #26 sightings: the first image's face (its crop copied while the image is decoded), kept after this answer.
    const sighting = verificationPixels(ctx);
    // #36 4: sightings' work waits while this runs (and shortly after).
    const { frames, ...verdict } = await ctx.sightingRecorder.recognizing(() =>
      timeEngine(c, 'recognize', () => ctx.faces.verify(checked.label, images, model, sighting.withPixels)),
    );
    keepVerification(ctx, c, { pixels: sighting.pixels(), verdict, frame: frames[0] });
    const answer: VerifyResponse = body.frames
      ? { ...verdict, frames }
      : { ...verdict, ...(frames[0]?.face ? { face: frames[0].face } : {}) };
    if (attempt.verifier) return answer;
    // #35: the verdict without the distance (nor the confidence, the same number in other units).
    return { ...withoutScores(answer), ...(answer.frames ? { frames: answer.frames.map(withoutScores) } : {}) };
  });
  return app;
}
