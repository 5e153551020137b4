/**
 * #36 2: a person's page (GET /api/people/{label}), rename, cover, merge, move photos, undo
 * (server/people/person-actions.ts), and search by face (POST /api/sightings/search, server/people/face-search.ts).
 * The audit middleware records each with its actor; handlers add what it cannot read from the path (`auditDetail`).
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { admitSearch, searchSightings } from '../people/face-search.js';
import { actionModels } from '../people/merge-models.js';
import { PersonActions } from '../people/person-actions.js';
import { descriptorFrom } from '../sightings/sighting-store.js';
import { RateLimitedError } from '../verify/rate-limit.js';

function actorOf(c: Context): string | null {
  const principal = c.get('principal');
  return principal ? (principal.username ?? principal.subject) : null;
}

/** Who asks, for the search counters: the principal, else the client address (AUTH_MODE=off). */
function callerOf(c: Context): string {
  const principal = c.get('principal');
  if (principal)
    return principal.kind === 'client'
      ? `client:${principal.client ?? principal.subject}`
      : `user:${principal.subject || principal.username}`;
  try {
    return `address:${getConnInfo(c).remote.address ?? 'unknown'}`;
  } catch {
    return 'address:unknown';
  }
}

export function peopleRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const actions = new PersonActions({
    db: ctx.db,
    images: ctx.images,
    log: ctx.log,
    trainedLabels: () => ctx.faces.trainedLabels,
    trainingRunning: () => ctx.faces.trainStatus().state === 'running',
    correctionsMoved: () => ctx.corrections.relabelled(),
    models: actionModels(ctx),
  });

  mountRoute(app, 'personPage', async (_c, { params, query }) => actions.page(params.label, query.sightings));

  mountRoute(app, 'renamePerson', async (c, { params, body }) => {
    const out = await actions.rename(params.label, body.display_name, actorOf(c));
    c.set('auditDetail', { action_id: out.action_id, kind: 'rename' });
    return out;
  });

  mountRoute(app, 'setPersonCover', async (c, { params, body }) => {
    const out = await actions.setCover(params.label, body.filename, actorOf(c));
    c.set('auditDetail', { action_id: out.action_id, kind: 'cover' });
    return out;
  });

  mountRoute(app, 'mergePerson', async (c, { params, body }) => {
    const out = await actions.merge(params.label, body.into, actorOf(c));
    c.set('auditDetail', { action_id: out.action_id, kind: 'merge', into: out.label, photos: out.moved?.photos ?? 0 });
    return out;
  });

  mountRoute(app, 'movePhotos', async (c, { params, body }) => {
    const out = await actions.move(params.label, body.filenames, body.to, body.display_name, actorOf(c));
    c.set('auditDetail', { action_id: out.action_id, kind: 'move', to: out.label, photos: out.moved?.photos ?? 0 });
    return out;
  });

  mountRoute(app, 'undoPersonAction', async (c, { params }) => {
    const out = await actions.undo(params.id);
    c.set('auditTarget', out.label);
    c.set('auditDetail', { action_id: out.action_id, kind: `undo_${out.kind}` });
    return out;
  });

  mountRoute(app, 'searchFaces', async (c, { body }) => {
    // Who may ask (the role table), then how often: both before any face is read.
    try {
      await admitSearch(ctx.db, ctx.log, callerOf(c), {
        windowS: ctx.settings.verifyRateWindowS,
        perCaller: ctx.settings.verifyRatePerVerifier,
      });
    } catch (err) {
      if (err instanceof RateLimitedError) c.header('retry-after', String(err.retryAfterSeconds));
      throw err;
    }
    let query: Float32Array | null;
    if (body.sighting_id !== undefined) {
      c.set('auditTarget', body.sighting_id);
      const [row] = await ctx.db.query<{ descriptor: Uint8Array | null }>('SELECT descriptor FROM sightings WHERE id = $1', [
        body.sighting_id,
      ]);
      if (!row) throw new ApiError('not_found', `no sighting ${body.sighting_id}`);
      query = descriptorFrom(row.descriptor ? new Uint8Array(row.descriptor) : null);
      if (!query)
        throw new ApiError('model_unavailable', `sighting ${body.sighting_id} kept no descriptor (the embedding recognizer was off)`);
    } else {
      let bytes: Uint8Array;
      if (body.label !== undefined) {
        const check = normalizeLabel(body.label);
        if (!check.ok) throw new ApiError('invalid_label', check.reason);
        c.set('auditTarget', check.label);
        const stored = await ctx.images.read(check.label, body.filename as string);
        if (!stored) throw new ApiError('not_found', `"${check.label}" has no photo "${body.filename}"`);
        bytes = stored;
      } else {
        bytes = decodeBase64Image(body.image as string);
      }
      if (!ctx.faces.embeddingAvailability.available)
        throw new ApiError('model_unavailable', 'search by face needs the embedding recognizer (EMBEDDING_ENABLED), which is not running');
      // Its largest face (the whole image when none is found), described as sightings are.
      const sample = await ctx.faces.correctionSample(bytes, (width, height) => ({ x: 0, y: 0, width, height }));
      query = sample.descriptor;
      if (!query) throw new ApiError('no_faces_found', 'no face could be described in this image');
    }
    return searchSightings(ctx.db, query, { max: ctx.faces.ruleFor('embedding').max, limit: body.limit, exclude: body.sighting_id });
  });

  return app;
}
