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
 *
 * This facade keeps the public API; behind it: the groups (review-groups.ts), assigning (review-assign.ts), the other
 * actions and undo (review-actions.ts), and the rows they share (review-rows.ts).
 */
import path from 'node:path';
import type {
  ReviewAction,
  ReviewApartResponse,
  ReviewAssignResponse,
  ReviewDismissResponse,
  ReviewGroupsResponse,
  ReviewPeopleResponse,
  ReviewUndoResponse,
} from '../../shared/api/review.js';
import type { Database } from '../db/database.js';
import type { FaceService } from '../engines/faces/face-service.js';
import type { Logger } from '../logger.js';
import type { ImageStore } from '../storage/image-store.js';
import { ReviewActionLog } from './review-actions.js';
import { type CropCheck, ReviewAssigner } from './review-assign.js';
import { ReviewGroups } from './review-groups.js';
import { iso, type ReviewTarget } from './review-rows.js';

export type { CropCheck } from './review-assign.js';
export type { ReviewTarget } from './review-rows.js';

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

export class ReviewStore {
  private readonly grouping: ReviewGroups;
  private readonly assigner: ReviewAssigner;
  private readonly actionLog: ReviewActionLog;

  constructor(private readonly opts: ReviewStoreOptions) {
    this.grouping = new ReviewGroups(opts.db);
    this.assigner = new ReviewAssigner(opts, this.grouping);
    this.actionLog = new ReviewActionLog(opts);
  }

  private get db(): Database {
    return this.opts.db;
  }

  /**
   * Groups the reviewable faces again (grouping.ts) when some have no group yet, or the recognition limit changed
   * since the last pass here (and once after a start: groups made before #36 are checked again), under a lock
   * shared by replicas. `max`: the embedding rule's limit for the descriptor in use. How many faces changed group.
   */
  regroup(max: number): Promise<number> {
    return this.grouping.regroup(max);
  }

  /** Groups of reviewable faces, largest first (then the most recently seen). */
  groups(opts: { since?: Date; limit: number; max: number }): Promise<ReviewGroupsResponse> {
    return this.grouping.groups(opts);
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

  /**
   * Stores the crops of the target's faces as training images of a person; one action, undoable until training.
   * With `check`, each crop is checked before it is stored; a check that fails (not the verdict: the checker) leaves
   * that image unchecked, as images stored before checks existed are, rather than failing the assign.
   */
  assign(
    req: ReviewTarget & { label?: string; display_name?: string },
    actor: string | null,
    check?: CropCheck,
    /** The embedding rule's limit: with it, a group that may be two people, or two faces of one picture, are refused. */
    max?: number,
  ): Promise<ReviewAssignResponse> {
    return this.assigner.assign(req, actor, check, max);
  }

  /** Hides the target's faces from review (kept until purged); one action, undoable. */
  dismiss(req: ReviewTarget, actor: string | null): Promise<ReviewDismissResponse> {
    return this.actionLog.dismiss(req, actor);
  }

  /**
   * "These are different people": with `group_id`, each named face is not the same person as the group's other
   * faces; without, every two named faces are two people. The pairs are kept (`review_apart`) with the action, and
   * the named faces are grouped again (regroup keeps them apart). Only unknown faces in review are marked.
   */
  apart(req: { sighting_ids: string[]; group_id?: string }, actor: string | null): Promise<ReviewApartResponse> {
    return this.actionLog.apart(req, actor);
  }

  undo(actionId: string): Promise<ReviewUndoResponse> {
    return this.actionLog.undo(actionId);
  }

  /** The most recent actions, newest first, with whether each can be undone now. */
  actions(limit: number): Promise<ReviewAction[]> {
    return this.actionLog.actions(limit);
  }

  /** Removes the actions naming a person (deleting them everywhere); how many. */
  forgetPerson(label: string): Promise<number> {
    return this.actionLog.forgetPerson(label);
  }
}
