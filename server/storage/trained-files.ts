/**
 * The trained model files as one immutable snapshot, for browsers to download (GET /api/models/trained).
 * Every download of one version reads the same bytes and never mixes the files of two trainings: training.yml
 * (about 118 KB per face, 1.2 GB at 10,000 faces) is held as an open file of the inode that was written or read
 * (a later training renames a new file over the name; this one stays readable through its descriptor), and
 * streamed from there; the small files are held as bytes. Its version is a content hash: the same files give the
 * same version across restarts, and new files a new version.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { promisify } from 'node:util';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import type { LabelIds } from '../../shared/recognition/model-files.js';
import { EMBEDDINGS_FILE, LABELS_FILE, LBPH_SOURCE_FILE, type SourceId, TRAINING_FILE } from './model-store.js';

/** A model file's bytes as one unit: their size and sha256, readable in pieces or whole. */
export interface ModelFile {
  readonly size: number;
  /** Hex sha256 of the bytes. */
  readonly sha256: string;
  /** The bytes in pieces of at most 1 MiB (each a new buffer, the caller's to keep). */
  chunks(): AsyncGenerator<Uint8Array, void, undefined>;
  /** All the bytes in one buffer, read now (a large file costs its size in memory while it is used). */
  bytesSync(): Uint8Array;
}

const PIECE = 1 << 20;

/** A model file held as bytes (small files, tests). */
export function memoryFile(bytes: Uint8Array): ModelFile {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return {
    size: bytes.length,
    sha256,
    async *chunks() {
      for (let at = 0; at < bytes.length; at += PIECE) yield bytes.slice(at, at + PIECE);
    },
    bytesSync: () => bytes,
  };
}

const read = promisify(fs.read);

/** The first `size` bytes of an open file in pieces, by position (so readers of one descriptor never interfere). */
export async function* readChunks(fd: number, size: number): AsyncGenerator<Uint8Array, void, undefined> {
  for (let at = 0; at < size; ) {
    const buf = Buffer.allocUnsafe(Math.min(PIECE, size - at));
    const { bytesRead } = await read(fd, buf, 0, buf.length, at);
    if (bytesRead === 0) throw new Error(`model file: ${size - at} bytes missing at offset ${at} (truncated?)`);
    at += bytesRead;
    yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
  }
}
/** Closes the descriptor of a file nobody can read any more (an older snapshot's, once it is collected). */
const descriptors = new FinalizationRegistry<number>((fd) => fs.close(fd, () => {}));

/**
 * A model file as an open descriptor: the bytes of that inode, whatever is renamed over its name later. The
 * descriptor closes when the object is garbage-collected (a download in progress holds it), so an old snapshot's
 * file lasts exactly as long as something still reads it. `size` and `sha256` are the caller's, from the pass that
 * wrote or read the bytes.
 */
export function descriptorFile(fd: number, size: number, sha256: string): ModelFile {
  const file: ModelFile = {
    size,
    sha256,
    chunks: () => readChunks(fd, size),
    bytesSync() {
      const buf = Buffer.allocUnsafe(size);
      for (let at = 0; at < size; ) {
        const n = fs.readSync(fd, buf, at, size - at, at);
        if (n === 0) throw new Error(`model file: ${size - at} bytes missing at offset ${at} (truncated?)`);
        at += n;
      }
      return buf;
    },
  };
  descriptors.register(file, fd);
  return file;
}

/** The files a snapshot is made of. */
export interface TrainedFiles {
  /** training.yml: OpenCV FileStorage YAML with the label names in labelsInfo (null while it is being written). */
  lbph: ModelFile | Uint8Array | null;
  /**
   * training.lbph, when the LBPH model was saved as one: the version follows it instead of training.yml, so a
   * training's snapshot has its version before training.yml is written, and keeps it once it is.
   */
  lbphSource?: SourceId | null;
  /** model.pickle: the label name -> id map as the original service wrote it. */
  labelMap: Uint8Array | null;
  /** embeddings.json. */
  embedding: Uint8Array | null;
}

