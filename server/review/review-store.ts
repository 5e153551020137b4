/**
 * The reviewer's actions on what the service saw (the Faces page): unknown faces grouped by likeness, faces assigned
 * to a person (their crops become that person's training images), faces dismissed, and undo. Each action is a
 * `review_actions` row; what it changed on the sightings (`assigned_*`, `dismissed_at`) is written in the same
 * transaction, so two reviewers (or two replicas) never assign one face twice and an undo runs once.
 *
 * An assign can be undone until the next training: after one, its images are in the models, and removing the files
 * would not take them out (409 `already_trained`; deleting the images and training again does). A dismiss and a
 * correction can always be undone.
 *
 * Crops are read from `DATA_DIR/sightings/<crop>` (the row's relative path, as the sighting store writes it).
 *
 * An assigned crop gets the photo check an upload gets (POST /api/images): run before it is stored, kept with the
 * image (`image_meta.photo_check`, so the person's summary counts it) and answered per face; a bad verdict is
 * advice, never a refusal, as for an upload.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { normalizeLabel } from '../../shared/api/labels.js';
import {
  REVIEW_MAX_APART_PAIRS,
  type ReviewAction,
  type ReviewActionKind,
  type ReviewApartResponse,
  type ReviewAssignResponse,
  type ReviewDismissResponse,
  type ReviewGroupsResponse,
  type ReviewPeopleResponse,
  type ReviewUndoResponse,
} from '../../shared/api/review.js';
import type { Database, Queryable } from '../db/database.js';
import type { FaceService } from '../engines/faces/face-service.js';
import { ApiError } from '../http/errors.js';
import type { PhotoCheck } from '../../shared/recognition/photo-check.js';
import type { Logger } from '../logger.js';
import { descriptorFrom } from '../sightings/sighting-store.js';
import type { ImageStore } from '../storage/image-store.js';
import { readFileNoFollow } from '../storage/no-follow.js';
import { type Coherence, type GroupingItem, groupCoherence, groupingOptions, regroupFaces } from './grouping.js';

/** A crop's path relative to the sightings folder (checked before any file is read). */
const CROP_PATH = /^\d{4}-\d{2}-\d{2}\/[A-Za-z0-9_-]{1,100}\.jpg$/;
/** The key of the advisory lock grouping holds, so replicas do not group the same new faces at once. */
const GROUPING_LOCK_KEY = 7_141_926;
/**
 * Most faces grouping looks at in one pass (newest first; older ones keep their groups): the clustering compares
 * every two faces, about a second for 5,000 of 128 values on one core (about 1,800 of faceres' 1,024 in the same time).
 */
const GROUPING_WINDOW = 5_000;
/** Faces of a group compared for its coherence (the newest). */
const COHERENCE_FACES = 200;
/** A face that counts for review: named nobody, not dismissed, not assigned. */
const REVIEWABLE = 'label IS NULL AND dismissed_at IS NULL AND assigned_label IS NULL';

export type ReviewTarget = { sighting_ids: string[]; group_id?: undefined } | { group_id: string; sighting_ids?: undefined };

/** The picture a sighting's face was in: the faces of one recognition share their time, source, client and camera. */
function pictureOf(r: { seen_at: Date; source: string; client: string | null; camera: string | null }): string {
  return JSON.stringify([new Date(r.seen_at).getTime(), r.source, r.client, r.camera]);
}

/** The photo check of a crop's JPEG bytes (server/people/photo-checker.ts through the image decoder). */
export type CropCheck = (bytes: Uint8Array) => Promise<PhotoCheck>;

export interface ReviewStoreOptions {
  db: Database;
  /** `DATA_DIR/sightings`. */
  sightingsDir: string;
  images: ImageStore;
  log: Logger;
  /** When a training last saved models, here or on another replica (ISO 8601), or null. */
  lastTrainedAt(): string | null;
  /** Whether a training runs now. */
  trainingRunning(): boolean;
  /** Undoes a correction (its rows in `corrections`); by default they are deleted here. */
  undoCorrection?: (actionId: string) => Promise<unknown>;
}

