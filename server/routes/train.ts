/** POST /api/train runs a training over every stored image; GET /api/train/status reports its progress. */
import { Hono } from 'hono';
import { trainRequest } from '../../shared/api/contract.js';
import type { AppContext } from '../http/context.js';
import { readJson } from '../http/request.js';

export function trainRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  app.post('/train', async (c) => {
    await readJson(c, trainRequest, {});
    return c.json(await ctx.faces.train());
  });
  app.get('/train/status', (c) => c.json(ctx.faces.trainStatus()));
  return app;
}
