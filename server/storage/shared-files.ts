/**
 * The seam between the file stores (images, features, models, settings, sighting crops, corrections) and where
 * their state is shared (#37). Every store keeps its files in DATA_DIR and tells this seam what it changed:
 *
 * - `local` (the embedded default, one process): DATA_DIR is the state. The hooks do nothing; locks are files
 *   beside the data (file-lock.ts), as they always were.
 * - `postgresql` (`DATABASE_URL`, replicas): PostgreSQL is the state and DATA_DIR a cache that may start empty
 *   (server/storage/replication/pg-shared-files.ts). A write is in the database before the hook returns (so an
 *   acknowledged upload survives the replica's disk); every other replica hears of it by LISTEN/NOTIFY and copies
 *   it into its own DATA_DIR; locks are PostgreSQL session advisory locks (a crashed replica's lock ends with its
 *   connection) and taking one first brings this replica's copy up to date (a read-modify-write under a lock never
 *   works on a stale file).
 *
 * Stores call `wrote` after a file is in place, `removed` after a file or folder is gone and `moved` after a
 * rename; a hook that throws (StateUnavailableError: the database is away) means the change is not shared, and
 * the store undoes its local step and answers 503 `storage_unavailable`.
 */
import path from 'node:path';
import { FileLock, type FileLockOptions, type HeldLock } from './file-lock.js';

/** A lock over every process that shares the state: what FileLock offers, whatever holds it. */
export interface ClusterLock {
  /** Takes the lock, or throws LockBusyError when another process holds it. */
  acquire(): Promise<HeldLock>;
  /** Waits until the lock is free, at most `timeoutMs`, then throws LockBusyError. */
  acquireWithin(timeoutMs: number, retryMs?: number): Promise<HeldLock>;
  /** Runs `work` holding the lock, waiting for it at most `timeoutMs`. */
  run<T>(work: () => Promise<T>, timeoutMs?: number): Promise<T>;
}

export type SharedFilesKind = 'local' | 'postgresql';

export interface SharedFiles {
  readonly kind: SharedFilesKind;
  /** DATA_DIR, absolute: paths given to the hooks lie under it. */
  readonly dataDir: string;
  /**
   * The lock a file at `lockFile` (absolute, under DATA_DIR) used to be: that file in `local`; in `postgresql` an
   * advisory lock named by the path relative to DATA_DIR, taken after this replica's copy is brought up to date.
   */
  lock(lockFile: string, opts?: FileLockOptions): ClusterLock;
  /** After the file `file` (absolute) was put in place. Resolves once every replica can get it. */
  wrote(file: string): Promise<void>;
  /** After the file or folder `target` (absolute) was removed, with everything under it. */
  removed(target: string): Promise<void>;
  /** After the file or folder `from` was renamed to `to` (both absolute, under DATA_DIR). */
  moved(from: string, to: string): Promise<void>;
  /** Whether this process's copy follows the shared state now (readiness); absent: always (one process's files). */
  inSync?(): boolean;
}

/** The shared state cannot be reached (a database that is away): the change was not made. Answered 503. */
export class StateUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StateUnavailableError';
  }
}

/**
 * Which files are shared state, as DATA_DIR-relative paths with '/' separators: the stores' folders, minus
 * temporary names (a leading dot: `.tmp-`, folders being deleted, lock files). Everything else in DATA_DIR (the
 * embedded database, results spooled before the database opened, the PPE dead letters, the processor's state)
 * belongs to one process.
 */
export const SHARED_ROOTS: readonly string[] = ['images', 'features', 'models', 'settings', 'sightings', 'corrections.version'];

/**
 * Files each process writes for itself from shared ones: training.yml (OpenCV's form of training.lbph, about 1.2 GB
 * at 10,000 faces: written from training.lbph by each replica that loads it, off the request path) and its note
 * (which records the local file's inode). Shared, a replica would take the copy's other inode for an OpenCV model
 * put in place by hand, and every training would push the YAML through the database (about 29 MB/s measured).
 */
const DERIVED = new Set(['models/training.yml', 'models/training.yml.source']);

/** `file` relative to `dataDir` with '/' separators when it is shared state; null otherwise. */
export function sharedPath(dataDir: string, file: string): string | null {
  const rel = path.relative(dataDir, file);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  if (!SHARED_ROOTS.includes(parts[0])) return null;
  if (parts.some((p) => p.startsWith('.'))) return null;
  const shared = parts.join('/');
  return DERIVED.has(shared) ? null : shared;
}

/** The embedded default: one process, DATA_DIR is the state, nothing to tell anyone. */
export class LocalFiles implements SharedFiles {
  readonly kind = 'local' as const;
  readonly dataDir: string;

  constructor(dataDir: string) {
    this.dataDir = path.resolve(dataDir);
  }

  lock(lockFile: string, opts?: FileLockOptions): ClusterLock {
    return new FileLock(lockFile, opts);
  }

  async wrote(): Promise<void> {}
  async removed(): Promise<void> {}
  async moved(): Promise<void> {}
}
