/** GET /api/labels: the known persons, with image counts and whether the trained model knows each. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function labelRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'labels', async () => {
    const trained = ctx.faces.trainedLabels;
    const details = (await ctx.images.labels()).map(({ label, images }) => ({ label, images, trained: trained.has(label) }));
    const labels = details.map((d) => d.label);
    return { labels, count: labels.length, details };
  });
  return app;
}
