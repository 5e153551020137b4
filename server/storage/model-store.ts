/**
 * The trained LBPH model on disk, as the original service wrote it: `training.yml` (OpenCV FileStorage YAML,
 * readable by `cv2.face.LBPHFaceRecognizer.read`) and `model.pickle` (a Python pickle of the dict label name
 * -> integer id). Both are written atomically. The label names are also kept in the YAML's `labelsInfo`
 * (OpenCV's own slot for them), so a crash between the two renames leaves a self-consistent `training.yml`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { EmbeddingModel } from '../../shared/embedding/matcher.js';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import { encodeLabelMapPickle } from '../../shared/lbph/pickle.js';
import { embeddingWithout, lbphWithout } from '../../shared/recognition/forget-label.js';
import { decodeEmbeddingsFile, decodeLbphFile, encodeEmbeddingsFile, encodeLbphFile } from '../../shared/recognition/model-files.js';
import { removeStaleTemps, writeFileAtomic } from './atomic.js';
import { FileLock, type HeldLock, LockBusyError } from './file-lock.js';
import { readFileAndStatNoFollow, readFileNoFollow } from './no-follow.js';

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
  /** training.yml and model.pickle (null when absent) as read. */
  files: { lbph: Uint8Array; labelMap: Uint8Array | null };
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

  /** Writes training.yml and model.pickle; returns the exact bytes written (what a browser downloads). */
  async saveLbph(model: LbphModel, labelIds: Record<string, number>): Promise<{ yaml: Uint8Array; pickle: Uint8Array }> {
    const yaml = new TextEncoder().encode(encodeLbphFile(model, labelIds));
    const pickle = encodeLabelMapPickle(labelIds);
    // YAML first: it carries the names too, so it is complete on its own if the pickle's rename never happens.
    await writeFileAtomic(path.join(this.dir, TRAINING_FILE), yaml);
    await writeFileAtomic(path.join(this.dir, LABELS_FILE), pickle);
    return { yaml, pickle };
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
          const yaml = new TextEncoder().encode(encodeLbphFile(out.model, out.labelIds));
          await writeFileAtomic(path.join(this.dir, TRAINING_FILE), yaml, { mtime });
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
    const found = await this.readText(TRAINING_FILE);
    if (!found) return null;
    // Read beside the YAML even when its labelsInfo has the names: it is part of the downloadable model set.
    const pickle = await readFileNoFollow(path.join(this.dir, LABELS_FILE)).then(
      (b) => new Uint8Array(b),
      () => null,
    );
    const { model, labelIds } = decodeLbphFile(found.text, pickle);
    return { model, labelIds, trainedAt: found.modified, files: { lbph: found.bytes, labelMap: pickle } };
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
