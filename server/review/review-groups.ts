/**
 * Unknown faces grouped by likeness for review (review-store.ts): the groups are made again (grouping.ts) when new
 * faces came or the recognition limit changed, under a lock shared by replicas, and each reports whether its faces
 * agree with each other.
 */
import type { ReviewGroupsResponse } from '../../shared/api/review.js';
import type { Database } from '../db/database.js';
import { descriptorFrom, GROUPING_DESCRIPTOR_BYTES } from '../sightings/sighting-store.js';
import { type Coherence, type GroupingItem, groupCoherence, groupingOptions, regroupFaces } from './grouping.js';
import { iso, pictureOf, REVIEWABLE } from './review-rows.js';

/** The key of the advisory lock grouping holds, so replicas do not group the same new faces at once. */
const GROUPING_LOCK_KEY = 7_141_926;
/**
 * Most faces grouping looks at in one pass (newest first; older ones keep their groups): the clustering compares
 * every two faces, about a second for 5,000 of 128 values on one core (every face is grouped by a 128-d one).
 */
const GROUPING_WINDOW = 5_000;
/** Faces of a group compared for its coherence (the newest). */
const COHERENCE_FACES = 200;

/**
 * The descriptor a face is grouped by (GROUPING_DESCRIPTOR_MODEL's): the one kept for grouping when the face's own
 * is of another model (faceres-1024), else its own. A face kept with only another model's (before #36's change,
 * until SightingRecorder.backfillGrouping describes it, or when that net failed) is left ungrouped rather than
 * compared across models.
 */
export function groupingDescriptor(r: { descriptor: Uint8Array | null; group_descriptor: Uint8Array | null }): Float32Array | null {
  const bytes = r.group_descriptor ?? r.descriptor;
  const d = descriptorFrom(bytes ? new Uint8Array(bytes) : null);
  return d && d.length * 4 === GROUPING_DESCRIPTOR_BYTES ? d : null;
}

export class ReviewGroups {
  constructor(private readonly db: Database) {}

  /** The recognition limit the groups were last made under (here): another one makes them again. */
  private groupedUnder: number | null = null;

