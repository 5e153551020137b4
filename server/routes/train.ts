/** POST /api/train runs a training over every stored image; GET /api/train/status reports its progress. */
import { Hono } from 'hono';
import { recordTrainedDetection } from '../engines/faces/trained-detection.js';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function trainRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  // The body (empty or `{}`) is validated by the route table and not read yet.
  mountRoute(app, 'train', async () => {
    const trained = await ctx.faces.train();
    // #29: the Models page says when the active detection method is not the one the models were trained with.
    await recordTrainedDetection(ctx.settings.dataDir, trained, ctx.shared).catch((err) =>
      ctx.log.warn(`keeping the training's detection method failed: ${String(err)}`),
    );
    return trained;
  });
  mountRoute(app, 'trainStatus', () => ctx.faces.trainStatus());
  return app;
}
