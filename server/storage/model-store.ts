/**
 * The trained LBPH model on disk, as the original service wrote it: `training.yml` (OpenCV FileStorage YAML,
 * readable by `cv2.face.LBPHFaceRecognizer.read`) and `model.pickle` (a Python pickle of the dict label name
 * -> integer id). Both are written atomically. The label names are also kept in the YAML's `labelsInfo`
 * (OpenCV's own slot for them), so a crash between the two renames leaves a self-consistent `training.yml`.
 * training.yml is written and read in pieces, never as one string (about 118 KB per face: 1.2 GB at 10,000
 * faces, past V8's longest string), and handed on as an open file (trained-files.ts), not as bytes.
 *
 * A training does not wait for training.yml (#27: writing it cost more than the rest of a training after a delete).
 * It saves the model first as `training.lbph`, a checksummed binary of our own (lbph-source-file.ts; the histograms
 * sparse: fast to write and to read), which is the model from then on; training.yml is written from it afterwards (writeLbphYaml,
 * off the request path) and `training.yml.source` then records which training.lbph it was written from (and its size and
 * sha256). So after a crash before training.yml was written, a restart loads training.lbph and writes training.yml
 * again; a training.yml replaced by hand after it was written (an OpenCV model put in place) is the model again.
 * Deleting a person (forgetLabel) does the same, and removes the old training.yml at once (it still names them).
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EmbeddingModel } from '../../shared/embedding/matcher.js';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import { encodeLabelMapPickle } from '../../shared/lbph/pickle.js';
import { embeddingWithout, lbphWithout } from '../../shared/recognition/forget-label.js';
import {
  decodeEmbeddingsFile,
  decodeLbphStream,
  encodeEmbeddingsFile,
  encodeLbphBytes,
  type LabelIds,
} from '../../shared/recognition/model-files.js';
import { removeStaleTemps, TEMP_PREFIX, writeFileAtomic } from './atomic.js';
import { FileLock, type HeldLock, LockBusyError } from './file-lock.js';
import { LBPH_SOURCE_FILE, readSource, type SourceId, sourcePieces } from './lbph-source-file.js';
import { closeFd, fsyncFd, openFd, openNoFollow, readFd, writeFd } from './model-fds.js';
import { readFileAndStatNoFollow, readFileNoFollow } from './no-follow.js';
import { PRIVATE_FILE_MODE, privateDir } from './private-modes.js';
import { type ClusterLock, type SharedFiles, StateUnavailableError } from './shared-files.js';
import { localFilesAbove } from './store-hooks.js';
import { descriptorFile, type ModelFile, readChunks } from './trained-files.js';

export { LBPH_SOURCE_FILE, type SourceId } from './lbph-source-file.js';

export const TRAINING_FILE = 'training.yml';
/** Which training.lbph training.yml was written from: { source, size, sha256, ino } (JSON). */
export const TRAINING_SOURCE_NOTE = 'training.yml.source';
export const LABELS_FILE = 'model.pickle';
export const EMBEDDINGS_FILE = 'embeddings.json';
/** Held (server/storage/file-lock.ts) by the one training that runs across every replica sharing DATA_DIR. */
export const TRAINING_LOCK_FILE = '.training.lock';
/**
 * Held for moments only (never across a training): while training.lbph is replaced or removed, and while a
 * training.yml written from it is checked against it and put in place, so one is never put beside a newer model.
 */
export const PLACE_LOCK_FILE = '.training-yml.lock';

export interface StoredEmbedding {
  model: EmbeddingModel;
  labelIds: Record<string, number>;
  trainedAt: string;
  /** embeddings.json as read. */
  bytes: Uint8Array;
}

