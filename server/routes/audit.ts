/**
 * GET /api/audit: the audit log of biometric operations (server/audit), for administrators, newest first and
 * paged. PUT /api/people/{label}: a person's settings, for now whether kiosks get their templates
 * (server/audit/kiosk-gallery.ts).
 */
import { Hono } from 'hono';
import { normalizeLabel } from '../../shared/api/labels.js';
import { InvalidCursorError } from '../audit/audit-log.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';

export function auditRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  mountRoute(app, 'auditLog', async (_c, { query }) => {
    try {
      const page = await ctx.audit.list({
        action: query.action,
        actor: query.actor,
        from: query.from ? new Date(query.from) : undefined,
        to: query.to ? new Date(query.to) : undefined,
        limit: query.limit,
        cursor: query.cursor,
      });
      return { ...page, retention_days: ctx.settings.auditRetentionDays };
    } catch (err) {
      if (err instanceof InvalidCursorError) throw new ApiError('bad_request', `query parameter "cursor": ${err.message}`);
      throw err;
    }
  });

  mountRoute(app, 'updatePerson', async (c, { params, body }) => {
    const check = normalizeLabel(params.label);
    if (!check.ok) throw new ApiError('invalid_label', check.reason);
    const { label } = check;
    c.set('auditTarget', label);
    const known =
      (await ctx.images.list(label)) !== null || (await ctx.db.query('SELECT 1 FROM people WHERE label = $1', [label])).length > 0;
    if (!known) throw new ApiError('label_not_found', `nobody is enrolled as "${label}"`);
    // A person with no row yet (enrolled before names were kept) gets one named by the label.
    const [row] = await ctx.db.query<{ label: string; display_name: string; kiosk: boolean }>(
      `INSERT INTO people (label, display_name, kiosk) VALUES ($1, $1, $2)
       ON CONFLICT (label) DO UPDATE SET kiosk = EXCLUDED.kiosk RETURNING label, display_name, kiosk`,
      [label, body.kiosk],
    );
    ctx.log.info(`person ${label}: ${body.kiosk ? 'in' : 'kept out of'} the kiosk gallery`);
    return row;
  });

  return app;
}
