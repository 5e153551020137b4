/**
 * #36 2: a person's page and what an administrator does on it: rename (the display name; the label stays the id of
 * the folder, the models and the URL), cover photo, merge into another person, move photos to another person, and
 * undo of each. Every action is a `person_actions` row (migration 005) holding what its undo needs; the audit log
 * gets its row, with the actor, from the audit middleware (server/audit/audit-middleware.ts).
 *
 * Photos move as image-store.ts copyInto does it: linked under the other label first, then the database changed in
 * one transaction, then the originals removed. A crash before the commit leaves the photo twice (the copy is under
 * the other label without metadata), never lost; a failed commit removes the copies. Actions run one at a time,
 * across replicas too (a lock file beside the label folders), so two merges of one person never interleave.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { PersonActionKind, PersonActionResponse, PersonPageResponse, PersonUndoResponse } from '../../shared/api/people.js';
import type { SightingSource } from '../../shared/api/sightings.js';
import type { Database, Queryable } from '../db/database.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { labelSkeleton } from './confusables.js';
import type { ActionModels, MergedModels } from './merge-models.js';
import type { ImageStore } from '../storage/image-store.js';
import { lockResults, type RenamedInResults, renamePersonInResults, restorePersonInResults } from '../storage/result-store.js';

/** The lock file every replica's person actions share (a dot name: never a label folder). */
const ACTIONS_LOCK_FILE = '.person-actions.lock';

export interface PersonActionsOptions {
  db: Database;
  images: ImageStore;
  log: Logger;
  /** The labels the trained models hold now. */
  trainedLabels(): Set<string>;
  trainingRunning(): boolean;
  /** Corrections moved to another label (a merge, its undo): installed again. */
  correctionsMoved?(): Promise<void>;
  /** #36: the trained models, which a merge and its undo relabel (merge-models.ts); absent: left to a training. */
  models?: ActionModels;
}

interface PersonRow {
  label: string;
  display_name: string;
  created_at: Date;
  kiosk: boolean;
  cover: string | null;
}

/** What a merge or a move changed, for its undo. */
interface MoveDetail {
  /** Old name -> new name under `other_label`. */
  files: Record<string, string>;
  /** Sightings recognised as the label, now named the other (merge). */
  recognised: string[];
  /** Unknown sightings whose nearest person (`candidate`) was the label, now the other (merge; absent before #36). */
  candidates?: string[];
  /** Sightings assigned as one of the photos: id -> the photo's old name. */
  assigned: Record<string, string>;
  corrections: string[];
  /** Stored recognition results whose faces named the label, now the other (merge; absent in actions before #36). */
  results?: RenamedInResults;
  /** The merged person's row, removed (merge). */
  person?: { display_name: string; kiosk: boolean; cover: string | null; created_at: string } | null;
  /** Whether the move created the other person. */
  new_person?: boolean;
  /** What the merge changed in the trained models (merge-models.ts), for the undo; absent: nothing. */
  models?: MergedModels;
}

interface ActionRow {
  id: string;
  kind: PersonActionKind;
  created_at: Date;
  actor: string | null;
  label: string;
  other_label: string | null;
  detail: MoveDetail & { before?: string | null; after?: string | null };
  undone_at: Date | null;
}

const iso = (d: Date | string) => new Date(d).toISOString();

function checkedLabel(raw: unknown, what = 'label'): string {
  const check = normalizeLabel(raw);
  if (!check.ok) throw new ApiError('invalid_label', `${what}: ${check.reason}`);
  return check.label;
}

export class PersonActions {
  constructor(private readonly opts: PersonActionsOptions) {}

  private get db(): Database {
    return this.opts.db;
  }

