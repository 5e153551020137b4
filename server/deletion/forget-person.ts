/**
 * Deleting a person removes them everywhere (DELETE /api/images/{label}), and says what it removed:
 *
 * - images: their training images (DATA_DIR/images/<label>);
 * - templates: their samples in the saved trained models (LBPH histograms, embedding descriptors): training.lbph,
 *   model.pickle and the embeddings rewritten without them atomically and loaded into this server's workers before
 *   the answer, so they are forgotten at once, without a training (other replicas load the files with their model
 *   watch); the old training.yml is removed before the answer and written again after it;
 * - sightings (with their face crops), corrections, and the review actions naming them;
 * - results naming them (their ids remembered, so a device re-sending one does not bring it back);
 * - their display name and image metadata (people, image_meta);
 * - and a `deleted_people` row: devices drop what they still queue of the person at their next sync
 *   (GET /api/deletions), results captured before the deletion are not stored, and the IdP shows its user
 *   without a face.
 *
 * It holds the training lock (every replica's) while it removes the images and rewrites the models, so no
 * training runs on half of it; a training in progress answers 409 and nothing is removed. A deletion that
 * failed part way is finished by sending it again (each step removes what is left).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabelDeleteResponse } from '../../shared/api/index.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { type HeldLock, LockBusyError } from '../storage/file-lock.js';
import type { ModelStore } from '../storage/model-store.js';
import { labelsMergedInto } from '../people/merged-labels.js';

export type Removed = LabelDeleteResponse['removed'];

/** A store that forgets a person (area stores on the context: sightings, corrections, review, people). */
interface Forgets {
  forgetPerson(label: string): Promise<number>;
}

/** The context's store under `name` when it forgets people (the stores of other parts are looked up by shape). */
function store(ctx: AppContext, name: string): Forgets | null {
  const found = (ctx as unknown as Record<string, unknown>)[name] as Partial<Forgets> | undefined;
  return found && typeof found.forgetPerson === 'function' ? (found as Forgets) : null;
}

/** A sighting's crop, relative to DATA_DIR/sightings (`<yyyy-mm-dd>/<id>.jpg`): never a path elsewhere. */
const CROP_PATH = /^\d{4}-\d{2}-\d{2}\/[A-Za-z0-9_-]+\.jpg$/;

async function forgetSightings(ctx: AppContext, label: string): Promise<number> {
  const sightings = store(ctx, 'sightings');
  if (sightings) return sightings.forgetPerson(label);
  const rows = await ctx.db.query<{ crop: string }>(
    'DELETE FROM sightings WHERE label = $1 OR candidate = $1 OR assigned_label = $1 RETURNING crop',
    [label],
  );
  const dir = path.join(ctx.settings.dataDir, 'sightings');
  await Promise.all(
    rows
      .filter((r) => CROP_PATH.test(r.crop))
      .map(async (r) => {
        await fs.rm(path.join(dir, r.crop), { force: true });
        await ctx.shared.removed(path.join(dir, r.crop));
      }),
  );
  return rows.length;
}

async function forgetCorrections(ctx: AppContext, label: string): Promise<number> {
  const corrections = store(ctx, 'corrections');
  if (corrections) return corrections.forgetPerson(label);
  const rows = await ctx.db.query<{ id: string }>('DELETE FROM corrections WHERE label = $1 RETURNING id', [label]);
  return new Set(rows.map((r) => r.id)).size;
}

async function forgetPeopleRows(ctx: AppContext, label: string): Promise<number> {
  const review = store(ctx, 'review');
  const reviewed = review
    ? await review.forgetPerson(label)
    : (await ctx.db.query('DELETE FROM review_actions WHERE label = $1 RETURNING id', [label])).length;
  // #36 2: their renames, covers, merges and moves (names and file names of theirs), with the undo they allowed.
  const acted = (await ctx.db.query('DELETE FROM person_actions WHERE label = $1 OR other_label = $1 RETURNING id', [label])).length;
  const people = store(ctx, 'people');
  if (people) return reviewed + acted + (await people.forgetPerson(label));
  const meta = await ctx.db.query('DELETE FROM image_meta WHERE label = $1 RETURNING filename', [label]);
  const person = await ctx.db.query('DELETE FROM people WHERE label = $1 RETURNING label', [label]);
  return reviewed + acted + meta.length + person.length;
}

