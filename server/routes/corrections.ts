/**
 * Corrections ("not this person", server/review/corrections.ts): POST /api/corrections keeps a sighting's face as
 * not this person, GET lists them, DELETE removes one.
 */
import type { Context } from 'hono';
import { Hono } from 'hono';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';

/** Who acts: the signed-in user or client under AUTH_MODE=oidc, else nobody known. */
function actorOf(c: Context): string | null {
  const principal = c.get('principal');
  return principal ? (principal.username ?? principal.subject) : null;
}

export function correctionRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  mountRoute(app, 'createCorrection', async (c, { body }) =>
    ctx.corrections.add({ sighting_id: body.sighting_id, ...(body.label !== undefined ? { label: body.label } : {}), actor: actorOf(c) }),
  );

  mountRoute(app, 'corrections', async (_c, { query }) => {
    let label: string | undefined;
    if (query.label !== undefined) {
      const checked = normalizeLabel(query.label);
      if (!checked.ok) throw new ApiError('invalid_label', checked.reason);
      label = checked.label;
    }
    const corrections = await ctx.corrections.list(label);
    return { corrections, total: corrections.length };
  });

  mountRoute(app, 'deleteCorrection', async (_c, { params }) => {
    const removed = await ctx.corrections.remove(params.id);
    if (!removed) throw new ApiError('not_found', `no correction ${params.id}`);
    return { deleted: removed.id, label: removed.label };
  });

  return app;
}
