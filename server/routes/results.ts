/**
 * The results history: POST /api/results stores results captured in a browser (1 to 100 per request, all or
 * nothing: one invalid record and none is stored), GET /api/results reads them newest first.
 */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function resultRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  mountRoute(app, 'storeResults', async (_c, { body }) => {
    const outcome = await ctx.results.add(body.results);
    if (outcome.accepted > 0) ctx.log.debug(`results: stored ${outcome.accepted}, ${outcome.duplicates} duplicates, ${outcome.total} kept`);
    return { status: 'ok' as const, ...outcome };
  });

  mountRoute(app, 'results', async (_c, { query }) => {
    // Other API replicas on the same DATA_DIR may have added records: a stat, and a read when they did.
    await ctx.results.refresh();
    const { results, matched } = ctx.results.query(query);
    return { results, count: results.length, matched, total: ctx.results.size, max: ctx.results.max };
  });

  return app;
}
