/**
 * Sightings: faces the recognitions saw. A row per face in the database (`sightings`, migration 001), its JPEG crop a
 * file beside the images in `DATA_DIR/sightings/<yyyy-mm-dd>/<id>.jpg` (written atomically, shared by replicas).
 *
 * The crop is written before the row, and the row removed before the crop: a reader never finds a row whose crop
 * was never written, and a crash leaves at worst a file without a row, which the purge of its day removes.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Sighting, SightingSource } from '../../shared/api/sightings.js';
import { DESCRIPTOR_MODELS, GROUPING_DESCRIPTOR_MODEL } from '../../shared/embedding/descriptor-models.js';
import type { Database } from '../db/database.js';
import { ApiError } from '../http/errors.js';
import { nameMergedInSighting } from '../people/merged-labels.js';
import { REVIEWABLE } from '../review/review-rows.js';
import { writeFileAtomic } from '../storage/atomic.js';
import { readFileNoFollow } from '../storage/no-follow.js';
import { privateDir } from '../storage/private-modes.js';
import type { SharedFiles } from '../storage/shared-files.js';
import { localFilesAbove, wroteNew } from '../storage/store-hooks.js';

export interface SightingBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** What a recognition decided about one face, and where and when it was seen. */
export interface NewSighting {
  /** Default a new UUID. A given id that is already stored stores nothing (a re-sent browser result). */
  id?: string;
  seen_at: Date;
  source: SightingSource;
  client: string | null;
  camera: string | null;
  label: string | null;
  candidate: string | null;
  distance: number | null;
  confidence: number | null;
  certainty: string | null;
  reason: string | null;
  recognizer: string;
  model_version: string | null;
  box: SightingBox;
  /** The face's descriptor (the embedding recognizer's model), when the embedding worker runs. */
  descriptor?: Float32Array | null;
  /**
   * The 128-d descriptor unknown faces are grouped by (GROUPING_DESCRIPTOR_MODEL), kept only when `descriptor` is
   * of another model (faceres-1024): grouping is tuned on the 128-d one (server/review/review-groups.ts).
   */
  group_descriptor?: Float32Array | null;
}

export interface SightingFilter {
  label?: string;
  /** Only faces given no name. */
  unknown_only?: boolean;
  /** seen_at >= from. */
  from?: Date;
  /** seen_at < to. */
  to?: Date;
  source?: SightingSource;
  group_id?: string;
  /** Default false: dismissed sightings are left out. */
  include_dismissed?: boolean;
  /** Default 50. */
  limit?: number;
  /** A `next_cursor` of an earlier page. */
  cursor?: string;
}

export interface SightingPage {
  sightings: Sighting[];
  next_cursor: string | null;
  total_matched: number;
}

/** An unknown, undismissed, unassigned sighting with what grouping needs. */
export interface GroupableSighting {
  id: string;
  seen_at: Date;
  source: string;
  group_id: string | null;
  descriptor: Float32Array | null;
}

export interface Assignment {
  label: string;
  filename: string;
  action: string;
}

interface Row {
  id: string;
  seen_at: Date;
  source: string;
  client: string | null;
  camera: string | null;
  label: string | null;
  candidate: string | null;
  distance: number | null;
  confidence: number | null;
  certainty: string | null;
  reason: string | null;
  recognizer: string;
  model_version: string | null;
  box: SightingBox;
  crop: string;
  group_id: string | null;
  dismissed_at: Date | null;
  assigned_label: string | null;
}

const COLUMNS =
  'id, seen_at, source, client, camera, label, candidate, distance, confidence, certainty, reason, recognizer, model_version, box, crop, group_id, dismissed_at, assigned_label';

/** A crop's path relative to the sightings folder, as the store writes it (checked before any file is touched). */
const CROP_PATH = /^\d{4}-\d{2}-\d{2}\/[A-Za-z0-9_-]{1,100}\.jpg$/;
const ID = /^[A-Za-z0-9_-]{1,100}$/;

export interface SightingStoreOptions {
  db: Database;
  /** `DATA_DIR/sightings`. */
  dir: string;
  /** SIGHTINGS_RETENTION_DAYS. */
  retentionDays: number;
  /** SIGHTINGS_MAX. */
  max: number;
  /** #37: told of every crop written or removed (the embedded default of the folder above `dir` when not given). */
  shared?: SharedFiles;
}