export interface StoredLbph {
  model: LbphModel;
  /** Label name -> id, as in model.pickle. */
  labelIds: Record<string, number>;
  trainedAt: string;
  /**
   * training.yml (the file that was read, still open; null while it is still to be written from training.lbph) and
   * model.pickle (null when absent) as read.
   */
  files: { lbph: ModelFile | null; labelMap: Uint8Array | null };
  /** training.lbph's size and sha256 when the model was read from it (null: from training.yml, as OpenCV wrote it). */
  source: SourceId | null;
}

/**
 * New sample labels and names for a model (rewriteLabels), from its sample labels, its names and each sample's
 * bytes (an LBPH histogram, a descriptor); null: the model stays as it is.
 */
export type SampleRelabel = (
  labels: Int32Array,
  labelIds: LabelIds,
  sample: (i: number) => Uint8Array,
) => { labels: Int32Array; labelIds: LabelIds } | null;

interface SourceNote extends SourceId {
  /** training.lbph's sha256 that training.yml was written from. */
  source: string;
  ino: number;
}

/** A background training.yml write given up because a newer model was saved (or the caller cancelled it). */
export class YamlSuperseded extends Error {
  constructor() {
    super('training.yml write superseded by a newer model');
    this.name = 'YamlSuperseded';
  }
}

export class ModelStore {
  /** The cross-process training lock: one training at a time over every replica sharing the state (#37: the seam's). */
  readonly trainingLock: ClusterLock;
  /** #37: told of every model file written or removed here. */
  readonly shared: SharedFiles;

  /** `shared`: the embedded default of the folder above `dir` when not given. */
  constructor(
    readonly dir: string,
    opts: { lockStaleMs?: number; shared?: SharedFiles } = {},
  ) {
    this.shared = opts.shared ?? localFilesAbove(dir);
    this.trainingLock = this.shared.lock(path.join(dir, TRAINING_LOCK_FILE), { staleMs: opts.lockStaleMs ?? 60_000 });
    // A file lock, not the seam's: it guards this DATA_DIR's own placing of training.yml beside training.lbph (each
    // replica writes its copy from the same bytes), never a change of the shared state that another process could race.
    this.placeLock = new FileLock(path.join(dir, PLACE_LOCK_FILE), { staleMs: opts.lockStaleMs ?? 60_000 });
  }

  /** See PLACE_LOCK_FILE. */
  private readonly placeLock: FileLock;

