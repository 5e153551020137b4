/**
 * #36 2: search by face. One face (a sighting's kept descriptor, a stored photo, an uploaded image: its largest face,
 * described by the embedding worker as sightings are) against the descriptors the sightings keep (`sightings.descriptor`,
 * the embedding worker's model), nearest first, within the embedding rule's limit: the distance at which the
 * recognizer would name them as one person.
 *
 * Rate-limited as verifications of anyone are (VERIFY_RATE_PER_VERIFIER per VERIFY_RATE_WINDOW_S, counted per caller
 * in the database, shared by replicas): like a verification, an answer is biometric information about anyone seen.
 */
import type { FaceSearchResponse } from '../../shared/api/people.js';
import type { SightingSource } from '../../shared/api/sightings.js';
import type { Database } from '../db/database.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { descriptorFrom } from '../sightings/sighting-store.js';
import { RateLimitedError } from '../verify/rate-limit.js';

/** The newest sightings compared at most (as grouping's window). */
export const FACE_SEARCH_WINDOW = 20_000;

export function euclidean(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  return Math.sqrt(sum);
}

interface Candidate {
  id: string;
  seen_at: Date;
  source: SightingSource;
  camera: string | null;
  label: string | null;
  assigned_label: string | null;
  descriptor: Uint8Array;
}

/** The sightings nearest to `query`, within `max`, at most `limit`, leaving out `exclude` (the query's own sighting). */
export async function searchSightings(
  db: Database,
  query: Float32Array,
  opts: { max: number; limit: number; exclude?: string },
): Promise<FaceSearchResponse> {
  const rows = await db.query<Candidate>(
    `SELECT id, seen_at, source, camera, label, assigned_label, descriptor FROM sightings
     WHERE descriptor IS NOT NULL ORDER BY seen_at DESC, id DESC LIMIT $1`,
    [FACE_SEARCH_WINDOW],
  );
  const near: { row: Candidate; distance: number }[] = [];
  let searched = 0;
  for (const row of rows) {
    if (row.id === opts.exclude) continue;
    const d = descriptorFrom(new Uint8Array(row.descriptor));
    // Another descriptor model's (another length): not comparable.
    if (!d || d.length !== query.length) continue;
    searched++;
    const distance = euclidean(query, d);
    if (distance <= opts.max) near.push({ row, distance });
  }
  near.sort((a, b) => a.distance - b.distance || b.row.seen_at.getTime() - a.row.seen_at.getTime());
  return {
    results: near.slice(0, opts.limit).map(({ row, distance }) => ({
      sighting_id: row.id,
      distance: Math.round(distance * 10_000) / 10_000,
      seen_at: new Date(row.seen_at).toISOString(),
      source: row.source,
      camera: row.camera,
      label: row.assigned_label ?? (row.label === 'unknown' ? null : row.label),
      crop_url: `/api/sightings/${encodeURIComponent(row.id)}/crop`,
    })),
    max_distance: opts.max,
    searched,
  };
}

const COUNT = `
WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now())::float8 / $2::int) * $2::int) AS start)
INSERT INTO verify_attempts (bucket, window_start, hits) SELECT $1::text, w.start, 1 FROM w
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = verify_attempts.hits + 1
RETURNING hits, greatest(1, ceil(extract(epoch FROM window_start)::float8 + $2::int - extract(epoch FROM clock_timestamp())::float8))::int AS retry_after`;

/** Counts one search by `caller` (in the verification counters' table); throws past the limit or when it cannot count. */
export async function admitSearch(
  db: Database,
  log: Logger,
  caller: string,
  limits: { windowS: number; perCaller: number },
): Promise<void> {
  let rows: { hits: number; retry_after: number }[];
  try {
    rows = await db.query(COUNT, [`face-search:${caller}`, limits.windowS]);
  } catch (err) {
    log.warn(`face search counters could not be updated: ${err instanceof Error ? err.message : String(err)}`);
    throw new ApiError(
      'rate_limit_unavailable',
      'the search counters could not be read (the database); search is denied until they can be',
    );
  }
  const [row] = rows;
  if (row && row.hits > limits.perCaller)
    throw new RateLimitedError(
      `too many face searches by this caller: ${limits.perCaller} within ${limits.windowS} s (VERIFY_RATE_PER_VERIFIER); try again in ${row.retry_after} s`,
      row.retry_after,
    );
}
