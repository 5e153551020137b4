/** POST /api/train runs a training over every stored image; GET /api/train/status reports its progress. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function trainRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  // The body (empty or `{}`) is validated by the route table and not read yet.
  mountRoute(app, 'train', () => ctx.faces.train());
  mountRoute(app, 'trainStatus', () => ctx.faces.trainStatus());
  return app;
}
