/**
 * The review actions besides assign (review-store.ts): dismissing faces, telling faces apart, the list of recent
 * actions, and undo of any of them (an assign only until the next training).
 */
import { randomUUID } from 'node:crypto';
import {
  REVIEW_MAX_APART_PAIRS,
  type ReviewAction,
  type ReviewActionKind,
  type ReviewApartResponse,
  type ReviewDismissResponse,
  type ReviewUndoResponse,
} from '../../shared/api/review.js';
import type { Database } from '../db/database.js';
import { ApiError } from '../http/errors.js';
import { insertAction, iso, REVIEWABLE, type ReviewTarget, targets } from './review-rows.js';
import type { ReviewStoreOptions } from './review-store.js';

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

export class ReviewActionLog {
  constructor(private readonly opts: ReviewStoreOptions) {}

  private get db(): Database {
    return this.opts.db;
  }

  /** Hides the target's faces from review (kept until purged); one action, undoable. */
  async dismiss(req: ReviewTarget, actor: string | null): Promise<ReviewDismissResponse> {
    const rows = await targets(this.db, req);
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
    const rows = await targets(this.db, { sighting_ids: ids });
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
      const others = (await targets(this.db, { group_id: req.group_id })).filter((r) => !named.has(r.id));
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