/** When a training last saved models: this process's last run, or models another replica trained (loaded here). */
export function lastTrainedAt(faces: Pick<FaceService, 'recognizerStatus' | 'trainStatus'>): string | null {
  const status = faces.recognizerStatus();
  const times = [status.lbph.trained_at, status.embedding.trained_at, faces.trainStatus().last?.trained_at].filter(
    (t): t is string => typeof t === 'string',
  );
  return times.length ? times.reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b)) : null;
}

/** The review store of a service: its database, images and sightings folder, its training state and corrections. */
export function createReviewStore(deps: {
  db: Database;
  dataDir: string;
  images: ImageStore;
  faces: Pick<FaceService, 'recognizerStatus' | 'trainStatus'>;
  corrections?: { undoAction(actionId: string): Promise<unknown> };
  log: Logger;
}): ReviewStore {
  return new ReviewStore({
    db: deps.db,
    sightingsDir: path.join(deps.dataDir, 'sightings'),
    images: deps.images,
    log: deps.log,
    lastTrainedAt: () => lastTrainedAt(deps.faces),
    trainingRunning: () => deps.faces.trainStatus().state === 'running',
    undoCorrection: deps.corrections
      ? (id) => (deps.corrections as { undoAction(id: string): Promise<unknown> }).undoAction(id)
      : undefined,
  });
}

interface ActionRow {
  id: string;
  kind: string;
  created_at: Date;
  actor: string | null;
  label: string | null;
  sighting_ids: string[];
  detail: { files?: Record<string, string>; new_person?: boolean; display_name?: string };
  undone_at: Date | null;
}

interface TargetRow {
  id: string;
  crop: string;
  assigned_label: string | null;
}

const iso = (d: Date | string) => new Date(d).toISOString();

export class ReviewStore {
  constructor(private readonly opts: ReviewStoreOptions) {}

  private get db(): Database {
    return this.opts.db;
  }

  /** The recognition limit the groups were last made under (here): another one makes them again. */
  private groupedUnder: number | null = null;

