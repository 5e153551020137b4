/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * #26 sightings: the faces the recognitions kept, their crops, their deletion.
 */
import { binaryBody } from '../common.js';
import {
  sighting,
  sightingDeleteResponse,
  sightingParams,
  sightingsPurgeQuery,
  sightingsPurgeResponse,
  sightingsQuery,
  sightingsResponse,
  sightingsStatusResponse,
} from '../sightings.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { ok } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const sightingRoutes = {
  // #26 sightings
  sightings: defineRoute({
    ...ENDPOINTS.sightings,
    summary: 'Faces the recognitions saw (sightings), newest first, paged',
    description:
      'Filter by person (`label`), unknown faces only (`unknown=true`), time (`from`, `to`), `source` and review `group`; ' +
      'dismissed faces are left out unless `include_dismissed=true`. `next_cursor` gives the next page. What is kept, and for how long: ' +
      'SIGHTINGS_ENABLED, SIGHTINGS_SOURCES, SIGHTINGS_RETENTION_DAYS, SIGHTINGS_MAX, SIGHTINGS_INTERVAL_S.',
    tags: ['Sightings'],
    request: { query: sightingsQuery },
    responses: ok(sightingsResponse, 'One page of sightings.'),
    errors: [],
  }),
  // #36 4 (before `sighting`, whose {id} would match "status")
  sightingsStatus: defineRoute({
    ...ENDPOINTS.sightingsStatus,
    summary: 'The queue of sightings waiting to be stored (below recognition: they wait while recognitions run)',
    description:
      "A sighting's crop, descriptor and row are made after the answer, when no recognition runs. `queued`: jobs " +
      'waiting; `dropped`: jobs dropped since the start, the oldest first, because the queue (256 jobs) was full while ' +
      'recognitions kept the server busy, or at shutdown; `stored` and `failed`: sightings since the start.',
    tags: ['Sightings'],
    responses: ok(sightingsStatusResponse, 'The queue now.'),
    errors: [],
  }),
  sighting: defineRoute({
    ...ENDPOINTS.sighting,
    summary: 'One sighting',
    tags: ['Sightings'],
    request: { params: sightingParams },
    responses: ok(sighting, 'The sighting.'),
    errors: ['bad_request', 'not_found'],
  }),
  sightingCrop: defineRoute({
    ...ENDPOINTS.sightingCrop,
    summary: "A sighting's face crop (JPEG)",
    description: 'The face box widened by 40% each side, its longest side at most 160 px.',
    tags: ['Sightings'],
    request: { params: sightingParams },
    responses: { 200: { description: 'The crop.', content: { 'image/jpeg': { schema: binaryBody } } } },
    errors: ['bad_request', 'not_found'],
  }),
  deleteSighting: defineRoute({
    ...ENDPOINTS.deleteSighting,
    summary: 'Delete one sighting and its crop',
    tags: ['Sightings'],
    request: { params: sightingParams },
    responses: ok(sightingDeleteResponse, 'Deleted.'),
    errors: ['bad_request', 'not_found'],
  }),
  purgeSightings: defineRoute({
    ...ENDPOINTS.purgeSightings,
    summary: 'Delete the sightings seen before a time, with their crops',
    tags: ['Sightings'],
    request: { query: sightingsPurgeQuery },
    responses: ok(sightingsPurgeResponse, 'Deleted.'),
    errors: [],
  }),
} satisfies Partial<Record<EndpointName, ApiRoute>>;
