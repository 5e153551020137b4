/**
 * Corrections ("not this person", issue #26): a reviewer says a sighting's face is not the person it was named. The
 * face crop is described for both recognizers (LBPH histogram in the vision pool, the embedding descriptor in the
 * embedding pool when it runs) and kept in `corrections` (migration 001), one row per recognizer; the decision rule
 * then never gives that person's name to a face at least as near to one of these as to the person's own samples
 * (shared/recognition/corrections.ts), in recognition and in verification.
 *
 * The recognizers hold the corrections by label name (FaceService.setNegatives, replayed to a worker that restarts).
 * A change is published through a small version file in DATA_DIR, so API replicas sharing DATA_DIR and the database
 * load them within the watch interval; a server that never had a correction does not open the database for them.
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Correction } from '../../shared/api/corrections.js';
import type { RecognitionModel } from '../../shared/api/index.js';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { Rect } from '../../shared/image/types.js';
import { type FaceNegatives, negativeCount } from '../../shared/recognition/corrections.js';
import type { Database } from '../db/database.js';
import type { FaceService } from '../engines/faces/face-service.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { writeFileAtomic } from '../storage/atomic.js';
import type { ImageStore } from '../storage/image-store.js';
import { readFileNoFollow } from '../storage/no-follow.js';
import { LocalFiles, type SharedFiles } from '../storage/shared-files.js';
import { mergePaths, nameMergedInCorrection } from '../people/merged-labels.js';
import { PeriodicCheck } from '../periodic-check.js';

/** A crop's path relative to DATA_DIR/sightings, as the sightings store writes it (checked before any file is read). */
const CROP_PATH = /^\d{4}-\d{2}-\d{2}\/[A-Za-z0-9_-]{1,100}\.jpg$/;
/** How much a sighting's crop widens the face box on each side (the sightings store's 40%). */
export const CROP_MARGIN = 0.4;
const RECOGNIZERS: readonly RecognitionModel[] = ['lbph', 'embedding'];
/** The file whose change tells every replica to load the corrections again. */
export const VERSION_FILE = 'corrections.version';

export interface CorrectionStoreOptions {
  db: Database;
  dataDir: string;
  faces: FaceService;
  images: ImageStore;
  log: Logger;
  /** #37: told when the version file is written (DATA_DIR's own files when not given). */
  shared?: SharedFiles;
}

export interface AddCorrection {
  sighting_id: string;
  /** Default: the name the sighting was given. */
  label?: string;
  actor: string | null;
}

export interface AddedCorrection {
  id: string;
  action_id: string;
  label: string;
  sighting_id: string;
  recognizers: RecognitionModel[];
  created: boolean;
}

interface SightingRow {
  id: string;
  label: string | null;
  crop: string;
}

interface CorrectionRow {
  id: string;
  label: string;
  sighting_id: string | null;
  action_id: string | null;
  created_at: Date;
  actor: string | null;
  recognizer: string;
  descriptor_model: string | null;
}

/** Float32 little-endian bytes (the database's bytea), and back. */
export function featureBytes(feature: Float32Array): Uint8Array {
  const out = new Uint8Array(feature.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < feature.length; i++) view.setFloat32(i * 4, feature[i], true);
  return out;
}