  /**
   * Groups the reviewable faces again (grouping.ts) when some have no group yet, or the recognition limit changed
   * since the last pass here (and once after a start: groups made before #36 are checked again), under a lock
   * shared by replicas. `max`: the embedding rule's limit for the descriptor in use. How many faces changed group.
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
        group_id: string | null;
      }>(
        `SELECT id, seen_at, source, client, camera, descriptor, group_id FROM sightings WHERE ${REVIEWABLE}
         AND (group_id IS NULL OR descriptor IS NOT NULL) ORDER BY seen_at DESC, id DESC LIMIT $1`,
        [GROUPING_WINDOW],
      );
      const items: GroupingItem[] = rows.map((r) => ({
        id: r.id,
        seenAt: new Date(r.seen_at).getTime(),
        descriptor: descriptorFrom(r.descriptor ? new Uint8Array(r.descriptor) : null),
        groupId: r.group_id,
        // The faces of one recognized picture are kept with one time, source, client and camera: two people.
        picture: pictureOf(r),
      }));
      // Every two faces are compared: longer descriptors, fewer faces (the same work as GROUPING_WINDOW 128-d ones).
      const length = items.find((i) => i.descriptor)?.descriptor?.length ?? 128;
      const window = Math.min(items.length, Math.floor(GROUPING_WINDOW * Math.sqrt(128 / Math.max(128, length))));
      const grouped = items.slice(0, window);
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
      `SELECT EXISTS (SELECT 1 FROM sightings WHERE ${REVIEWABLE} AND descriptor IS NOT NULL) AS any`,
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
  private async coherence(groupIds: readonly string[], max: number): Promise<Map<string, Coherence>> {
    if (groupIds.length === 0) return new Map();
    const rows = await this.db.query<{ group_id: string; descriptor: Uint8Array }>(
      `SELECT group_id, descriptor FROM sightings WHERE group_id = ANY($1::text[]) AND ${REVIEWABLE} AND descriptor IS NOT NULL
       ORDER BY seen_at DESC, id DESC`,
      [groupIds],
    );
    const byGroup = new Map<string, Float32Array[]>();
    for (const r of rows) {
      const d = descriptorFrom(new Uint8Array(r.descriptor));
      if (!d) continue;
      const list = byGroup.get(r.group_id) ?? [];
      // Every pair is compared: the newest COHERENCE_FACES of a large group are enough to see two people in it.
      if (list.length < COHERENCE_FACES) list.push(d);
      byGroup.set(r.group_id, list);
    }
    const options = groupingOptions(max);
    return new Map([...byGroup].map(([id, list]) => [id, groupCoherence(list, options)]));
  }

  /**
   * Refuses what would put two people under one name: a group whose faces do not agree, assigned whole, two faces
   * of one picture, a face a reviewer marked "not this person" (a correction) for this person, and two faces a
   * reviewer marked as different people.
   */
  private async checkOnePerson(target: ReviewTarget, ids: readonly string[], max: number, label: string): Promise<void> {
    const [corrected] = await this.db.query<{ sighting_id: string }>(
      'SELECT sighting_id FROM corrections WHERE label = $1 AND sighting_id = ANY($2::text[]) ORDER BY sighting_id LIMIT 1',
      [label, ids],
    );
    if (corrected) {
      throw new ApiError(
        'not_this_person',
        `sighting ${corrected.sighting_id} was marked as not ${label}: leave it out, or undo that correction first`,
      );
    }
    const [apart] = await this.db.query<{ a: string; b: string }>(
      'SELECT a, b FROM review_apart WHERE a = ANY($1::text[]) AND b = ANY($1::text[]) ORDER BY a, b LIMIT 1',
      [ids],
    );
    if (apart) {
      throw new ApiError(
        'different_people',
        `sightings ${apart.a} and ${apart.b} were marked as different people: assign them apart, or undo that mark first`,
      );
    }
    if (target.group_id !== undefined) {
      const c = (await this.coherence([target.group_id], max)).get(target.group_id);
      if (c && !c.coherent) {
        throw new ApiError(
          'group_not_coherent',
          `group ${target.group_id} may be more than one person (${c.reason}): assign the faces of one person by sighting_ids`,
        );
      }
    }
    const rows = await this.db.query<{ id: string; seen_at: Date; source: string; client: string | null; camera: string | null }>(
      'SELECT id, seen_at, source, client, camera FROM sightings WHERE id = ANY($1::text[])',
      [ids],
    );
    const seen = new Map<string, string>();
    for (const r of rows) {
      const picture = pictureOf(r);
      const other = seen.get(picture);
      if (other) throw new ApiError('same_picture', `sightings ${other} and ${r.id} are two faces of one picture: two people, not one`);
      seen.set(picture, r.id);
    }
  }

  /** Known sightings by person in a time range, most recently seen first. */
  async people(opts: { from?: Date; to?: Date; q?: string; limit: number }): Promise<ReviewPeopleResponse> {
    const where = ['s.label IS NOT NULL'];
    const params: unknown[] = [opts.limit];
    if (opts.from) where.push(`s.seen_at >= $${params.push(opts.from)}`);
    if (opts.to) where.push(`s.seen_at < $${params.push(opts.to)}`);
    if (opts.q) {
      const q = `$${params.push(opts.q.toLowerCase())}`;
      where.push(`(strpos(lower(s.label), ${q}) > 0 OR strpos(lower(coalesce(p.display_name, '')), ${q}) > 0)`);
    }
    const rows = await this.db.query<{
      label: string;
      display_name: string;
      count: number;
      first_seen: Date;
      last_seen: Date;
      total: number;
    }>(
      `SELECT s.label, coalesce(p.display_name, s.label) AS display_name, count(*)::int AS count,
         min(s.seen_at) AS first_seen, max(s.seen_at) AS last_seen, (count(*) OVER ())::int AS total
       FROM sightings s LEFT JOIN people p ON p.label = s.label
       WHERE ${where.join(' AND ')}
       GROUP BY s.label, p.display_name ORDER BY max(s.seen_at) DESC, s.label LIMIT $1`,
      params,
    );
    return {
      people: rows.map((r) => ({
        label: r.label,
        display_name: r.display_name,
        count: r.count,
        first_seen: iso(r.first_seen),
        last_seen: iso(r.last_seen),
      })),
      total: rows[0]?.total ?? 0,
    };
  }