  /**
   * Groups the reviewable faces again (grouping.ts) when some have no group yet, or the recognition limit changed
   * since the last pass here (and once after a start: groups made before #36 are checked again), under a lock
   * shared by replicas. `max`: the grouping limit (FaceService.groupingMax). How many faces changed group.
   */
  async regroup(max: number): Promise<number> {
    const [{ n }] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sightings WHERE ${REVIEWABLE} AND group_id IS NULL`);
    if (n === 0 && this.groupedUnder === max) return 0;
    const changed = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [GROUPING_LOCK_KEY]);
      const rows = await tx.query<{
        id: string;
        seen_at: Date;
        source: string;
        client: string | null;
        camera: string | null;
        descriptor: Uint8Array | null;
        group_descriptor: Uint8Array | null;
        group_id: string | null;
      }>(
        `SELECT id, seen_at, source, client, camera, descriptor, group_descriptor, group_id FROM sightings WHERE ${REVIEWABLE}
         AND (group_id IS NULL OR descriptor IS NOT NULL) ORDER BY seen_at DESC, id DESC LIMIT $1`,
        [GROUPING_WINDOW],
      );
      const items: GroupingItem[] = rows.map((r) => ({
        id: r.id,
        seenAt: new Date(r.seen_at).getTime(),
        descriptor: groupingDescriptor(r),
        groupId: r.group_id,
        // The faces of one recognized picture are kept with one time, source, client and camera: two people.
        picture: pictureOf(r),
      }));
      const grouped = items.slice(0, GROUPING_WINDOW);
      // Pairs a reviewer told apart ("different people"): never one group. Pairs of a sighting deleted since (purged
      // or deleted by hand) go: there is nothing left to keep apart.
      await tx.query(
        `DELETE FROM review_apart p WHERE NOT EXISTS (SELECT 1 FROM sightings s WHERE s.id = p.a)
           OR NOT EXISTS (SELECT 1 FROM sightings s WHERE s.id = p.b)`,
      );
      const apart = await tx.query<{ a: string; b: string }>(
        'SELECT DISTINCT a, b FROM review_apart WHERE a = ANY($1::text[]) AND b = ANY($1::text[])',
        [grouped.map((i) => i.id)],
      );
      const placed = regroupFaces(grouped, { ...groupingOptions(max), apart: apart.map((p) => [p.a, p.b] as const) });
      if (placed.size === 0) return 0;
      const updated = await tx.query(
        `UPDATE sightings SET group_id = v.g FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS g) AS v
         WHERE sightings.id = v.id AND ${REVIEWABLE} RETURNING sightings.id`,
        [[...placed.keys()], [...placed.values()]],
      );
      return updated.length;
    });
    this.groupedUnder = max;
    return changed;
  }

  /** Groups of reviewable faces, largest first (then the most recently seen). */
  async groups(opts: { since?: Date; limit: number; max: number }): Promise<ReviewGroupsResponse> {
    await this.regroup(opts.max);
    const params: unknown[] = [opts.limit];
    const since = opts.since ? `AND seen_at >= $${params.push(opts.since)}` : '';
    const rows = await this.db.query<{
      id: string;
      count: number;
      first_seen: Date;
      last_seen: Date;
      sample_ids: string[];
      sources: string[];
      total: number;
    }>(
      `SELECT group_id AS id, count(*)::int AS count, min(seen_at) AS first_seen, max(seen_at) AS last_seen,
         (array_agg(id ORDER BY seen_at DESC, id DESC))[1:8] AS sample_ids,
         array_agg(DISTINCT source ORDER BY source) AS sources,
         (count(*) OVER ())::int AS total
       FROM sightings WHERE ${REVIEWABLE} AND group_id IS NOT NULL ${since}
       GROUP BY group_id ORDER BY count(*) DESC, max(seen_at) DESC, group_id LIMIT $1`,
      params,
    );
    const [{ any }] = await this.db.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM sightings WHERE ${REVIEWABLE} AND (group_descriptor IS NOT NULL OR octet_length(descriptor) = $1)) AS any`,
      [GROUPING_DESCRIPTOR_BYTES],
    );
    const coherence = await this.coherence(
      rows.map((r) => r.id),
      opts.max,
    );
    return {
      groups: rows.map((r) => {
        const c = coherence.get(r.id);
        return {
          id: r.id,
          count: r.count,
          first_seen: iso(r.first_seen),
          last_seen: iso(r.last_seen),
          sample_ids: r.sample_ids,
          sources: r.sources,
          coherent: c?.coherent ?? true,
          not_coherent_because: c?.reason ?? null,
          max_face_distance: c?.maxDistance ?? null,
        };
      }),
      total: rows[0]?.total ?? 0,
      grouped_by: any ? 'descriptor' : 'none',
      max_distance: opts.max,
    };
  }

  /** Whether each group's reviewable faces agree with each other (grouping.ts groupCoherence). */
  async coherence(groupIds: readonly string[], max: number): Promise<Map<string, Coherence>> {
    if (groupIds.length === 0) return new Map();
    const rows = await this.db.query<{ group_id: string; descriptor: Uint8Array; group_descriptor: Uint8Array | null }>(
      `SELECT group_id, descriptor, group_descriptor FROM sightings WHERE group_id = ANY($1::text[]) AND ${REVIEWABLE}
       AND descriptor IS NOT NULL ORDER BY seen_at DESC, id DESC`,
      [groupIds],
    );
    const byGroup = new Map<string, Float32Array[]>();
    for (const r of rows) {
      const d = groupingDescriptor(r);
      if (!d) continue;
      const list = byGroup.get(r.group_id) ?? [];
      // Every pair is compared: the newest COHERENCE_FACES of a large group are enough to see two people in it.
      if (list.length < COHERENCE_FACES) list.push(d);
      byGroup.set(r.group_id, list);
    }
    const options = groupingOptions(max);
    return new Map([...byGroup].map(([id, list]) => [id, groupCoherence(list, options)]));
  }
}
