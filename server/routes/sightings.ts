/**
 * Sightings (`/api/sightings`): list and filter (person, unknown only, time, source, group; paged newest first), one
 * sighting, its JPEG crop, delete one, delete those before a time; the queue of those waiting to be stored (#36 4).
 * Faces are biometric data: administrators only.
 */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';

export function sightingRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  // #36 4: before /sightings/{id}, which would take "status" for an id.
  mountRoute(app, 'sightingsStatus', () => ({ enabled: ctx.settings.sightingsEnabled, ...ctx.sightingRecorder.stats() }));

  mountRoute(app, 'sightings', async (_c, { query }) => {
    if (query.from && query.to && Date.parse(query.from) >= Date.parse(query.to)) {
      throw new ApiError('bad_request', 'query parameter "to": must be after "from"');
    }
    return ctx.sightings.list({
      label: query.label,
      unknown_only: query.unknown === 'true',
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
      source: query.source,
      group_id: query.group,
      include_dismissed: query.include_dismissed === 'true',
      limit: query.limit,
      cursor: query.cursor,
    });
  });

  mountRoute(app, 'sighting', async (_c, { params }) => {
    const found = await ctx.sightings.get(params.id);
    if (!found) throw new ApiError('not_found', `no sighting ${params.id}`);
    return found;
  });

  mountRoute(app, 'sightingCrop', async (c, { params }) => {
    const bytes = await ctx.sightings.crop(params.id);
    if (!bytes) throw new ApiError('not_found', `no sighting ${params.id}`);
    return c.body(new Uint8Array(bytes), 200, { 'content-type': 'image/jpeg', 'cache-control': 'private, max-age=3600' });
  });

  mountRoute(app, 'deleteSighting', async (_c, { params }) => {
    if (!(await ctx.sightings.remove(params.id))) throw new ApiError('not_found', `no sighting ${params.id}`);
    return { status: 'ok' as const, id: params.id, deleted: 1 };
  });

  mountRoute(app, 'purgeSightings', async (_c, { query }) => {
    const deleted = await ctx.sightings.removeBefore(new Date(query.before));
    if (deleted > 0) ctx.log.info(`sightings: deleted ${deleted} seen before ${query.before}`);
    return { status: 'ok' as const, deleted };
  });

  return app;
}
