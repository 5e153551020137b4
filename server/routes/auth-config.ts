/** GET /api/auth/config: tells the web app whether to sign in, and where (open, like the probes). */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';

export function authConfigRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const { authMode, oidcIssuer, oidcClientId } = ctx.settings;
  mountRoute(app, 'authConfig', () =>
    authMode === 'oidc'
      ? { mode: 'oidc' as const, issuer: oidcIssuer, client_id: oidcClientId }
      : { mode: 'off' as const, issuer: null, client_id: null },
  );
  return app;
}