  /** One action at a time, on every replica sharing the state (#37: the lock of the images' SharedFiles seam). */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.opts.images.shared.lock(path.join(this.opts.images.root, ACTIONS_LOCK_FILE)).run(work, 60_000);
  }

  private async row(label: string): Promise<PersonRow | null> {
    const [row] = await this.db.query<PersonRow>('SELECT label, display_name, created_at, kiosk, cover FROM people WHERE label = $1', [
      label,
    ]);
    return row ?? null;
  }

  /** A person who exists: a row, or photos (enrolled before names were kept); else 404 `label_not_found`. */
  private async known(label: string): Promise<PersonRow> {
    const row = await this.row(label);
    if (row) return row;
    if ((await this.opts.images.list(label)) !== null)
      return { label, display_name: label, created_at: new Date(), kiosk: true, cover: null };
    throw new ApiError('label_not_found', `nobody is enrolled as "${label}"`);
  }

  private retrainNeeded(...labels: string[]): boolean {
    const trained = this.opts.trainedLabels();
    return labels.some((l) => trained.has(l));
  }

  async page(rawLabel: string, sightingsLimit: number): Promise<PersonPageResponse> {
    const label = checkedLabel(rawLabel);
    const person = await this.known(label);
    const images = (await this.opts.images.list(label)) ?? [];
    const meta = await this.db.query<{ filename: string; source: string; original_name: string | null; verdict: string | null }>(
      `SELECT filename, source, original_name, photo_check->>'verdict' AS verdict FROM image_meta WHERE label = $1`,
      [label],
    );
    const byName = new Map(meta.map((m) => [m.filename, m]));
    const cover = person.cover && images.some((i) => i.filename === person.cover) ? person.cover : (images[0]?.filename ?? null);
    const sightings = await this.db.query<{
      id: string;
      seen_at: Date;
      source: SightingSource;
      camera: string | null;
      label: string | null;
      distance: number | null;
      total: number;
    }>(
      `SELECT id, seen_at, source, camera, label, distance, (count(*) OVER ())::int AS total FROM sightings
       WHERE label = $1 OR assigned_label = $1 ORDER BY seen_at DESC, id DESC LIMIT $2`,
      [label, sightingsLimit],
    );
    const url = (filename: string) => `/api/images/${encodeURIComponent(label)}/${encodeURIComponent(filename)}`;
    return {
      label,
      display_name: person.display_name,
      created_at: (await this.row(label)) ? iso(person.created_at) : null,
      kiosk: person.kiosk,
      cover,
      cover_chosen: cover !== null && cover === person.cover,
      photos: images.map((i) => {
        const m = byName.get(i.filename);
        return {
          filename: i.filename,
          url: url(i.filename),
          created: i.created,
          source: m?.source ?? null,
          original_name: m?.original_name ?? null,
          verdict: m?.verdict ?? null,
        };
      }),
      sightings: sightings.map((s) => ({
        id: s.id,
        seen_at: iso(s.seen_at),
        source: s.source,
        camera: s.camera,
        how: s.label === label ? ('recognised' as const) : ('assigned' as const),
        distance: s.distance,
        crop_url: `/api/sightings/${encodeURIComponent(s.id)}/crop`,
      })),
      sightings_total: sightings[0]?.total ?? 0,
      trained: this.opts.trainedLabels().has(label),
    };
  }

  /** Every person's label: people rows and photo folders. */
  private async allLabels(): Promise<Set<string>> {
    const rows = await this.db.query<{ label: string }>('SELECT label FROM people');
    return new Set([...rows.map((r) => r.label), ...(await this.opts.images.labels()).map((l) => l.label)]);
  }

  /**
   * A new display name: one that could be a label (the label rules), and neither another person's label nor a look-alike
   * of it (UTS #39 skeletons), so two people never show under one name.
   */
  private async checkName(label: string, displayName: string): Promise<void> {
    const asLabel = checkedLabel(displayName, 'display_name');
    const skeleton = labelSkeleton(asLabel);
    const rows = await this.db.query<{ label: string; display_name: string }>('SELECT label, display_name FROM people WHERE label <> $1', [
      label,
    ]);
    const names = new Map(rows.map((r) => [r.label, r.display_name]));
    for (const other of await this.allLabels()) {
      if (other === label) continue;
      const theirs = [other, names.get(other)].filter((n): n is string => n !== undefined);
      for (const name of theirs) {
        const check = normalizeLabel(name);
        if (check.ok && labelSkeleton(check.label) === skeleton) {
          throw new ApiError(
            'label_confusable',
            `"${displayName}" is, or looks like, the name of "${other}" (Unicode confusables, UTS #39): choose a name that cannot be mistaken for theirs, or merge the two`,
            { existing_label: other },
          );
        }
      }
    }
  }

  async rename(rawLabel: string, displayName: string, actor: string | null): Promise<PersonActionResponse> {
    const label = checkedLabel(rawLabel);
    const name = displayName.normalize('NFC').trim();
    return this.exclusive(async () => {
      const person = await this.known(label);
      await this.checkName(label, name);
      const id = `p-${randomUUID()}`;
      await this.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO people (label, display_name) VALUES ($1, $2) ON CONFLICT (label) DO UPDATE SET display_name = EXCLUDED.display_name`,
          [label, name],
        );
        await insertAction(tx, { id, kind: 'rename', actor, label, other: null, detail: { before: person.display_name, after: name } });
      });
      this.opts.log.info(`person ${label}: renamed to ${JSON.stringify(name)} (action ${id})`);
      return { action_id: id, kind: 'rename', label, display_name: name, retrain_needed: false };
    });
  }

  async setCover(rawLabel: string, filename: string | null, actor: string | null): Promise<PersonActionResponse> {
    const label = checkedLabel(rawLabel);
    return this.exclusive(async () => {
      const person = await this.known(label);
      if (filename !== null && !(await this.opts.images.find(label, filename)))
        throw new ApiError('not_found', `"${label}" has no photo "${filename}"`);
      const id = `p-${randomUUID()}`;
      await this.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO people (label, display_name, cover) VALUES ($1, $2, $3) ON CONFLICT (label) DO UPDATE SET cover = EXCLUDED.cover`,
          [label, person.display_name, filename],
        );
        await insertAction(tx, { id, kind: 'cover', actor, label, other: null, detail: { before: person.cover, after: filename } });
      });
      return { action_id: id, kind: 'cover', label, display_name: person.display_name, retrain_needed: false };
    });
  }

  /** Merges `rawLabel` into `rawInto`: every photo, the sightings, the corrections; the merged person's row goes. */
  async merge(rawLabel: string, rawInto: string, actor: string | null): Promise<PersonActionResponse> {
    const label = checkedLabel(rawLabel);
    const into = checkedLabel(rawInto, 'into');
    if (label === into) throw new ApiError('bad_request', 'a person cannot be merged into themselves');
    return this.exclusive(async () => {
      this.refuseWhileTraining();
      await this.known(label);
      const survivor = await this.known(into);
      const filenames = ((await this.opts.images.list(label)) ?? []).map((i) => i.filename);
      const row = await this.row(label);
      // No training on any replica while the photos and the models change (its models would miss the merge).
      const held = await this.opts.models?.lock();
      let relabelled: MergedModels | null = null;
      let detail: MoveDetail & { id: string };
      try {
        detail = await this.moveFiles(
          label,
          into,
          filenames,
          async (tx, files) => {
            const recognised = (
              await tx.query<{ id: string }>('UPDATE sightings SET label = $2 WHERE label = $1 RETURNING id', [label, into])
            ).map((r) => r.id);
            const candidates = (
              await tx.query<{ id: string }>('UPDATE sightings SET candidate = $2 WHERE candidate = $1 RETURNING id', [label, into])
            ).map((r) => r.id);
            const corrections = (
              await tx.query<{ id: string }>('UPDATE corrections SET label = $2 WHERE label = $1 RETURNING id', [label, into])
            ).map((r) => r.id);
            const results = await renamePersonInResults(tx, label, into);
            await tx.query('DELETE FROM people WHERE label = $1', [label]);
            await tx.query(`INSERT INTO people (label, display_name) VALUES ($1, $2) ON CONFLICT (label) DO NOTHING`, [
              into,
              survivor.display_name,
            ]);
            return {
              recognised,
              candidates,
              corrections,
              results,
              person: row ? { display_name: row.display_name, kiosk: row.kiosk, cover: row.cover, created_at: iso(row.created_at) } : null,
              files,
            };
          },
          { kind: 'merge', actor },
        );
        relabelled = await this.relabelModels(detail.id, label, into);
      } finally {
        await held?.release().catch((err) => this.opts.log.warn(`releasing the training lock failed: ${String(err)}`));
      }
      if (relabelled) await this.opts.models?.loaded(label, false);
      if (detail.corrections.length) await this.opts.correctionsMoved?.();
      this.opts.log.info(
        `person ${label} merged into ${into}: ${Object.keys(detail.files).length} photos, ${detail.recognised.length} sightings, ${detail.corrections.length} corrections, ${Object.keys(detail.results ?? {}).length} results (action ${detail.id}); ${relabelled ? 'the trained models name them so' : 'train again'}`,
      );
      return {
        action_id: detail.id,
        kind: 'merge',
        label: into,
        display_name: survivor.display_name,
        moved: {
          photos: Object.keys(detail.files).length,
          sightings: detail.recognised.length + Object.keys(detail.assigned).length,
          corrections: detail.corrections.length,
          results: Object.keys(detail.results ?? {}).length,
        },
        files: detail.files,
        // Models that knew the merged person name the one who stays now (relabelled); else they still name the
        // merged label, or lack their photos, until the next training.
        retrain_needed: relabelled === null && (this.retrainNeeded(label, into) || filenames.length > 0),
      };
    });
  }

  /** Moves some photos of `rawLabel` to `rawTo` (a new person with `displayName`). */
  async move(
    rawLabel: string,
    filenames: readonly string[],
    rawTo: string,
    displayName: string | undefined,
    actor: string | null,
  ): Promise<PersonActionResponse> {
    const label = checkedLabel(rawLabel);
    const to = checkedLabel(rawTo, 'to');
    if (label === to) throw new ApiError('bad_request', "the photos are already this person's");
    const wanted = [...new Set(filenames)];
    return this.exclusive(async () => {
      this.refuseWhileTraining();
      await this.known(label);
      let target: PersonRow;
      let newPerson = false;
      try {
        target = await this.known(to);
      } catch (err) {
        if (displayName === undefined) throw err;
        checkedLabel(displayName, 'display_name');
        target = { label: to, display_name: displayName.normalize('NFC').trim(), created_at: new Date(), kiosk: true, cover: null };
        newPerson = true;
      }
      const missing: string[] = [];
      for (const f of wanted) if (!(await this.opts.images.find(label, f))) missing.push(f);
      if (missing.length)
        throw new ApiError(
          'not_found',
          `"${label}" has no photo ${missing
            .slice(0, 5)
            .map((m) => `"${m}"`)
            .join(', ')}`,
        );
      const detail = await this.moveFiles(
        label,
        to,
        wanted,
        async (tx, files) => {
          await tx.query('INSERT INTO people (label, display_name) VALUES ($1, $2) ON CONFLICT (label) DO NOTHING', [
            to,
            target.display_name,
          ]);
          // A cover that moved away is the first photo again.
          await tx.query('UPDATE people SET cover = NULL WHERE label = $1 AND cover = ANY($2::text[])', [label, wanted]);
          return { recognised: [], corrections: [], new_person: newPerson, files };
        },
        { kind: 'move', actor },
      );
      this.opts.log.info(`person ${label}: ${wanted.length} photos moved to ${to} (action ${detail.id}); train again`);
      return {
        action_id: detail.id,
        kind: 'move',
        label: to,
        display_name: target.display_name,
        moved: { photos: Object.keys(detail.files).length, sightings: Object.keys(detail.assigned).length, corrections: 0 },
        files: detail.files,
        retrain_needed: true,
      };
    });
  }

  /**
   * The trained models follow a merge (merge-models.ts), what changed noted in the action for its undo. A failure
   * leaves them to the next training (the merge itself is done; merged-labels.ts still maps late names).
   */
  private async relabelModels(actionId: string, label: string, into: string): Promise<MergedModels | null> {
    if (!this.opts.models) return null;
    try {
      const moved = await this.opts.models.merge(label, into);
      if (moved)
        await this.db.query(`UPDATE person_actions SET detail = jsonb_set(detail, '{models}', $2::jsonb) WHERE id = $1`, [
          actionId,
          JSON.stringify(moved),
        ]);
      return moved;
    } catch (err) {
      this.opts.log.warn(`person action ${actionId}: the trained models were not relabelled (${String(err)}); train again`);
      return null;
    }
  }

  /** The undo of relabelModels; true when the models name the merged person again (a failure: train again). */
  private async unrelabelModels(actionId: string, label: string, into: string, moved: MergedModels): Promise<boolean> {
    try {
      return (await this.opts.models?.unmerge(label, into, moved)) ?? false;
    } catch (err) {
      this.opts.log.warn(`undo of ${actionId}: the trained models were not given back (${String(err)}); train again`);
      return false;
    }
  }

  private refuseWhileTraining(): void {
    if (this.opts.trainingRunning())
      throw new ApiError('training_in_progress', 'a training runs now and reads the photos: merge or move them after it');
  }

  /**
   * The photos linked under `to`, then in one transaction their metadata and the sightings assigned as them moved,
   * `more` done and the action recorded, then the originals removed. A failure before the commit removes the copies.
   */
  private async moveFiles(
    from: string,
    to: string,
    filenames: readonly string[],
    more: (tx: Queryable, files: Record<string, string>) => Promise<Omit<MoveDetail, 'assigned'>>,
    action: { kind: 'merge' | 'move'; actor: string | null },
  ): Promise<MoveDetail & { id: string }> {
    const copied = await this.opts.images.copyInto(from, to, filenames);
    const files = Object.fromEntries(copied);
    const id = `p-${randomUUID()}`;
    let detail: MoveDetail;
    try {
      detail = await this.db.transaction(async (tx) => {
        const assigned = await moveMeta(tx, from, to, files);
        const rest = await more(tx, files);
        const d: MoveDetail = { ...rest, assigned };
        await insertAction(tx, { id, kind: action.kind, actor: action.actor, label: from, other: to, detail: d });
        return d;
      });
    } catch (err) {
      await this.opts.images.removeMoved(to, [...copied.values()]);
      throw err;
    }
    await this.opts.images.removeMoved(from, [...copied.keys()]);
    return { ...detail, id };
  }

  async undo(actionId: string): Promise<PersonUndoResponse> {
    return this.exclusive(async () => {
      const [row] = await this.db.query<ActionRow>('SELECT * FROM person_actions WHERE id = $1', [actionId]);
      if (!row) throw new ApiError('not_found', `no person action ${actionId}`);
      if (row.undone_at) throw new ApiError('already_undone', `action ${actionId} was undone at ${iso(row.undone_at)}`);
      const undoneAt = new Date();
      const mark = async (tx: Queryable) => {
        const marked = await tx.query('UPDATE person_actions SET undone_at = $2 WHERE id = $1 AND undone_at IS NULL RETURNING id', [
          actionId,
          undoneAt,
        ]);
        if (marked.length === 0) throw new ApiError('already_undone', `action ${actionId} was undone meanwhile`);
      };
      const answer = (restored: number, missing: string[], retrain: boolean): PersonUndoResponse => ({
        action_id: actionId,
        kind: row.kind,
        label: row.label,
        undone_at: undoneAt.toISOString(),
        retrain_needed: retrain,
        restored,
        missing,
      });
      if (row.kind === 'rename' || row.kind === 'cover') {
        await this.db.transaction(async (tx) => {
          await mark(tx);
          if (row.kind === 'rename') await tx.query('UPDATE people SET display_name = $2 WHERE label = $1', [row.label, row.detail.before]);
          else await tx.query('UPDATE people SET cover = $2 WHERE label = $1', [row.label, row.detail.before ?? null]);
        });
        return answer(0, [], false);
      }
      this.refuseWhileTraining();
      const other = row.other_label as string;
      const d = row.detail;
      // Back: each copy under `other`, linked under its old name (a new one if that was taken meanwhile).
      const present: string[] = [];
      const missing: string[] = [];
      for (const [old, now] of Object.entries(d.files)) {
        if (await this.opts.images.find(other, now)) present.push(now);
        else missing.push(old);
      }
      // A merge's undo gives the models back too (merge-models.ts): no training on any replica meanwhile.
      const held = row.kind === 'merge' ? await this.opts.models?.lock() : undefined;
      let modelsBack = false;
      let correctionsBack = false;
      let copied: Map<string, string>;
      try {
        copied = await this.opts.images.copyInto(other, row.label, present);
        const back: Record<string, string> = {};
        for (const [now, restoredAs] of copied) back[now] = restoredAs;
        try {
          await this.db.transaction(async (tx) => {
            // The lock results and sightings named after the merge are renamed under (merged-labels.ts): those renamed
            // before are in the action's detail, read again below; none is renamed for this merge once it is undone.
            if (row.kind === 'merge') await lockResults(tx);
            await mark(tx);
            await moveMeta(tx, other, row.label, back);
            // Meta keeps the names the copies got; sightings assigned as a photo follow it (moveMeta), the rest here.
            if (row.kind === 'merge') {
              const [now] = await tx.query<{ detail: MoveDetail }>('SELECT detail FROM person_actions WHERE id = $1', [actionId]);
              const late = now?.detail ?? d;
              if (late.recognised.length)
                await tx.query('UPDATE sightings SET label = $2 WHERE id = ANY($1::text[]) AND label = $3', [
                  late.recognised,
                  row.label,
                  other,
                ]);
              if (late.candidates?.length)
                await tx.query('UPDATE sightings SET candidate = $2 WHERE id = ANY($1::text[]) AND candidate = $3', [
                  late.candidates,
                  row.label,
                  other,
                ]);
              correctionsBack = late.corrections.length > 0;
              if (correctionsBack)
                await tx.query('UPDATE corrections SET label = $2 WHERE id = ANY($1::text[]) AND label = $3', [
                  late.corrections,
                  row.label,
                  other,
                ]);
              if (late.results) await restorePersonInResults(tx, late.results, row.label, other);
              if (d.person)
                await tx.query(
                  `INSERT INTO people (label, display_name, kiosk, cover, created_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (label) DO UPDATE SET display_name = EXCLUDED.display_name, kiosk = EXCLUDED.kiosk, cover = EXCLUDED.cover`,
                  [
                    row.label,
                    d.person.display_name,
                    d.person.kiosk,
                    d.person.cover ? (back[d.files[d.person.cover]] ?? d.person.cover) : null,
                    d.person.created_at,
                  ],
                );
            }
          });
        } catch (err) {
          await this.opts.images.removeMoved(row.label, [...copied.values()]);
          throw err;
        }
        await this.opts.images.removeMoved(other, [...copied.keys()]);
        // A person the move created, left without photos: gone again.
        if (row.kind === 'move' && d.new_person && (await this.opts.images.list(other)) === null)
          await this.db.query('DELETE FROM people WHERE label = $1 AND NOT EXISTS (SELECT 1 FROM image_meta WHERE label = $1)', [other]);
        if (row.kind === 'merge' && d.models) modelsBack = await this.unrelabelModels(actionId, row.label, other, d.models);
      } finally {
        await held?.release().catch((err) => this.opts.log.warn(`releasing the training lock failed: ${String(err)}`));
      }
      if (modelsBack) await this.opts.models?.loaded(row.label, true);
      if (row.kind === 'merge' && correctionsBack) await this.opts.correctionsMoved?.();
      this.opts.log.info(
        `person action ${actionId} (${row.kind} ${row.label} -> ${other}) undone: ${copied.size} photos back${modelsBack ? ', the trained models name them again' : ''}`,
      );
      // The models name the merged person again when the merge had relabelled them and every sample came back.
      return answer(copied.size, missing, !modelsBack || missing.length > 0);
    });
  }

  /** Removes the actions naming a person (deleting them everywhere); how many. */
  async forgetPerson(label: string): Promise<number> {
    return (await this.db.query('DELETE FROM person_actions WHERE label = $1 OR other_label = $1 RETURNING id', [label])).length;
  }
}

