/**
 * The trained LBPH model on disk, as the original service wrote it: `training.yml` (OpenCV FileStorage YAML,
 * readable by `cv2.face.LBPHFaceRecognizer.read`) and `model.pickle` (a Python pickle of the dict label name
 * -> integer id). Both are written atomically. The label names are also kept in the YAML's `labelsInfo`
 * (OpenCV's own slot for them), so a crash between the two renames leaves a self-consistent `training.yml`.
 * training.yml is written and read in pieces, never as one string (about 118 KB per face: 1.2 GB at 10,000
 * faces, past V8's longest string), and handed on as an open file (trained-files.ts), not as bytes.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import fsCallback from 'node:fs';
import type { EmbeddingModel } from '../../shared/embedding/matcher.js';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import { encodeLabelMapPickle } from '../../shared/lbph/pickle.js';
import { embeddingWithout, lbphWithout } from '../../shared/recognition/forget-label.js';
import {
  decodeEmbeddingsFile,
  decodeLbphStream,
  encodeEmbeddingsFile,
  encodeLbphChunks,
  type LabelIds,
} from '../../shared/recognition/model-files.js';
import { removeStaleTemps, writeFileAtomic } from './atomic.js';
import { FileLock, type HeldLock, LockBusyError } from './file-lock.js';
import { readFileAndStatNoFollow, readFileNoFollow } from './no-follow.js';
import { descriptorFile, type ModelFile, readChunks } from './trained-files.js';

const openFd = promisify(fsCallback.open);
const fstat = promisify(fsCallback.fstat);
const closeFd = promisify(fsCallback.close);

/** Opens a regular file read-only without following a link; null when there is none (or a link, or a folder). */
async function openNoFollow(file: string): Promise<{ fd: number; stat: fsCallback.Stats } | null> {
  let fd: number;
  try {
    fd = await openFd(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  const stat = await fstat(fd).catch(() => null);
  if (!stat?.isFile()) {
    await closeFd(fd).catch(() => {});
    return null;
  }
  return { fd, stat };
}

export const TRAINING_FILE = 'training.yml';
export const LABELS_FILE = 'model.pickle';
export const EMBEDDINGS_FILE = 'embeddings.json';
/** Held (server/storage/file-lock.ts) by the one training that runs across every replica sharing DATA_DIR. */
export const TRAINING_LOCK_FILE = '.training.lock';

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
  /** training.yml (the file that was read, still open) and model.pickle (null when absent) as read. */
  files: { lbph: ModelFile; labelMap: Uint8Array | null };
}

export class ModelStore {
  /** The cross-process training lock: one training at a time over every replica sharing this directory. */
  readonly trainingLock: FileLock;

  constructor(
    readonly dir: string,
    opts: { lockStaleMs?: number } = {},
  ) {
    this.trainingLock = new FileLock(path.join(dir, TRAINING_LOCK_FILE), { staleMs: opts.lockStaleMs ?? 60_000 });
  }

  async init(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    // Model files are only written by a training, which holds the lock: while another replica trains, its
    // temporary files are not leftovers.
    let lock: HeldLock;
    try {
      lock = await this.trainingLock.acquire();
    } catch (err) {
      if (err instanceof LockBusyError) return;
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
      [TRAINING_FILE, LABELS_FILE, EMBEDDINGS_FILE].map((name) =>
        fs.lstat(path.join(this.dir, name)).then(
          (st) => `${st.ino}:${st.size}:${st.mtimeMs}`,
          () => '-',
        ),
      ),
    );
    return parts.join('|');
  }

  /**
   * Writes training.yml and model.pickle; returns what was written (what a browser downloads): training.yml as
   * the file itself, open, and the pickle's bytes. The caller holds the training lock.
   */
  async saveLbph(model: LbphModel, labelIds: Record<string, number>): Promise<{ yaml: ModelFile; pickle: Uint8Array }> {
    const pickle = encodeLabelMapPickle(labelIds);
    // YAML first: it carries the names too, so it is complete on its own if the pickle's rename never happens.
    const yaml = await this.writeLbph(model, labelIds);
    await writeFileAtomic(path.join(this.dir, LABELS_FILE), pickle);
    return { yaml, pickle };
  }

  /**
   * training.yml written atomically from its text in pieces (hashed and counted as they go), then opened: under
   * the training lock nothing renames over it meanwhile, so this is the inode just written.
   */
  private async writeLbph(model: LbphModel, labelIds: LabelIds, opts: { mtime?: Date } = {}): Promise<ModelFile> {
    const hash = createHash('sha256');
    let size = 0;
    const pieces = function* () {
      for (const piece of encodeLbphChunks(model, labelIds)) {
        hash.update(piece);
        size += Buffer.byteLength(piece);
        yield piece;
      }
    };
    const file = path.join(this.dir, TRAINING_FILE);
    await writeFileAtomic(file, pieces(), opts);
    const opened = await openNoFollow(file);
    if (!opened) throw new Error(`${file} vanished right after it was written`);
    if (opened.stat.size !== size) {
      await closeFd(opened.fd).catch(() => {});
      throw new Error(`${file} has ${opened.stat.size} bytes right after ${size} were written (written over meanwhile?)`);
    }
    return descriptorFile(opened.fd, size, hash.digest('hex'));
  }

  /** The embedding recognizer's descriptors and names, in one file (so one atomic write); returns its bytes. */
  async saveEmbedding(model: EmbeddingModel, labelIds: Record<string, number>, trainedAt: string): Promise<Uint8Array> {
    const bytes = new TextEncoder().encode(encodeEmbeddingsFile(model, labelIds, trainedAt));
    await writeFileAtomic(path.join(this.dir, EMBEDDINGS_FILE), bytes);
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
          await fs.rm(path.join(this.dir, TRAINING_FILE), { force: true });
          await fs.rm(path.join(this.dir, LABELS_FILE), { force: true });
        } else {
          const mtime = new Date(lbph.trainedAt);
          await this.writeLbph(out.model, out.labelIds, { mtime });
          await writeFileAtomic(path.join(this.dir, LABELS_FILE), encodeLabelMapPickle(out.labelIds), { mtime });
        }
      }
    }
    const embedding = await this.loadEmbedding();
    if (embedding) {
      const out = embeddingWithout(embedding.model, embedding.labelIds, label);
      removed.embedding = out.removed;
      if (out.removed > 0 || Object.keys(out.labelIds).length < Object.keys(embedding.labelIds).length) {
        if (out.model.labels.length === 0) await fs.rm(path.join(this.dir, EMBEDDINGS_FILE), { force: true });
        else await this.saveEmbedding(out.model, out.labelIds, embedding.trainedAt);
      }
    }
    return removed;
  }

  /** The saved embedding model, or null when none was trained; throws with a clear message when unusable. */
  async loadEmbedding(): Promise<StoredEmbedding | null> {
    const found = await this.readText(EMBEDDINGS_FILE);
    if (!found) return null;
    const { model, labelIds, createdAt } = decodeEmbeddingsFile(found.text);
    return { model, labelIds, trainedAt: createdAt ?? found.modified, bytes: found.bytes };
  }

  /**
   * Loads the model, or null when none was trained. A model written by OpenCV (no labelsInfo) takes its names
   * from model.pickle. Throws with a clear message when the files exist but cannot be used.
   */
  async loadLbph(): Promise<StoredLbph | null> {
    // Read in pieces from one open file, which the result keeps (the bytes it was read from, for downloads).
    const opened = await openNoFollow(path.join(this.dir, TRAINING_FILE));
    if (!opened) return null;
    const { fd, stat } = opened;
    try {
      // Read beside the YAML even when its labelsInfo has the names: it is part of the downloadable model set.
      const pickle = await readFileNoFollow(path.join(this.dir, LABELS_FILE)).then(
        (b) => new Uint8Array(b),
        () => null,
      );
      const hash = createHash('sha256');
      const pieces = async function* () {
        for await (const piece of readChunks(fd, stat.size)) {
          hash.update(piece);
          yield piece;
        }
      };
      const { model, labelIds } = await decodeLbphStream(pieces(), pickle);
      const lbph = descriptorFile(fd, stat.size, hash.digest('hex'));
      return { model, labelIds, trainedAt: stat.mtime.toISOString(), files: { lbph, labelMap: pickle } };
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