  /** The sightings an action names: every one of `sighting_ids` (404 naming those unknown), or a group's reviewable faces. */
  private async targets(target: ReviewTarget): Promise<TargetRow[]> {
    if (target.sighting_ids) {
      const ids = [...new Set(target.sighting_ids)];
      const rows = await this.db.query<TargetRow>('SELECT id, crop, assigned_label FROM sightings WHERE id = ANY($1::text[])', [ids]);
      const found = new Set(rows.map((r) => r.id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length)
        throw new ApiError('not_found', `no sighting ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);
      return rows;
    }
    const rows = await this.db.query<TargetRow>(
      `SELECT id, crop, assigned_label FROM sightings WHERE group_id = $1 AND ${REVIEWABLE} ORDER BY seen_at, id`,
      [target.group_id],
    );
    if (rows.length === 0) throw new ApiError('not_found', `no group ${target.group_id} with faces to review`);
    return rows;
  }

  /** A crop's bytes, or null when its file is gone (purged) or its path is not one the sighting store writes. */
  private async crop(rel: string): Promise<Uint8Array | null> {
    if (!CROP_PATH.test(rel)) return null;
    try {
      const bytes = await readFileNoFollow(path.join(this.opts.sightingsDir, rel));
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  /** The person an assign goes to: an existing label, or a new person from a typed name. */
  private async person(label: string | undefined, displayName: string | undefined) {
    const check = normalizeLabel(label ?? displayName);
    if (!check.ok) throw new ApiError('invalid_label', `${label !== undefined ? 'label' : 'display_name'}: ${check.reason}`);
    const [row] = await this.db.query<{ display_name: string }>('SELECT display_name FROM people WHERE label = $1', [check.label]);
    const exists = row !== undefined || (await this.opts.images.list(check.label)) !== null;
    if (!exists && label !== undefined && displayName === undefined) {
      throw new ApiError('label_not_found', `nobody is enrolled as "${check.label}": give display_name to add a new person`);
    }
    return { label: check.label, displayName: row?.display_name ?? displayName ?? check.label, isNew: !exists };
  }

  /**
   * Stores the crops of the target's faces as training images of a person; one action, undoable until training.
   * With `check`, each crop is checked before it is stored; a check that fails (not the verdict: the checker) leaves
   * that image unchecked, as images stored before checks existed are, rather than failing the assign.
   */
  async assign(
    req: ReviewTarget & { label?: string; display_name?: string },
    actor: string | null,
    check?: CropCheck,
    /** The embedding rule's limit: with it, a group that may be two people, or two faces of one picture, are refused. */
    max?: number,
  ): Promise<ReviewAssignResponse> {
    const person = await this.person(req.label, req.display_name);
    const rows = await this.targets(req);
    if (max !== undefined)
      await this.checkOnePerson(
        req,
        rows.map((r) => r.id),
        max,
        person.label,
      );
    const taken = rows.filter((r) => r.assigned_label !== null);
    if (taken.length) {
      throw new ApiError('already_assigned', `sighting ${taken[0].id} is already assigned to ${taken[0].assigned_label} (undo that first)`);
    }
    const files: Record<string, string> = {};
    const skipped: ReviewAssignResponse['skipped'] = [];
    const added: string[] = [];
    const checks: NonNullable<ReviewAssignResponse['checks']> = [];
    // Every crop read and checked before anything is stored (a few at a time: a group may hold hundreds).
    const read = await mapLimited(rows, CHECK_CONCURRENCY, async (row) => {
      const bytes = await this.crop(row.crop);
      return { row, bytes, verdict: bytes && check ? await this.checkCrop(check, row.id, bytes) : null };
    });
    try {
      for (const { row, bytes, verdict } of read) {
        if (!bytes) {
          skipped.push({ sighting_id: row.id, reason: 'crop_missing' });
          continue;
        }
        const filename = await this.opts.images.save(person.label, bytes, 'jpeg');
        files[row.id] = filename;
        added.push(filename);
        checks.push({ sighting_id: row.id, filename, check: verdict });
      }
      if (added.length === 0) throw new ApiError('not_found', "the faces' crops are gone (purged): nothing to assign");
      const actionId = `a-${randomUUID()}`;
      await this.db.transaction(async (tx) => {
        const ids = Object.keys(files);
        await insertAction(tx, {
          id: actionId,
          kind: 'assign',
          actor,
          label: person.label,
          sighting_ids: ids,
          detail: { files, new_person: person.isNew, display_name: person.displayName },
        });
        const updated = await tx.query(
          `UPDATE sightings SET assigned_label = $3, assigned_filename = v.f, assigned_action = $4
           FROM (SELECT unnest($1::text[]) AS id, unnest($2::text[]) AS f) AS v
           WHERE sightings.id = v.id AND sightings.assigned_label IS NULL RETURNING sightings.id`,
          [ids, ids.map((id) => files[id]), person.label, actionId],
        );
        // Another reviewer assigned one of them meanwhile (or it was deleted): nothing of this one is kept.
        if (updated.length !== ids.length) throw new ApiError('already_assigned', 'some of these faces were assigned or deleted meanwhile');
        await tx.query('INSERT INTO people (label, display_name) VALUES ($1, $2) ON CONFLICT (label) DO NOTHING', [
          person.label,
          person.displayName,
        ]);
        await tx.query(
          `INSERT INTO image_meta (label, filename, original_name, source, sighting_id, photo_check)
           SELECT $1, v.f, 'sighting-' || v.id || '.jpg', 'sighting', v.id, v.c::jsonb
           FROM (SELECT unnest($2::text[]) AS id, unnest($3::text[]) AS f, unnest($4::text[]) AS c) AS v
           ON CONFLICT (label, filename) DO NOTHING`,
          [person.label, ids, ids.map((id) => files[id]), checks.map((c) => (c.check ? JSON.stringify(c.check) : null))],
        );
      });
      return {
        action_id: actionId,
        label: person.label,
        display_name: person.displayName,
        new_person: person.isNew,
        added,
        skipped,
        retrain_needed: true,
        checks,
      };
    } catch (err) {
      // Nothing of a failed assign stays: the images it stored go again.
      for (const filename of added) await this.opts.images.removeOne(person.label, filename).catch(() => null);
      throw err;
    }
  }

  /** A crop's check, or null (logged) when the checker itself failed: the image is then stored unchecked. */
  private async checkCrop(check: CropCheck, sightingId: string, bytes: Uint8Array): Promise<PhotoCheck | null> {
    try {
      return await check(bytes);
    } catch (err) {
      this.opts.log.warn(`review: the crop of sighting ${sightingId} was not checked: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }
  }

  /** Hides the target's faces from review (kept until purged); one action, undoable. */
  async dismiss(req: ReviewTarget, actor: string | null): Promise<ReviewDismissResponse> {
    const rows = await this.targets(req);
    const actionId = `a-${randomUUID()}`;
    const at = new Date();
    const dismissed = await this.db.transaction(async (tx) => {
      const ids = (
        await tx.query<{ id: string }>(
          'UPDATE sightings SET dismissed_at = $2 WHERE id = ANY($1::text[]) AND dismissed_at IS NULL RETURNING id',
          [rows.map((r) => r.id), at],
        )
      ).map((r) => r.id);
      await insertAction(tx, { id: actionId, kind: 'dismiss', actor, label: null, sighting_ids: ids, detail: {} });
      return ids.length;
    });
    return { action_id: actionId, dismissed };
  }

  /**
   * "These are different people": with `group_id`, each named face is not the same person as the group's other
   * faces; without, every two named faces are two people. The pairs are kept (`review_apart`) with the action, and
   * the named faces are grouped again (regroup keeps them apart). Only unknown faces in review are marked.
   */
  async apart(req: { sighting_ids: string[]; group_id?: string }, actor: string | null): Promise<ReviewApartResponse> {
    const ids = [...new Set(req.sighting_ids)];
    const rows = await this.targets({ sighting_ids: ids });
    const out = await this.db.query<{ id: string }>(
      `SELECT id FROM sightings WHERE id = ANY($1::text[]) AND NOT (${REVIEWABLE}) ORDER BY id`,
      [ids],
    );
    if (out.length) {
      throw new ApiError(
        'not_in_review',
        `sighting ${out[0].id} is not an unknown face in review (named, assigned or dismissed): only those are told apart`,
      );
    }
    const pairs: [string, string][] = [];
    const pair = (x: string, y: string) => pairs.push(x < y ? [x, y] : [y, x]);
    if (req.group_id !== undefined) {
      const named = new Set(rows.map((r) => r.id));
      const others = (await this.targets({ group_id: req.group_id })).filter((r) => !named.has(r.id));
      if (others.length === 0) throw new ApiError('not_found', `group ${req.group_id} has no other faces to tell these apart from`);
      if (ids.length * others.length > REVIEW_MAX_APART_PAIRS) {
        throw new ApiError('bad_request', `that is more than ${REVIEW_MAX_APART_PAIRS} pairs: name fewer faces`);
      }
      for (const id of ids) for (const o of others) pair(id, o.id);
    } else {
      if ((ids.length * (ids.length - 1)) / 2 > REVIEW_MAX_APART_PAIRS) {
        throw new ApiError('bad_request', `that is more than ${REVIEW_MAX_APART_PAIRS} pairs: name fewer faces`);
      }
      for (let i = 0; i < ids.length; i++) for (let j = i + 1; j < ids.length; j++) pair(ids[i], ids[j]);
    }
    const actionId = `a-${randomUUID()}`;
    await this.db.transaction(async (tx) => {
      await insertAction(tx, {
        id: actionId,
        kind: 'apart',
        actor,
        label: null,
        sighting_ids: ids,
        detail: { group_id: req.group_id ?? null },
      });
      await tx.query(
        'INSERT INTO review_apart (action_id, a, b) SELECT $1, unnest($2::text[]), unnest($3::text[]) ON CONFLICT DO NOTHING',
        [actionId, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
      );
      // Grouped again at the next look (regroup), apart from the faces they were told apart from.
      await tx.query(`UPDATE sightings SET group_id = NULL WHERE id = ANY($1::text[]) AND ${REVIEWABLE}`, [ids]);
    });
    return { action_id: actionId, pairs: pairs.length, sighting_ids: ids };
  }

  /** Why an action cannot be undone now, or null when it can. */
  private notUndoable(row: ActionRow): ReviewAction['not_undoable_because'] {
    if (row.undone_at) return 'undone';
    if (row.kind !== 'assign') return null;
    if (this.opts.trainingRunning()) return 'training';
    const trained = this.opts.lastTrainedAt();
    return trained && Date.parse(trained) >= new Date(row.created_at).getTime() ? 'trained' : null;
  }

  async undo(actionId: string): Promise<ReviewUndoResponse> {
    const [row] = await this.db.query<ActionRow>('SELECT * FROM review_actions WHERE id = $1', [actionId]);
    if (!row) throw new ApiError('not_found', `no review action ${actionId}`);
    const why = this.notUndoable(row);
    if (why === 'undone') throw new ApiError('already_undone', `action ${actionId} was undone at ${iso(row.undone_at as Date)}`);
    if (why === 'training')
      throw new ApiError('training_in_progress', 'a training runs now: undo the assign after it (or delete the images)');
    if (why === 'trained') {
      throw new ApiError(
        'already_trained',
        `a training ran since this assign: its images are in the models; delete them (DELETE /api/images/${row.label}/{filename}) and train again instead`,
      );
    }
    if (row.kind === 'correct') await this.opts.undoCorrection?.(actionId);
    const undoneAt = new Date();
    const sightings = await this.db.transaction(async (tx) => {
      const marked = await tx.query('UPDATE review_actions SET undone_at = $2 WHERE id = $1 AND undone_at IS NULL RETURNING id', [
        actionId,
        undoneAt,
      ]);
      if (marked.length === 0 && row.kind !== 'correct') throw new ApiError('already_undone', `action ${actionId} was undone meanwhile`);
      if (row.kind === 'assign') {
        const files = Object.values(row.detail.files ?? {});
        await tx.query(`DELETE FROM image_meta WHERE label = $1 AND filename = ANY($2::text[]) AND source = 'sighting'`, [
          row.label,
          files,
        ]);
        return (
          await tx.query(
            'UPDATE sightings SET assigned_label = NULL, assigned_filename = NULL, assigned_action = NULL WHERE assigned_action = $1 RETURNING id',
            [actionId],
          )
        ).length;
      }
      if (row.kind === 'dismiss') {
        return (
          await tx.query('UPDATE sightings SET dismissed_at = NULL WHERE id = ANY($1::text[]) AND dismissed_at IS NOT NULL RETURNING id', [
            row.sighting_ids,
          ])
        ).length;
      }
      if (row.kind === 'apart') {
        await tx.query('DELETE FROM review_apart WHERE action_id = $1', [actionId]);
        // Grouped again, now free to join the faces they were told apart from.
        return (
          await tx.query(`UPDATE sightings SET group_id = NULL WHERE id = ANY($1::text[]) AND ${REVIEWABLE} RETURNING id`, [
            row.sighting_ids,
          ])
        ).length;
      }
      if (row.kind === 'correct' && !this.opts.undoCorrection) await tx.query('DELETE FROM corrections WHERE action_id = $1', [actionId]);
      return 0;
    });
    let removed = 0;
    if (row.kind === 'assign' && row.label) {
      for (const filename of Object.values(row.detail.files ?? {})) {
        if ((await this.opts.images.removeOne(row.label, filename)) !== null) removed++;
      }
      // A person this assign created, with nothing left: gone again.
      if (row.detail.new_person && (await this.opts.images.list(row.label)) === null) {
        await this.db.query('DELETE FROM people WHERE label = $1 AND NOT EXISTS (SELECT 1 FROM image_meta WHERE label = $1)', [row.label]);
      }
    }
    return {
      action_id: actionId,
      kind: row.kind as ReviewActionKind,
      undone_at: undoneAt.toISOString(),
      images_removed: removed,
      sightings,
    };
  }

  /** The most recent actions, newest first, with whether each can be undone now. */
  async actions(limit: number): Promise<ReviewAction[]> {
    const rows = await this.db.query<ActionRow>('SELECT * FROM review_actions ORDER BY created_at DESC, id DESC LIMIT $1', [limit]);
    return rows.map((r) => {
      const why = this.notUndoable(r);
      return {
        id: r.id,
        kind: r.kind as ReviewActionKind,
        created_at: iso(r.created_at),
        actor: r.actor,
        label: r.label,
        sighting_ids: r.sighting_ids,
        added: Object.values(r.detail.files ?? {}),
        undone_at: r.undone_at ? iso(r.undone_at) : null,
        undoable: why === null,
        not_undoable_because: why,
      };
    });
  }

  /** Removes the actions naming a person (deleting them everywhere); how many. */
  async forgetPerson(label: string): Promise<number> {
    return (await this.db.query('DELETE FROM review_actions WHERE label = $1 RETURNING id', [label])).length;
  }
}

/** Crops checked at once by one assign (the vision workers run them; more would only queue). */
const CHECK_CONCURRENCY = 4;

/** `work` over `items`, at most `limit` at a time, the results in the items' order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

async function insertAction(
  tx: Queryable,
  a: { id: string; kind: ReviewActionKind; actor: string | null; label: string | null; sighting_ids: string[]; detail: object },
): Promise<void> {
  await tx.query(
    'INSERT INTO review_actions (id, kind, created_at, actor, label, sighting_ids, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [a.id, a.kind, new Date(), a.actor, a.label, JSON.stringify(a.sighting_ids), JSON.stringify(a.detail)],
  );
}
