/**
 * The trained model files as one immutable snapshot, for browsers to download (GET /api/models/trained).
 * The snapshot holds the exact bytes that were written (after a training) or read (at start-up), so every
 * download of one version comes from one read and never mixes the files of two trainings. Its version is a
 * content hash: the same files give the same version across restarts, and new files a new version.
 */
import { createHash } from 'node:crypto';
import { EMBEDDINGS_FILE, LABELS_FILE, TRAINING_FILE } from './model-store.js';

export interface TrainedFiles {
  /** training.yml: OpenCV FileStorage YAML with the label names in labelsInfo. */
  lbph: Uint8Array | null;
  /** model.pickle: the label name -> id map as the original service wrote it. */
  labelMap: Uint8Array | null;
  /** embeddings.json. */
  embedding: Uint8Array | null;
}

export interface TrainedSnapshot {
  /** sha256 over the files, first 16 hex digits; null when nothing is trained. */
  version: string | null;
  trainedAt: string | null;
  /** Every label name either model knows, sorted. */
  labels: string[];
  files: TrainedFiles;
}

export const EMPTY_SNAPSHOT: TrainedSnapshot = Object.freeze({
  version: null,
  trainedAt: null,
  labels: [],
  files: Object.freeze({ lbph: null, labelMap: null, embedding: null }),
});

/**
 * The content version of a set of model files. Each file contributes its name, its length and its bytes
 * (an absent file a distinct marker), so no two different sets hash alike by shifting bytes between files.
 */
export function modelVersion(files: TrainedFiles): string | null {
  if (!files.lbph && !files.embedding) return null;
  const hash = createHash('sha256');
  for (const [name, bytes] of [
    [TRAINING_FILE, files.lbph],
    [LABELS_FILE, files.labelMap],
    [EMBEDDINGS_FILE, files.embedding],
  ] as const) {
    hash.update(bytes ? `${name}:${bytes.length}\n` : `${name}:absent\n`);
    if (bytes) hash.update(bytes);
  }
  return hash.digest('hex').slice(0, 16);
}

export function makeSnapshot(files: TrainedFiles, labels: Iterable<string>, trainedAt: (string | null | undefined)[]): TrainedSnapshot {
  const version = modelVersion(files);
  if (version === null) return EMPTY_SNAPSHOT;
  const times = trainedAt.filter((t): t is string => typeof t === 'string').sort();
  return Object.freeze({
    version,
    trainedAt: times.at(-1) ?? null,
    labels: [...new Set(labels)].sort(),
    files: Object.freeze({ ...files }),
  });
}