/** A grouping descriptor's size as stored (GROUPING_DESCRIPTOR_MODEL's values as float32). */
export const GROUPING_DESCRIPTOR_BYTES = DESCRIPTOR_MODELS[GROUPING_DESCRIPTOR_MODEL].dim * 4;

/** Float32 little-endian bytes (the database's bytea), and back. */
export function descriptorBytes(d: Float32Array): Uint8Array {
  const out = new Uint8Array(d.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < d.length; i++) view.setFloat32(i * 4, d[i], true);
  return out;
}

export function descriptorFrom(bytes: Uint8Array | null): Float32Array | null {
  if (!bytes || bytes.byteLength % 4 !== 0 || bytes.byteLength === 0) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

function encodeCursor(row: { seen_at: Date; id: string }): string {
  return Buffer.from(JSON.stringify([row.seen_at.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { seenAt: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    const seenAt = new Date(String(at));
    if (typeof at === 'string' && typeof id === 'string' && !Number.isNaN(seenAt.getTime())) return { seenAt, id };
  } catch {
    // falls through to the error below
  }
  throw new ApiError('bad_request', 'query parameter "cursor": must be a next_cursor of an earlier answer');
}

function toSighting(r: Row): Sighting {
  return {
    id: r.id,
    seen_at: new Date(r.seen_at).toISOString(),
    source: r.source as SightingSource,
    client: r.client,
    camera: r.camera,
    label: r.label,
    candidate: r.candidate,
    distance: r.distance,
    confidence: r.confidence,
    certainty: r.certainty,
    reason: r.reason,
    recognizer: r.recognizer,
    model_version: r.model_version,
    box: r.box,
    group_id: r.group_id,
    dismissed: r.dismissed_at !== null,
    assigned_label: r.assigned_label,
    crop_url: `/api/sightings/${r.id}/crop`,
  };
}

export class SightingStore {
  readonly dir: string;
  readonly shared: SharedFiles;

  constructor(private readonly opts: SightingStoreOptions) {
    this.dir = opts.dir;
    this.shared = opts.shared ?? localFilesAbove(opts.dir);
  }

  get db(): Database {
    return this.opts.db;
  }

  /** Keeps one sighting and its crop (JPEG bytes); the sighting, or null when its id was already stored. */
  async add(s: NewSighting & { crop: Uint8Array }): Promise<Sighting | null> {
    const id = s.id ?? randomUUID();
    if (!ID.test(id)) throw new Error(`not a sighting id: ${id}`);
    if ((await this.db.query('SELECT 1 FROM sightings WHERE id = $1', [id])).length > 0) return null;
    const day = s.seen_at.toISOString().slice(0, 10);
    const rel = `${day}/${id}.jpg`;
    await privateDir(path.join(this.dir, day));
    await writeFileAtomic(path.join(this.dir, rel), s.crop);
    // A crop that cannot be shared is not kept, and neither is its sighting.
    await wroteNew(this.shared, path.join(this.dir, rel));
    let rows: Row[];
    try {
      // #36 2: a name or nearest person merged away (a device or model from before the merge) is stored as the one who stays.
      const stored = await nameMergedInSighting(
        this.db,
        id,
        { label: s.label, candidate: s.candidate },
        async (q, { label, candidate }) => {
          const inserted = await q.query<Row>(
            `INSERT INTO sightings (id, seen_at, source, client, camera, label, candidate, distance, confidence, certainty, reason,
           recognizer, model_version, box, crop, crop_bytes, descriptor, group_descriptor)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${COLUMNS}`,
            [
              id,
              s.seen_at,
              s.source,
              s.client,
              s.camera,
              label,
              candidate,
              s.distance,
              s.confidence,
              s.certainty,
              s.reason,
              s.recognizer,
              s.model_version,
              JSON.stringify(s.box),
              rel,
              s.crop.byteLength,
              s.descriptor ? descriptorBytes(s.descriptor) : null,
              s.group_descriptor ? descriptorBytes(s.group_descriptor) : null,
            ],
          );
          return inserted[0] ?? null;
        },
      );
      rows = stored ? [stored] : [];
    } catch (err) {
      await fs.rm(path.join(this.dir, rel), { force: true });
      await this.shared.removed(path.join(this.dir, rel)).catch(() => {});
      throw err;
    }
    // Stored meanwhile by another request with the same id: its row names this same file, which stays.
    return rows[0] ? toSighting(rows[0]) : null;
  }

  /** One page, newest first, with the count of all that match. */
  async list(filter: SightingFilter = {}): Promise<SightingPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    if (filter.label !== undefined) where.push(`label = ${param(filter.label)}`);
    if (filter.unknown_only) where.push('label IS NULL');
    if (filter.from) where.push(`seen_at >= ${param(filter.from)}`);
    if (filter.to) where.push(`seen_at < ${param(filter.to)}`);
    if (filter.source) where.push(`source = ${param(filter.source)}`);
    if (filter.group_id !== undefined) where.push(`group_id = ${param(filter.group_id)}`);
    if (!filter.include_dismissed) where.push('dismissed_at IS NULL');
    const matching = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [{ n }] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sightings ${matching}`, params);
    if (filter.cursor) {
      const { seenAt, id } = decodeCursor(filter.cursor);
      where.push(`(seen_at, id) < (${param(seenAt)}::timestamptz, ${param(id)}::text)`);
    }
    const limit = Math.max(1, Math.min(filter.limit ?? 50, 1000));
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM sightings ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY seen_at DESC, id DESC LIMIT ${param(limit + 1)}`,
      params,
    );
    const page = rows.slice(0, limit);
    return {
      sightings: page.map(toSighting),
      next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null,
      total_matched: n,
    };
  }

  async get(id: string): Promise<Sighting | null> {
    if (!ID.test(id)) return null;
    const [row] = await this.db.query<Row>(`SELECT ${COLUMNS} FROM sightings WHERE id = $1`, [id]);
    return row ? toSighting(row) : null;
  }

  /** The crop's JPEG bytes; null when there is no such sighting or its file is gone. */
  async crop(id: string): Promise<Uint8Array | null> {
    if (!ID.test(id)) return null;
    const [row] = await this.db.query<{ crop: string }>('SELECT crop FROM sightings WHERE id = $1', [id]);
    if (!row || !CROP_PATH.test(row.crop)) return null;
    try {
      return new Uint8Array(await readFileNoFollow(path.join(this.dir, row.crop)));
    } catch (err) {
      // Gone, or not a plain file (a link planted in DATA_DIR is never followed).
      if (['ENOENT', 'ELOOP', 'ENOTFILE'].includes((err as NodeJS.ErrnoException).code ?? '')) return null;
      throw err;
    }
  }

  /**
   * #36 1: unknown faces still to describe for grouping, newest first: reviewable, without a grouping descriptor, and
   * with a descriptor of another model (another size; kept before grouping descriptors existed).
   */
  async withoutGroupDescriptor(limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM sightings WHERE ${REVIEWABLE} AND group_descriptor IS NULL AND descriptor IS NOT NULL
         AND octet_length(descriptor) <> $1
       ORDER BY seen_at DESC, id DESC LIMIT $2`,
      [GROUPING_DESCRIPTOR_BYTES, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Keeps a face's grouping descriptor, out of its group so that the next grouping pass places it by that descriptor;
   * false when it had one already (another replica was first) or is gone.
   */
  async setGroupDescriptor(id: string, d: Float32Array): Promise<boolean> {
    const rows = await this.db.query(
      'UPDATE sightings SET group_descriptor = $2, group_id = NULL WHERE id = $1 AND group_descriptor IS NULL RETURNING id',
      [id, descriptorBytes(d)],
    );
    return rows.length > 0;
  }

  /** Removes one sighting and its crop; whether it was there. */
  async remove(id: string): Promise<boolean> {
    if (!ID.test(id)) return false;
    return (await this.deleteWhere('id = $1', [id])) > 0;
  }

  /** Removes the sightings seen before `before`, with their crops; how many. */
  async removeBefore(before: Date): Promise<number> {
    return this.deleteWhere('seen_at < $1', [before]);
  }

  /**
   * The retention rules: sightings older than SIGHTINGS_RETENTION_DAYS, then the oldest beyond SIGHTINGS_MAX, with
   * their crops; and day folders past the retention that hold only files without rows (a crash between the two).
   */
  async purge(now: Date = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.opts.retentionDays * 86_400_000);
    let deleted = await this.removeBefore(cutoff);
    deleted += await this.deleteWhere('id IN (SELECT id FROM sightings ORDER BY seen_at DESC, id DESC OFFSET $1)', [this.opts.max]);
    await this.removeOldDays(cutoff);
    return deleted;
  }

  /** Removes every sighting named `label` (given, nearly given or assigned), with their crops; how many. */
  async forgetPerson(label: string): Promise<number> {
    return this.deleteWhere('label = $1 OR candidate = $1 OR assigned_label = $1', [label]);
  }

  async setGroup(ids: readonly string[], groupId: string | null): Promise<number> {
    return this.update('group_id = $2', ids, [groupId]);
  }

  async setDismissed(ids: readonly string[], at: Date | null): Promise<number> {
    return this.update('dismissed_at = $2', ids, [at]);
  }

  async setAssigned(ids: readonly string[], assigned: Assignment | null): Promise<number> {
    return this.update('assigned_label = $2, assigned_filename = $3, assigned_action = $4', ids, [
      assigned?.label ?? null,
      assigned?.filename ?? null,
      assigned?.action ?? null,
    ]);
  }

  /** Sets one sighting's descriptor (computed after it was stored). */
  async setDescriptor(id: string, descriptor: Float32Array | null): Promise<void> {
    await this.db.query('UPDATE sightings SET descriptor = $2 WHERE id = $1', [id, descriptor ? descriptorBytes(descriptor) : null]);
  }

  /** Unknown faces not dismissed nor assigned, oldest first, with their descriptors (for grouping by likeness). */
  async unknownWithDescriptors(since?: Date): Promise<GroupableSighting[]> {
    const rows = await this.db.query<{ id: string; seen_at: Date; source: string; group_id: string | null; descriptor: Uint8Array | null }>(
      `SELECT id, seen_at, source, group_id, descriptor FROM sightings
       WHERE label IS NULL AND dismissed_at IS NULL AND assigned_label IS NULL ${since ? 'AND seen_at >= $1' : ''}
       ORDER BY seen_at, id`,
      since ? [since] : [],
    );
    return rows.map((r) => ({
      id: r.id,
      seen_at: r.seen_at,
      source: r.source,
      group_id: r.group_id,
      descriptor: descriptorFrom(r.descriptor ? new Uint8Array(r.descriptor) : null),
    }));
  }

  /** Sightings stored (all). */
  async count(): Promise<number> {
    const [{ n }] = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sightings');
    return n;
  }

  private async update(set: string, ids: readonly string[], values: unknown[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await this.db.query(`UPDATE sightings SET ${set} WHERE id = ANY($1::text[]) RETURNING id`, [[...ids], ...values]);
    return rows.length;
  }

  /** Deletes the rows first, then their crops. */
  private async deleteWhere(condition: string, params: unknown[]): Promise<number> {
    const rows = await this.db.query<{ crop: string }>(`DELETE FROM sightings WHERE ${condition} RETURNING crop`, params);
    await Promise.all(
      rows.map(async (r) => {
        if (!CROP_PATH.test(r.crop)) return;
        await fs.rm(path.join(this.dir, r.crop), { force: true });
        await this.shared.removed(path.join(this.dir, r.crop));
      }),
    );
    return rows.length;
  }

  /** Day folders wholly before the cutoff: their rows are gone, so any file left is an orphan. */
  private async removeOldDays(cutoff: Date): Promise<void> {
    let days: string[];
    try {
      days = await fs.readdir(this.dir);
    } catch {
      return;
    }
    const cutoffDay = cutoff.toISOString().slice(0, 10);
    for (const day of days) {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day >= cutoffDay) continue;
      const [{ n }] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sightings WHERE crop LIKE $1`, [`${day}/%`]);
      if (n === 0) {
        await fs.rm(path.join(this.dir, day), { recursive: true, force: true });
        await this.shared.removed(path.join(this.dir, day));
      }
    }
  }
}
