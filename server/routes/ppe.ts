/**
 * PPE compliance: POST /api/ppe/detect (one check), GET /api/ppe/status, GET /api/ppe/events (the history, newest
 * first) and GET /api/ppe/dataset.zip (the frames checked so far with YOLO labels). The work is in server/ppe/.
 */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';

export const DEFAULT_EVENTS_LIMIT = 100;

export function ppeRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  mountRoute(app, 'ppeDetect', (c, { body }) => timeEngine(c, 'ppe', () => ctx.ppe.check(body.image, body.confidence)));

  mountRoute(app, 'ppeStatus', () => ctx.ppe.status());

  mountRoute(app, 'ppeEvents', (_c, { query }) => {
    const events = ctx.ppe.events({ limit: query.limit ?? DEFAULT_EVENTS_LIMIT, status: query.status });
    return { events, count: events.length };
  });

  mountRoute(app, 'ppeDataset', async () => {
    const zip = await ctx.ppe.datasetZip();
    return new Response(zip, {
      status: 200,
      headers: {
        'content-type': 'application/zip',
        'content-disposition': 'attachment; filename="ppe-dataset.zip"',
        'cache-control': 'no-store',
      },
    });
  });

  return app;
}
