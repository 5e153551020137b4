/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * The service's own endpoints: liveness, readiness and the sign-in configuration the web app starts from.
 */
import { authConfigResponse } from '../auth.js';
import { healthResponse, readyResponse } from '../health.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { json, ok } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const serviceRoutes = {
  health: defineRoute({
    ...ENDPOINTS.health,
    summary: 'Liveness: the process answers',
    tags: ['Health'],
    responses: ok(healthResponse, 'The service is up.'),
    errors: [],
  }),
  ready: defineRoute({
    ...ENDPOINTS.ready,
    summary: 'Readiness: the local detector runs',
    description: 'The remote engine and the object detector are reported beside it; neither holds readiness back.',
    tags: ['Health'],
    responses: {
      200: { description: 'Ready.', content: json(readyResponse) },
      503: { description: 'Not ready yet; the same body says what is missing.', content: json(readyResponse) },
    },
    errors: [],
  }),
  authConfig: defineRoute({
    ...ENDPOINTS.authConfig,
    summary: 'How the web app signs in: the OpenID issuer and client, or that no sign-in is needed',
    description:
      'Open, like the probes. With AUTH_MODE=oidc every other endpoint but the probes and the docs needs ' +
      '`Authorization: Bearer <access token>` from this issuer, with the audience OIDC_AUDIENCE and the role the operation names.',
    tags: ['Auth'],
    responses: ok(authConfigResponse, 'The sign-in configuration.'),
    errors: [],
  }),
} satisfies Partial<Record<EndpointName, ApiRoute>>;
