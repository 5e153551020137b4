/**
 * The results history: POST /api/results stores results captured in a browser (1 to 100 per request, all or
 * nothing: one invalid record and none is stored), GET /api/results reads them newest first.
 */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';
import { takeCrops } from '../sightings/hooks.js';

export function resultRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  mountRoute(app, 'storeResults', async (c, { body }) => {
    // #26 sightings: face crops are checked (400), kept as sightings once stored, never stored with the results.
    const crops = takeCrops(ctx, c, body.results);
    const outcome = await ctx.results.add(crops.records);
    crops.keep();
    if (outcome.accepted > 0) ctx.log.debug(`results: stored ${outcome.accepted}, ${outcome.duplicates} duplicates, ${outcome.total} kept`);
    return { status: 'ok' as const, ...outcome };
  });

  mountRoute(app, 'results', async (_c, { query }) => {
    // In the database: what other API replicas stored is there too.
    const { results, matched, total } = await ctx.results.query(query);
    return { results, count: results.length, matched, total, max: ctx.results.max };
  });

  return app;
}