/** A snapshot's files as bytes. */
export interface SnapshotFiles {
  /**
   * training.yml's bytes, read from its file on each use (a recent read is reused while it is still in memory):
   * the snapshot does not hold them. A large model is better streamed from TrainedSnapshot.lbphFile.
   */
  readonly lbph: Uint8Array | null;
  readonly labelMap: Uint8Array | null;
  readonly embedding: Uint8Array | null;
}

export interface TrainedSnapshot {
  /** sha256 over the files, first 16 hex digits; null when nothing is trained. */
  version: string | null;
  trainedAt: string | null;
  /** Every label name either model knows, sorted. */
  labels: string[];
  files: SnapshotFiles;
  /** training.yml, to stream (its `size` is the download's length). */
  lbphFile: ModelFile | null;
  /**
   * The model training.yml holds, as the server holds it in memory (the one it installed), when it does: what is
   * derived from the model (the compact browser segments, the kiosk gallery) is made from it, not by reading
   * the file again (13 s at 1,000 people).
   */
  lbphModel?: LbphSource | null;
  /**
   * Present while this version's training.yml is still being written (lbphFile is null meanwhile): settles when
   * it is written or given up; the service then publishes this version with lbphFile (or a newer one).
   */
  written?: Promise<unknown>;
}

/** An LBPH model with its label map. */
export interface LbphSource {
  model: LbphModel;
  labelIds: LabelIds;
}

export const EMPTY_SNAPSHOT: TrainedSnapshot = Object.freeze({
  version: null,
  trainedAt: null,
  labels: [],
  files: Object.freeze({ lbph: null, labelMap: null, embedding: null }),
  lbphFile: null,
});

/** training.yml as a ModelFile, whichever form it came in. */
export function asModelFile(file: ModelFile | Uint8Array | null): ModelFile | null {
  return file === null ? null : file instanceof Uint8Array ? memoryFile(file) : file;
}

/** The snapshot's bytes view of its files: training.yml read when asked, and kept only while weakly reachable. */
export function snapshotFiles(lbph: ModelFile | null, labelMap: Uint8Array | null, embedding: Uint8Array | null): SnapshotFiles {
  let recent: WeakRef<Uint8Array> | null = null;
  return Object.freeze({
    get lbph(): Uint8Array | null {
      if (!lbph) return null;
      let bytes = recent?.deref();
      if (!bytes) {
        bytes = lbph.bytesSync();
        recent = new WeakRef(bytes);
      }
      return bytes;
    },
    labelMap,
    embedding,
  });
}

/**
 * The content version of a set of model files. Each file contributes its name, its length and its bytes' sha256
 * (an absent file a distinct marker), so no two different sets hash alike by shifting bytes between files.
 */
export function modelVersion(files: TrainedFiles): string | null {
  if (!files.lbph && !files.lbphSource && !files.embedding) return null;
  const hash = createHash('sha256');
  for (const [name, file] of [
    files.lbphSource ? ([LBPH_SOURCE_FILE, files.lbphSource] as const) : ([TRAINING_FILE, asModelFile(files.lbph)] as const),
    [LABELS_FILE, asModelFile(files.labelMap)],
    [EMBEDDINGS_FILE, asModelFile(files.embedding)],
  ] as const) {
    hash.update(file ? `${name}:${file.size}:${file.sha256}\n` : `${name}:absent\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

export function makeSnapshot(
  files: TrainedFiles,
  labels: Iterable<string>,
  trainedAt: (string | null | undefined)[],
  lbphModel: LbphSource | null = null,
  written?: Promise<unknown>,
): TrainedSnapshot {
  const version = modelVersion(files);
  if (version === null) return EMPTY_SNAPSHOT;
  const times = trainedAt.filter((t): t is string => typeof t === 'string').sort();
  const lbphFile = asModelFile(files.lbph);
  return Object.freeze({
    version,
    trainedAt: times.at(-1) ?? null,
    labels: [...new Set(labels)].sort(),
    files: snapshotFiles(lbphFile, files.labelMap, files.embedding),
    lbphFile,
    lbphModel: lbphFile || files.lbphSource ? lbphModel : null,
    ...(written && !lbphFile ? { written } : {}),
  });
}