/**
 * Moves the image metadata of `files` (old name -> new name) from one label to the other, and the sightings assigned
 * as those photos; answers those sightings (id -> the photo's old name).
 */
async function moveMeta(tx: Queryable, from: string, to: string, files: Record<string, string>): Promise<Record<string, string>> {
  const olds = Object.keys(files);
  if (olds.length === 0) return {};
  const news = olds.map((o) => files[o]);
  await tx.query(
    `INSERT INTO image_meta (label, filename, original_name, uploaded_at, source, sighting_id, photo_check)
     SELECT $2, v.n, m.original_name, m.uploaded_at, m.source, m.sighting_id, m.photo_check
     FROM image_meta m JOIN (SELECT unnest($3::text[]) AS o, unnest($4::text[]) AS n) AS v ON m.filename = v.o
     WHERE m.label = $1
     ON CONFLICT (label, filename) DO UPDATE SET original_name = EXCLUDED.original_name, uploaded_at = EXCLUDED.uploaded_at,
       source = EXCLUDED.source, sighting_id = EXCLUDED.sighting_id, photo_check = EXCLUDED.photo_check`,
    [from, to, olds, news],
  );
  await tx.query('DELETE FROM image_meta WHERE label = $1 AND filename = ANY($2::text[])', [from, olds]);
  const rows = await tx.query<{ id: string; old: string }>(
    `UPDATE sightings SET assigned_label = $2, assigned_filename = v.n
     FROM (SELECT unnest($3::text[]) AS o, unnest($4::text[]) AS n) AS v
     WHERE sightings.assigned_label = $1 AND sightings.assigned_filename = v.o RETURNING sightings.id, v.o AS old`,
    [from, to, olds, news],
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.old]));
}

async function insertAction(
  tx: Queryable,
  a: { id: string; kind: PersonActionKind; actor: string | null; label: string; other: string | null; detail: object },
): Promise<void> {
  await tx.query(
    'INSERT INTO person_actions (id, kind, created_at, actor, label, other_label, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [a.id, a.kind, new Date(), a.actor, a.label, a.other, JSON.stringify(a.detail)],
  );
}
