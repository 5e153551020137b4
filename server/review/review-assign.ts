/**
 * Assigning faces to a person (review-store.ts): their crops become that person's training images, each checked as
 * an upload is, in one action undoable until the next training. What would put two people under one name is
 * refused first.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { ReviewAssignResponse } from '../../shared/api/review.js';
import type { PhotoCheck } from '../../shared/recognition/photo-check.js';
import type { Database } from '../db/database.js';
import { ApiError } from '../http/errors.js';
import { readFileNoFollow } from '../storage/no-follow.js';
import type { ReviewGroups } from './review-groups.js';
import { insertAction, pictureOf, type ReviewTarget, targets } from './review-rows.js';
import type { ReviewStoreOptions } from './review-store.js';

/** A crop's path relative to the sightings folder (checked before any file is read). */
const CROP_PATH = /^\d{4}-\d{2}-\d{2}\/[A-Za-z0-9_-]{1,100}\.jpg$/;

/** The photo check of a crop's JPEG bytes (server/people/photo-checker.ts through the image decoder). */
export type CropCheck = (bytes: Uint8Array) => Promise<PhotoCheck>;

export class ReviewAssigner {
  constructor(
    private readonly opts: ReviewStoreOptions,
    private readonly groups: ReviewGroups,
  ) {}

  private get db(): Database {
    return this.opts.db;
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
      const c = (await this.groups.coherence([target.group_id], max)).get(target.group_id);
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
    const rows = await targets(this.db, req);
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
