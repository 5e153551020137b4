/** GET /api/deletions: people deleted, newest first, for devices to drop what they still queue of them. */
import { Hono } from 'hono';
import { recentDeletions } from '../deletion/forget-person.js';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function deletionRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'deletedPeople', async (_c, { query }) => ({
    deleted: await recentDeletions(ctx, query.since ? new Date(query.since) : null, query.limit),
  }));
  return app;
}
