/** GET /api/processor/status: the last background check of the event processor (PROCESSOR_URL), at once. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function processorRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'processorStatus', () => ctx.processorStatus.status());
  return app;
}
