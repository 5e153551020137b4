/**
 * The route table: every endpoint under /api, once. The server mounts and validates with it and publishes it
 * as OpenAPI (GET /api/openapi.json); the typed client (client.ts) takes its types from it; the API tests
 * check every real answer against it.
 */
import { metricsRoute } from './processor.js';
import type { ApiRoute } from './route.js';
import { withAccess } from './roles.js';
import type { EndpointName } from './endpoints.js';
import { serviceRoutes } from './routes/service.js';
import { recognitionRoutes } from './routes/recognition.js';
import { imageRoutes } from './routes/images.js';
import { modelRoutes } from './routes/models.js';
import { sightingRoutes } from './routes/sightings.js';
import { resultRoutes } from './routes/results.js';
import { reviewRoutes } from './routes/review.js';
import { analysisRoutes } from './routes/analysis.js';
import { docsRoutes } from './routes/docs.js';
import { peopleRoutes } from './routes/people.js';

// Each area's entries are in routes/*.ts, in this order (the order of the OpenAPI document).
const routeTable = {
  ...serviceRoutes,
  ...recognitionRoutes,
  ...imageRoutes,
  ...modelRoutes,
  ...sightingRoutes,
  ...resultRoutes,
  ...reviewRoutes,
  ...analysisRoutes,
  ...docsRoutes,
  ...peopleRoutes,
} satisfies Record<EndpointName, ApiRoute>;

/** The table with who may call each route under AUTH_MODE=oidc (roles.ts, beside this file). */
export const apiRoutes = withAccess(routeTable);

export type ApiRoutes = typeof apiRoutes;
export type RouteName = keyof ApiRoutes;

/**
 * The API server's endpoints outside /api, in its document at their own paths. Only probes and scrapers call them:
 * the typed client does not.
 */
export const rootRoutes = {
  metrics: metricsRoute(
    'request durations by route and status, engine timings, worker queue depths, trainings, upstream errors and the ' +
      'default Node.js process metrics (docs/operations.md, "Metrics and request ids"). No labels or secrets.',
  ),
} satisfies Record<string, ApiRoute>;

export type RootRouteName = keyof typeof rootRoutes;