/** Takes the training lock of every replica; 409 while a training runs (nothing removed then). */
async function trainingLock(models: ModelStore): Promise<HeldLock> {
  try {
    return await models.trainingLock.acquire();
  } catch (err) {
    if (err instanceof LockBusyError) {
      throw new ApiError('training_in_progress', 'a training run is in progress; delete the person when it ends (nothing was removed)');
    }
    throw err;
  }
}

/** This server's workers run the rewritten models before the answer (the model watch would within its interval). */
async function reloadModels(ctx: AppContext, label: string): Promise<void> {
  if (!(await ctx.faces.reloadUntil(label, false)))
    ctx.log.warn(`the models rewritten without ${label} are not loaded yet; the model watch loads them`);
}

export async function forgetPerson(ctx: AppContext, models: ModelStore, label: string): Promise<Removed> {
  // #36 2: the labels merged into them are their old names: deleted with them (their merges go with the actions).
  const formerly = await labelsMergedInto(ctx.db, label);
  const lock = await trainingLock(models);
  let images: number;
  let templates: { lbph: number; embedding: number };
  try {
    images = await ctx.images.remove(label);
    templates = await models.forgetLabel(label);
  } finally {
    await lock.release().catch((err) => ctx.log.warn(`releasing the training lock failed: ${String(err)}`));
  }
  if (templates.lbph + templates.embedding > 0) await reloadModels(ctx, label);
  const sightings = await forgetSightings(ctx, label);
  const corrections = await forgetCorrections(ctx, label);
  const results = await ctx.results.forgetPerson(label);
  const other = await forgetPeopleRows(ctx, label);
  const removed: Removed = { images, templates: templates.lbph + templates.embedding, sightings, corrections, results };
  const any = Object.values(removed).some((n) => n > 0) || other > 0;
  if (!any) throw new ApiError('label_not_found', `there is nothing stored of "${label}"`);
  await ctx.db.query('INSERT INTO deleted_people (label, deleted_at) SELECT unnest($1::text[]), now()', [[label, ...formerly]]);
  ctx.log.info(
    `deleted ${label} everywhere: ${images} images, ${templates.lbph} LBPH and ${templates.embedding} embedding templates, ${sightings} sightings, ${corrections} corrections, ${results} results`,
  );
  return removed;
}

/** Deletions of people, newest first (devices drop what they still queue of them). */
/** When the person of `label` was last deleted, or null (BearerAuth refuses their tokens issued before it). */
export async function lastDeletion(ctx: Pick<AppContext, 'db'>, label: string): Promise<Date | null> {
  const rows = await ctx.db.query<{ deleted_at: Date }>(
    'SELECT deleted_at FROM deleted_people WHERE label = $1 ORDER BY deleted_at DESC LIMIT 1',
    [label],
  );
  return rows[0] ? new Date(rows[0].deleted_at) : null;
}

export async function recentDeletions(
  ctx: AppContext,
  since: Date | null,
  limit: number,
): Promise<{ label: string; deleted_at: string }[]> {
  const rows = await ctx.db.query<{ label: string; deleted_at: Date }>(
    'SELECT label, deleted_at FROM deleted_people WHERE ($1::timestamptz IS NULL OR deleted_at >= $1) ORDER BY deleted_at DESC, seq DESC LIMIT $2',
    [since, limit],
  );
  return rows.map((r) => ({ label: r.label, deleted_at: new Date(r.deleted_at).toISOString() }));
}