  /** Runs `work` holding the place lock, waiting for it (others hold it for moments); `giveUp` ends the wait. */
  private async placing<T>(work: () => Promise<T>, giveUp: () => Promise<boolean> = async () => false): Promise<T> {
    let lock: HeldLock | null = null;
    while (!lock) {
      try {
        lock = await this.placeLock.acquire();
      } catch (err) {
        if (!(err instanceof LockBusyError)) throw err;
        if (await giveUp()) throw new YamlSuperseded();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    try {
      return await work();
    } finally {
      await lock.release();
    }
  }

  async init(): Promise<void> {
    await privateDir(this.dir);
    // Model files are only written by a training, which holds the lock: while another replica trains, its
    // temporary files are not leftovers.
    let lock: HeldLock;
    try {
      lock = await this.trainingLock.acquire();
    } catch (err) {
      // Busy, or no lock to be had yet (PostgreSQL away since the start): the sweep waits for another start.
      if (err instanceof LockBusyError || err instanceof StateUnavailableError) return;
      throw err;
    }
    try {
      await removeStaleTemps(this.dir);
    } finally {
      await lock.release();
    }
  }

  /**
   * What identifies the model files on disk now, from a stat of each (an atomic rename always gives a new
   * inode): cheap enough to poll, and it changes whenever a training on any replica saved new files.
   */
  async filesSignature(): Promise<string> {
    const parts = await Promise.all(
      [TRAINING_FILE, LABELS_FILE, EMBEDDINGS_FILE, LBPH_SOURCE_FILE, TRAINING_SOURCE_NOTE].map((name) =>
        fs.lstat(path.join(this.dir, name)).then(
          (st) => `${st.ino}:${st.size}:${st.mtimeMs}`,
          () => '-',
        ),
      ),
    );
    return parts.join('|');
  }

  /**
   * Writes training.lbph, model.pickle and training.yml (with its note), all before it returns; returns what was
   * written (what a browser downloads): training.yml as the file itself, open, and the pickle's bytes. The caller
   * holds the training lock. A training saves with saveSource and writes training.yml afterwards (writeYaml).
   */
  async saveLbph(
    model: LbphModel,
    labelIds: Record<string, number>,
    opts: { mtime?: Date } = {},
  ): Promise<{ yaml: ModelFile; pickle: Uint8Array; source: SourceId }> {
    const { source, pickle } = await this.saveSource(model, labelIds, opts);
    const yaml = await this.writeYaml(model, labelIds, source, { locked: true, mtime: opts.mtime });
    return { yaml, pickle, source };
  }

  /**
   * The model saved for good: training.lbph (fast: the histograms as they are in memory), then model.pickle,
   * each atomically. From here on a restart loads this model; training.yml follows with writeYaml. The caller
   * holds the training lock.
   */
  async saveSource(
    model: LbphModel,
    labelIds: Record<string, number>,
    opts: { mtime?: Date } = {},
  ): Promise<{ source: SourceId; pickle: Uint8Array }> {
    const pickle = encodeLabelMapPickle(labelIds);
    const id = { size: 0, sha256: '' };
    await this.placing(() => writeFileAtomic(path.join(this.dir, LBPH_SOURCE_FILE), sourcePieces(model, labelIds, id), opts));
    await this.shared.wrote(path.join(this.dir, LBPH_SOURCE_FILE));
    await writeFileAtomic(path.join(this.dir, LABELS_FILE), pickle, opts);
    await this.shared.wrote(path.join(this.dir, LABELS_FILE));
    return { source: id, pickle };
  }

  /**
   * training.yml written from the model saved as `source` (the same bytes whoever writes them), then put in place
   * with its note under the place lock, and only while training.lbph is still `source`; a newer model, or
   * `cancelled()` turning true, gives YamlSuperseded. Returns the file written, open (downloads read it, even if
   * another replica's identical copy was put in place first). `locked`: the caller holds the training lock and
   * waits for the file (no yielding to other work between pieces).
   */
  async writeYaml(
    model: LbphModel,
    labelIds: LabelIds,
    source: SourceId,
    opts: { locked?: boolean; cancelled?: () => boolean; mtime?: Date } = {},
  ): Promise<ModelFile> {
    const check = () => {
      if (opts.cancelled?.()) throw new YamlSuperseded();
    };
    for (let attempt = 1; ; attempt++) {
      const temp = path.join(this.dir, `${TEMP_PREFIX}${randomUUID()}-${TRAINING_FILE}`);
      const fd = await openFd(temp, 'wx+', PRIVATE_FILE_MODE);
      let file: ModelFile;
      try {
        const hash = createHash('sha256');
        let size = 0;
        for (const piece of encodeLbphBytes(model, labelIds)) {
          check();
          hash.update(piece);
          for (let at = 0; at < piece.length; ) at += (await writeFd(fd, piece, at, piece.length - at, size + at)).bytesWritten;
          size += piece.length;
          // Let requests in between pieces: this runs beside the server's other work.
          if (!opts.locked) await new Promise((resolve) => setImmediate(resolve));
        }
        await fsyncFd(fd);
        if (opts.mtime) await fs.utimes(temp, opts.mtime, opts.mtime);
        file = descriptorFile(fd, size, hash.digest('hex'));
      } catch (err) {
        await closeFd(fd).catch(() => {});
        await fs.rm(temp, { force: true });
        throw err;
      }
      try {
        check();
        const placed = await this.placeYaml(temp, file, source, opts);
        if (placed) return file;
      } finally {
        await fs.rm(temp, { force: true });
      }
      // The temp file was swept by a replica's start-up before it was renamed: write it again.
      if (attempt >= 3) throw new Error(`${TRAINING_FILE}: its temporary file kept vanishing before it was put in place`);
    }
  }

  /** Renames `temp` over training.yml and writes its note, under the place lock; false when `temp` vanished meanwhile. */
  private async placeYaml(temp: string, file: ModelFile, source: SourceId, opts: { cancelled?: () => boolean }): Promise<boolean> {
    return this.placing(
      async () => {
        if (!(await this.isSource(source))) throw new YamlSuperseded();
        const note = await this.readNote();
        if (note?.source === source.sha256 && (await this.noteMatches(note))) return true; // another replica's copy is in place
        let ino: number;
        try {
          ino = (await fs.stat(temp)).ino;
          await fs.rename(temp, path.join(this.dir, TRAINING_FILE));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
          throw err;
        }
        await this.shared.wrote(path.join(this.dir, TRAINING_FILE));
        const written: SourceNote = { source: source.sha256, size: file.size, sha256: file.sha256, ino };
        await writeFileAtomic(path.join(this.dir, TRAINING_SOURCE_NOTE), JSON.stringify(written));
        await this.shared.wrote(path.join(this.dir, TRAINING_SOURCE_NOTE));
        return true;
      },
      async () => opts.cancelled?.() === true || !(await this.isSource(source)),
    );
  }

  /** Whether training.lbph is (still) the file `source` names: same size and sha256 (read only when the size matches). */
  private async isSource(source: SourceId): Promise<boolean> {
    const current = await this.sourceId();
    return current !== null && current.size === source.size && current.sha256 === source.sha256;
  }

  /** training.lbph's size and sha256 (its last 32 bytes: the file carries its own checksum), or null when absent. */
  private async sourceId(): Promise<SourceId | null> {
    const opened = await openNoFollow(path.join(this.dir, LBPH_SOURCE_FILE));
    if (!opened) return null;
    try {
      if (opened.stat.size < 32) return null;
      const tail = Buffer.alloc(32);
      await readFd(opened.fd, tail, 0, 32, opened.stat.size - 32);
      return { size: opened.stat.size, sha256: tail.toString('hex') };
    } finally {
      await closeFd(opened.fd).catch(() => {});
    }
  }

  private async readNote(): Promise<SourceNote | null> {
    const found = await this.readText(TRAINING_SOURCE_NOTE);
    if (!found) return null;
    try {
      return JSON.parse(found.text) as SourceNote;
    } catch {
      return null;
    }
  }

  /** Whether training.yml is still the file the note describes (not replaced since, by hand or by OpenCV). */
  private async noteMatches(note: SourceNote): Promise<boolean> {
    const st = await fs.lstat(path.join(this.dir, TRAINING_FILE)).catch(() => null);
    return st?.isFile() === true && st.ino === note.ino && st.size === note.size;
  }

  /** The embedding recognizer's descriptors and names, in one file (so one atomic write); returns its bytes. */
  async saveEmbedding(model: EmbeddingModel, labelIds: Record<string, number>, trainedAt: string): Promise<Uint8Array> {
    const bytes = new TextEncoder().encode(encodeEmbeddingsFile(model, labelIds, trainedAt));
    await writeFileAtomic(path.join(this.dir, EMBEDDINGS_FILE), bytes);
    await this.shared.wrote(path.join(this.dir, EMBEDDINGS_FILE));
    return bytes;
  }

  /**
   * Rewrites the saved models without `label` (a person deleted): their samples and name out, everything else as
   * trained, each file replaced atomically and keeping its training time; a model left with nobody is removed.
   * The caller holds the training lock (no training writes the files meanwhile). Returns the samples removed
   * per model (0 where the model did not know them, or none is saved). Other replicas load the new files with
   * their model watch, as after a training.
   */
  async forgetLabel(label: string): Promise<{ lbph: number; embedding: number }> {
    const removed = { lbph: 0, embedding: 0 };
    const lbph = await this.loadLbph();
    if (lbph) {
      const out = lbphWithout(lbph.model, lbph.labelIds, label);
      removed.lbph = out.removed;
      if (out.removed > 0 || Object.keys(out.labelIds).length < Object.keys(lbph.labelIds).length) {
        if (out.model.labels.length === 0) {
          // Nobody left: no model (a training makes the next one), rather than a model that knows no one.
          await this.placing(async () => {
            for (const name of [LBPH_SOURCE_FILE, TRAINING_SOURCE_NOTE, TRAINING_FILE, LABELS_FILE]) await this.remove(name);
          });
        } else {
          // Like a training (#27): training.lbph is the model from here on, and training.yml is written from it after
          // the answer (FaceService.publish; a restart writes it when a stop came first). The old training.yml still
          // holds the person's templates, so it goes now rather than when its replacement is ready.
          const { source } = await this.saveSource(out.model, out.labelIds, { mtime: new Date(lbph.trainedAt) });
          await this.placing(async () => {
            if (!(await this.isSource(source))) return; // a newer model was saved meanwhile: its YAML is its own
            for (const name of [TRAINING_SOURCE_NOTE, TRAINING_FILE]) await this.remove(name);
          });
        }
      }
    }
    const embedding = await this.loadEmbedding();
    if (embedding) {
      const out = embeddingWithout(embedding.model, embedding.labelIds, label);
      removed.embedding = out.removed;
      if (out.removed > 0 || Object.keys(out.labelIds).length < Object.keys(embedding.labelIds).length) {
        if (out.model.labels.length === 0) await this.remove(EMBEDDINGS_FILE);
        else await this.saveEmbedding(out.model, out.labelIds, embedding.trainedAt);
      }
    }
    return removed;
  }

  /**
   * #36: rewrites the saved models with their samples under other names (a merge and its undo,
   * server/people/merge-models.ts): `relabel` answers each model's new sample labels and names, or null to leave it
   * as it is; the samples themselves stay. Saved as forgetLabel saves (atomically, keeping the training time; the
   * LBPH YAML written afterwards from training.lbph). The caller holds the training lock. Returns which changed.
   */
  async rewriteLabels(relabel: { lbph: SampleRelabel; embedding: SampleRelabel }): Promise<{ lbph: boolean; embedding: boolean }> {
    const changed = { lbph: false, embedding: false };
    const lbph = await this.loadLbph();
    if (lbph) {
      const { histograms } = lbph.model;
      const out = relabel.lbph(
        lbph.model.labels,
        lbph.labelIds,
        (i) => new Uint8Array(histograms[i].buffer, histograms[i].byteOffset, histograms[i].byteLength),
      );
      if (out) {
        const { labelsInfo: _names, ...params } = lbph.model;
        const { source } = await this.saveSource({ ...params, labels: out.labels }, out.labelIds, { mtime: new Date(lbph.trainedAt) });
        await this.placing(async () => {
          if (!(await this.isSource(source))) return; // a newer model was saved meanwhile: its YAML is its own
          for (const name of [TRAINING_SOURCE_NOTE, TRAINING_FILE]) await this.remove(name);
        });
        changed.lbph = true;
      }
    }
    const embedding = await this.loadEmbedding();
    if (embedding) {
      const { descriptors, dim } = embedding.model;
      const out = relabel.embedding(embedding.model.labels, embedding.labelIds, (i) => {
        const d = descriptors.subarray(i * dim, (i + 1) * dim);
        return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
      });
      if (out) {
        await this.saveEmbedding({ ...embedding.model, labels: out.labels }, out.labelIds, embedding.trainedAt);
        changed.embedding = true;
      }
    }
    return changed;
  }

  /** Removes one model file (nothing to do when there is none) and tells the seam. */
  private async remove(name: string): Promise<void> {
    await fs.rm(path.join(this.dir, name), { force: true });
    await this.shared.removed(path.join(this.dir, name));
  }

  /** The saved embedding model, or null when none was trained; throws with a clear message when unusable. */
  async loadEmbedding(): Promise<StoredEmbedding | null> {
    const found = await this.readText(EMBEDDINGS_FILE);
    if (!found) return null;
    const { model, labelIds, createdAt } = decodeEmbeddingsFile(found.text);
    return { model, labelIds, trainedAt: createdAt ?? found.modified, bytes: found.bytes };
  }

  /**
   * Loads the model, or null when none was trained: from training.lbph when a training saved it (training.yml
   * with it when its note says it was written from it; else null, to be written again), or from training.yml
   * (written by OpenCV, by an older Lookout, or put in place by hand since). A model written by OpenCV (no
   * labelsInfo) takes its names from model.pickle. Throws with a clear message when the files exist but cannot
   * be used.
   */
  async loadLbph(): Promise<StoredLbph | null> {
    const read = await readSource(path.join(this.dir, LBPH_SOURCE_FILE));
    if (read) {
      const note = await this.readNote();
      const yamlReplaced = note !== null && !(await this.noteMatches(note)) && (await this.hasYaml());
      const { model, labelIds, id } = read;
      if (!(note?.source === id.sha256 && yamlReplaced)) {
        const pickle = await this.readPickle();
        let lbph: ModelFile | null = null;
        if (note?.source === id.sha256) {
          const opened = await openNoFollow(path.join(this.dir, TRAINING_FILE));
          if (opened && opened.stat.ino === note.ino && opened.stat.size === note.size)
            lbph = descriptorFile(opened.fd, note.size, note.sha256);
          else if (opened) await closeFd(opened.fd).catch(() => {});
        }
        return { model, labelIds, trainedAt: read.mtime.toISOString(), files: { lbph, labelMap: pickle }, source: id };
      }
      // training.yml was replaced after it was written from training.lbph: it is the model now (below).
    }
    return this.loadYaml();
  }

  private async hasYaml(): Promise<boolean> {
    const st = await fs.lstat(path.join(this.dir, TRAINING_FILE)).catch(() => null);
    return st?.isFile() ?? false;
  }

  private async readPickle(): Promise<Uint8Array | null> {
    return readFileNoFollow(path.join(this.dir, LABELS_FILE)).then(
      (b) => new Uint8Array(b),
      () => null,
    );
  }

  /** The model from training.yml itself. */
  private async loadYaml(): Promise<StoredLbph | null> {
    // Read in pieces from one open file, which the result keeps (the bytes it was read from, for downloads).
    const opened = await openNoFollow(path.join(this.dir, TRAINING_FILE));
    if (!opened) return null;
    const { fd, stat } = opened;
    try {
      // Read beside the YAML even when its labelsInfo has the names: it is part of the downloadable model set.
      const pickle = await this.readPickle();
      const hash = createHash('sha256');
      const pieces = async function* () {
        for await (const piece of readChunks(fd, stat.size)) {
          hash.update(piece);
          yield piece;
        }
      };
      const { model, labelIds } = await decodeLbphStream(pieces(), pickle);
      const lbph = descriptorFile(fd, stat.size, hash.digest('hex'));
      return { model, labelIds, trainedAt: stat.mtime.toISOString(), files: { lbph, labelMap: pickle }, source: null };
    } catch (err) {
      await closeFd(fd).catch(() => {});
      throw err;
    }
  }

  /**
   * A model file's bytes, text and modification time, or null when it does not exist (nothing trained yet). A
   * symbolic link in its place is not read (it could point at any file, and the models are served to browsers).
   */
  private async readText(name: string): Promise<{ bytes: Uint8Array; text: string; modified: string } | null> {
    const file = path.join(this.dir, name);
    try {
      const { bytes: buffer, stat } = await readFileAndStatNoFollow(file);
      const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
      return { bytes, text: new TextDecoder().decode(bytes), modified: stat.mtime.toISOString() };
    } catch {
      return null;
    }
  }
}
