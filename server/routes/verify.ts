/** POST /api/verify: does the one face of this image (or of each frame) belong to this person? */
import { Hono } from 'hono';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { VerifyResponse } from '../../shared/api/verify.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { keepVerification, verificationPixels } from '../sightings/hooks.js';

export function verifyRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'verify', async (c, { body }) => {
    const checked = normalizeLabel(body.label);
    if (!checked.ok) throw new ApiError('invalid_label', checked.reason);
    const model = body.recognition_model === 'dlib' ? 'embedding' : body.recognition_model;
    // Every frame is read before any work, so one bad frame is a 400 whatever the others hold.
    const images = (body.frames ?? [body.image!]).map((text) => decodeBase64Image(text));
    // Timed as recognition work: the same detectors and recognizers.
    // #26 sightings: the first image's face (its crop copied while the image is decoded), kept after this answer.
    const sighting = verificationPixels(ctx);
    const { frames, ...verdict } = await timeEngine(c, 'recognize', () =>
      ctx.faces.verify(checked.label, images, model, sighting.withPixels),
    );
    keepVerification(ctx, c, { pixels: sighting.pixels(), verdict, frame: frames[0] });
    const answer: VerifyResponse = body.frames
      ? { ...verdict, frames }
      : { ...verdict, ...(frames[0]?.face ? { face: frames[0].face } : {}) };
    return answer;
  });
  return app;
}