export function featureFrom(bytes: Uint8Array): Float32Array | null {
  if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** The face box inside a crop cut with CROP_MARGIN on each side (clipping at the picture's edges aside). */
export function faceInCrop(width: number, height: number): Rect {
  const share = CROP_MARGIN / (1 + 2 * CROP_MARGIN);
  const x = Math.round(width * share);
  const y = Math.round(height * share);
  return { x, y, width: Math.max(1, width - 2 * x), height: Math.max(1, height - 2 * y) };
}

/** A correction's rows share its id: `<id>.<recognizer>`. */
const rowId = (id: string, recognizer: RecognitionModel) => `${id}.${recognizer}`;
const idOf = (row: { id: string }) => row.id.slice(0, row.id.lastIndexOf('.'));

/** One correction from its rows (one per recognizer). */
function corrections(rows: readonly CorrectionRow[]): Correction[] {
  const byId = new Map<string, Correction>();
  for (const row of rows) {
    const id = idOf(row);
    let c = byId.get(id);
    if (!c) {
      c = {
        id,
        label: row.label,
        sighting_id: row.sighting_id,
        action_id: row.action_id,
        created_at: new Date(row.created_at).toISOString(),
        actor: row.actor,
        recognizers: [],
        descriptor_model: null,
      };
      byId.set(id, c);
    }
    c.recognizers.push(row.recognizer as RecognitionModel);
    if (row.recognizer === 'embedding') c.descriptor_model = row.descriptor_model;
  }
  for (const c of byId.values()) c.recognizers.sort((a, b) => RECOGNIZERS.indexOf(a) - RECOGNIZERS.indexOf(b));
  return [...byId.values()];
}

export class CorrectionStore {
  private readonly versionFile: string;
  private readonly sightingsDir: string;
  private seenVersion = '';
  private watcher: PeriodicCheck | null = null;
  /** Loads run one at a time; a change meanwhile asks for one more. */
  private loading: Promise<void> | null = null;
  private again = false;

  constructor(private readonly opts: CorrectionStoreOptions) {
    this.versionFile = path.join(opts.dataDir, VERSION_FILE);
    this.sightingsDir = path.join(opts.dataDir, 'sightings');
  }

  /** Loads the corrections into the recognizers when any were ever made (the version file exists). */
  async start(): Promise<void> {
    const version = await this.version();
    if (version) await this.reload(version);
  }

  /** Follows changes made by other replicas: a stat of the version file every `intervalMs`, one at a time. */
  watch(intervalMs: number): void {
    this.stopWatching();
    this.watcher = new PeriodicCheck(intervalMs, async () => {
      try {
        const version = await this.version();
        if (version && version !== this.seenVersion) await this.reload(version);
      } catch (err) {
        this.opts.log.warn(`checking the corrections for changes failed: ${String(err)}`);
      }
    });
    void this.watcher.start();
  }

  stopWatching(): void {
    this.watcher?.stop();
    this.watcher = null;
  }

  /** The version file's signature, or '' when no correction was ever made here. */
  private async version(): Promise<string> {
    try {
      const s = await stat(this.versionFile);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return '';
    }
  }

  /** Every recognizer's corrections loaded from the database and installed; `version`: what they were read at. */
  private async reload(version?: string): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        const at = version ?? (await this.version());
        const negatives: FaceNegatives = { lbph: await this.negatives('lbph'), embedding: await this.negatives('embedding') };
        await this.opts.faces.setNegatives(negatives);
        this.seenVersion = at;
        this.opts.log.debug(
          `corrections installed: lbph ${negativeCount(negatives.lbph)}, embedding ${negativeCount(negatives.embedding)}`,
        );
        version = undefined;
      } while (this.again);
    })().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** #36 2: corrections moved to another label in the database (a merge): installed here and on the other replicas. */
  async relabelled(): Promise<void> {
    await this.changed();
  }

  /** Installs the corrections here and tells the other replicas (a new version file). */
  private async changed(): Promise<void> {
    await writeFileAtomic(this.versionFile, `${new Date().toISOString()} ${randomUUID()}\n`);
    await (this.opts.shared ?? new LocalFiles(this.opts.dataDir)).wrote(this.versionFile);
    await this.reload();
  }

  /**
   * A recognizer's corrections, label -> features. Embedding descriptors of another descriptor model than the one
   * running are left out (not comparable).
   */
  async negatives(recognizer: RecognitionModel): Promise<Map<string, Float32Array[]>> {
    const out = new Map<string, Float32Array[]>();
    const descriptorModel = this.opts.faces.embeddingAvailability.descriptorModel ?? null;
    if (recognizer === 'embedding' && !descriptorModel) return out;
    const rows = await this.opts.db.query<{ label: string; feature: Uint8Array }>(
      recognizer === 'embedding'
        ? 'SELECT label, feature FROM corrections WHERE recognizer = $1 AND descriptor_model = $2 ORDER BY created_at, id'
        : 'SELECT label, feature FROM corrections WHERE recognizer = $1 ORDER BY created_at, id',
      recognizer === 'embedding' ? [recognizer, descriptorModel] : [recognizer],
    );
    for (const row of rows) {
      const feature = featureFrom(new Uint8Array(row.feature));
      if (!feature) continue;
      const list = out.get(row.label) ?? [];
      list.push(feature);
      out.set(row.label, list);
    }
    return out;
  }

  /** The label to correct: the one asked for (normalised), else the name the sighting was given. */
  private async labelFor(sighting: SightingRow, asked: string | undefined): Promise<string> {
    let label: string;
    if (asked !== undefined) {
      const checked = normalizeLabel(asked);
      if (!checked.ok) throw new ApiError('invalid_label', checked.reason);
      // #36 2: a name merged away (a browser that has not heard of the merge) is the one who stays.
      const merged = (await mergePaths(this.opts.db, [checked.label])).get(checked.label);
      label = merged ? merged[merged.length - 1].into : checked.label;
    } else {
      if (!sighting.label || sighting.label === 'unknown') {
        throw new ApiError('invalid_label', `sighting ${sighting.id} was not given a name: say which person its face is not ("label")`);
      }
      label = sighting.label;
    }
    const known = this.opts.faces.trainedLabels.has(label) || (await this.opts.images.list(label)) !== null;
    if (!known) throw new ApiError('label_not_found', `nobody is enrolled as "${label}"`);
    return label;
  }

  /** The sighting's crop bytes (never through a link, never outside DATA_DIR/sightings). */
  private async cropOf(sighting: SightingRow): Promise<Uint8Array> {
    if (!CROP_PATH.test(sighting.crop)) throw new ApiError('not_found', `sighting ${sighting.id} has no face crop`);
    try {
      const bytes = await readFileNoFollow(path.join(this.sightingsDir, sighting.crop));
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    } catch {
      throw new ApiError('not_found', `the face crop of sighting ${sighting.id} is gone (purged or deleted)`);
    }
  }

  /** "Not this person": the sighting's face kept for every recognizer that can describe it, and a review action. */
  async add(request: AddCorrection): Promise<AddedCorrection> {
    const [sighting] = await this.opts.db.query<SightingRow>('SELECT id, label, crop FROM sightings WHERE id = $1', [request.sighting_id]);
    if (!sighting) throw new ApiError('not_found', `no sighting ${request.sighting_id}`);
    let label = await this.labelFor(sighting, request.label);
    const asked = request.label === undefined ? null : normalizeLabel(request.label);
    const askedMerged = asked?.ok && asked.label !== label ? asked.label : null;

    const existing = await this.opts.db.query<CorrectionRow>(
      'SELECT id, label, sighting_id, action_id, created_at, actor, recognizer, descriptor_model FROM corrections WHERE sighting_id = $1 AND label = $2',
      [sighting.id, label],
    );
    const [already] = corrections(existing);
    if (already) {
      return {
        id: already.id,
        action_id: already.action_id ?? '',
        label,
        sighting_id: sighting.id,
        recognizers: already.recognizers,
        created: false,
      };
    }

    const crop = await this.cropOf(sighting);
    const sample = await this.opts.faces.correctionSample(crop, faceInCrop);
    const features: { recognizer: RecognitionModel; feature: Float32Array; descriptorModel: string | null }[] = [
      { recognizer: 'lbph', feature: sample.histogram, descriptorModel: null },
    ];
    if (sample.descriptor) features.push({ recognizer: 'embedding', feature: sample.descriptor, descriptorModel: sample.descriptorModel });

    const id = randomUUID();
    const actionId = randomUUID();
    const at = new Date();
    await this.opts.db.transaction(async (tx) => {
      // Asked under a name merged away: named (again, under the lock) as the one who stays, and noted in the merge.
      if (askedMerged !== null)
        label = await nameMergedInCorrection(
          tx,
          askedMerged,
          features.map((f) => rowId(id, f.recognizer)),
        );
      await tx.query(
        `INSERT INTO review_actions (id, kind, created_at, actor, label, sighting_ids, detail) VALUES ($1, 'correct', $2, $3, $4, $5::jsonb, $6::jsonb)`,
        [
          actionId,
          at,
          request.actor,
          label,
          JSON.stringify([sighting.id]),
          JSON.stringify({ correction_id: id, recognizers: features.map((f) => f.recognizer) }),
        ],
      );
      for (const f of features) {
        await tx.query(
          `INSERT INTO corrections (id, label, sighting_id, action_id, created_at, actor, recognizer, descriptor_model, feature)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [
            rowId(id, f.recognizer),
            label,
            sighting.id,
            actionId,
            at,
            request.actor,
            f.recognizer,
            f.descriptorModel,
            featureBytes(f.feature),
          ],
        );
      }
    });
    await this.changed();
    this.opts.log.info(`correction ${id}: sighting ${sighting.id} is not ${label} (${features.map((f) => f.recognizer).join(', ')})`);
    return { id, action_id: actionId, label, sighting_id: sighting.id, recognizers: features.map((f) => f.recognizer), created: true };
  }

  /** Newest first; `label`: only that person's. */
  async list(label?: string): Promise<Correction[]> {
    const columns = 'id, label, sighting_id, action_id, created_at, actor, recognizer, descriptor_model';
    const rows = await this.opts.db.query<CorrectionRow>(
      label === undefined
        ? `SELECT ${columns} FROM corrections ORDER BY created_at DESC, id`
        : `SELECT ${columns} FROM corrections WHERE label = $1 ORDER BY created_at DESC, id`,
      label === undefined ? [] : [label],
    );
    return corrections(rows);
  }

  /** Removes one correction (its action is marked undone); null when there is none with this id. */
  async remove(id: string): Promise<Correction | null> {
    const ids = RECOGNIZERS.map((r) => rowId(id, r));
    const removed = await this.opts.db.transaction(async (tx) => {
      const rows = await tx.query<CorrectionRow>(
        'DELETE FROM corrections WHERE id = ANY($1::text[]) RETURNING id, label, sighting_id, action_id, created_at, actor, recognizer, descriptor_model',
        [ids],
      );
      const actions = [...new Set(rows.map((r) => r.action_id).filter((a): a is string => a !== null))];
      if (actions.length) {
        await tx.query('UPDATE review_actions SET undone_at = $2 WHERE id = ANY($1::text[]) AND undone_at IS NULL', [actions, new Date()]);
      }
      return rows;
    });
    if (removed.length === 0) return null;
    await this.changed();
    return corrections(removed)[0];
  }

  /** Undoes a review action of kind `correct` (review-store's undo marks the action itself); the rows removed. */
  async undoAction(actionId: string): Promise<number> {
    const rows = await this.opts.db.query('DELETE FROM corrections WHERE action_id = $1 RETURNING id', [actionId]);
    if (rows.length) await this.changed();
    return new Set(rows.map((r) => idOf(r as { id: string }))).size;
  }

  /** Removes every correction of a person (deleting the person); how many corrections there were. */
  async forgetPerson(label: string): Promise<number> {
    const rows = await this.opts.db.query('DELETE FROM corrections WHERE label = $1 RETURNING id', [label]);
    if (rows.length) await this.changed();
    return new Set(rows.map((r) => idOf(r as { id: string }))).size;
  }
}
