/**
 * GET /api/labels: the known persons, with image counts, whether the trained model knows each, their display names
 * and the summary of their photos' checks.
 */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';
// #26 enrollment
import { labelDetails } from '../people/enrollment.js';

export function labelRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'labels', async () => {
    const trained = ctx.faces.trainedLabels;
    const details = await labelDetails(
      ctx,
      (await ctx.images.labels()).map(({ label, images }) => ({ label, images, trained: trained.has(label) })),
    );
    const labels = details.map((d) => d.label);
    return { labels, count: labels.length, details };
  });
  return app;
}
