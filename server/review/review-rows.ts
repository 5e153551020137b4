/**
 * The rows review works on (review-store.ts): the sightings an action names, the faces that count for review, the
 * picture a face was in, and the `review_actions` row each action writes.
 */
import type { ReviewActionKind } from '../../shared/api/review.js';
import type { Queryable } from '../db/database.js';
import { ApiError } from '../http/errors.js';

/** A face that counts for review: named nobody, not dismissed, not assigned. */
export const REVIEWABLE = 'label IS NULL AND dismissed_at IS NULL AND assigned_label IS NULL';

export type ReviewTarget = { sighting_ids: string[]; group_id?: undefined } | { group_id: string; sighting_ids?: undefined };

/** The picture a sighting's face was in: the faces of one recognition share their time, source, client and camera. */
export function pictureOf(r: { seen_at: Date; source: string; client: string | null; camera: string | null }): string {
  return JSON.stringify([new Date(r.seen_at).getTime(), r.source, r.client, r.camera]);
}

export interface TargetRow {
  id: string;
  crop: string;
  assigned_label: string | null;
}

export const iso = (d: Date | string) => new Date(d).toISOString();

/** The sightings an action names: every one of `sighting_ids` (404 naming those unknown), or a group's reviewable faces. */
export async function targets(db: Queryable, target: ReviewTarget): Promise<TargetRow[]> {
  if (target.sighting_ids) {
    const ids = [...new Set(target.sighting_ids)];
    const rows = await db.query<TargetRow>('SELECT id, crop, assigned_label FROM sightings WHERE id = ANY($1::text[])', [ids]);
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length)
      throw new ApiError('not_found', `no sighting ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
    return rows;
  }
  const rows = await db.query<TargetRow>(
    `SELECT id, crop, assigned_label FROM sightings WHERE group_id = $1 AND ${REVIEWABLE} ORDER BY seen_at, id`,
    [target.group_id],
  );
  if (rows.length === 0) throw new ApiError('not_found', `no group ${target.group_id} with faces to review`);
  return rows;
}

export async function insertAction(
  tx: Queryable,
  a: { id: string; kind: ReviewActionKind; actor: string | null; label: string | null; sighting_ids: string[]; detail: object },
): Promise<void> {
  await tx.query(
    'INSERT INTO review_actions (id, kind, created_at, actor, label, sighting_ids, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [a.id, a.kind, new Date(), a.actor, a.label, JSON.stringify(a.sighting_ids), JSON.stringify(a.detail)],
  );
}
