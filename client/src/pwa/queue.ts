/**
 * The offline queues, in IndexedDB (through idb) so they survive a reload, a crash or a power cut: training
 * images waiting for `POST /api/images`, and recognition/detection results waiting for `POST /api/results`.
 * Each keeps the order things were made in (an auto-increment key); an item is removed only once the server
 * has answered for it (sync.ts), and every item carries the id the server deduplicates on, so sending one
 * twice stores it once. The database, its stores and indexes are as they were before idb (e2e/offline.spec.ts
 * writes to them directly), so queues kept by an older version of the app are still sent.
 */
import { openDB, type DBSchema, type IDBPDatabase, type IDBPObjectStore } from 'idb';
import type { ResultRecordInput } from '../../../shared/api/index';

/** What a training photo carries besides its label: kept with it in the queue, so a photo sent later says the same. */
export interface CaptureDetails {
  /** The name as the person typed it ("Marie Curie"); the label is its stable identifier. */
  display_name?: string;
  /** The photo's own file name (`brick.png`), or a made-up one for a camera photo. */
  original_name?: string;
  /** The face picked in a photo with several, in the photo's pixels. */
  face?: { x: number; y: number; w: number; h: number };
}

export interface PendingCapture extends CaptureDetails {
  /** Queue order (assigned by IndexedDB). */
  seq?: number;
  /** The upload's idempotency key (`capture_id`). */
  capture_id: string;
  /** The label, already normalised as the server does. */
  label: string;
  blob: Blob;
  /** When it was captured (ms since the epoch). */
  created: number;
}

export interface PendingResult {
  seq?: number;
  /** The record's own id (also inside `record`): the server's dedup key and this store's unique index. */
  id: string;
  record: ResultRecordInput;
  created: number;
}

interface OfflineDb extends DBSchema {
  captures: { key: number; value: PendingCapture; indexes: { capture_id: string } };
  results: { key: number; value: PendingResult; indexes: { id: string } };
}

const DB_NAME = 'lookout-offline';
const DB_VERSION = 1;
export const CAPTURES = 'captures';
export const RESULTS = 'results';
type StoreName = typeof CAPTURES | typeof RESULTS;
type Store<S extends StoreName, M extends IDBTransactionMode> = IDBPObjectStore<OfflineDb, [S], S, M>;

/** Results waiting beyond this are dropped oldest first: a kiosk offline for days must not fill the disk. */
export const MAX_PENDING_RESULTS = 5000;

let opening: Promise<IDBPDatabase<OfflineDb>> | null = null;

function openDb(): Promise<IDBPDatabase<OfflineDb>> {
  if (opening) return opening;
  const forget = () => (opening = null);
  opening = new Promise<IDBPDatabase<OfflineDb>>((resolve, reject) => {
    if (typeof indexedDB === 'undefined') return reject(new Error('this browser cannot store data offline (no IndexedDB)'));
    openDB<OfflineDb>(DB_NAME, DB_VERSION, {
      upgrade(db) {
        if (!db.objectStoreNames.contains(CAPTURES)) {
          db.createObjectStore(CAPTURES, { keyPath: 'seq', autoIncrement: true }).createIndex('capture_id', 'capture_id', { unique: true });
        }
        if (!db.objectStoreNames.contains(RESULTS)) {
          db.createObjectStore(RESULTS, { keyPath: 'seq', autoIncrement: true }).createIndex('id', 'id', { unique: true });
        }
      },
      blocked: () => reject(new Error('the offline store is in use by an older Lookout tab; close it and reload')),
      // A newer version of the app (another tab) wants to upgrade: let it, and reopen on next use.
      blocking() {
        void opening?.then((db) => db.close());
        forget();
      },
      terminated: forget,
    }).then(resolve, (err: unknown) => reject(err ?? new Error('the offline store could not be opened')));
  });
  opening.catch(forget);
  return opening;
}

/**
 * Runs `fn` in one transaction on `store` and resolves with its value once the transaction has committed.
 * Writes ask for strict durability: "queued" must mean on disk, not in a cache the OS may lose on a power cut.
 */
async function inTransaction<S extends StoreName, M extends IDBTransactionMode, T>(
  store: S,
  mode: M,
  fn: (s: Store<S, M>) => Promise<T>,
): Promise<T> {
  const db = await openDb();
  const tx = db.transaction(store, mode, mode === 'readwrite' ? { durability: 'strict' } : undefined);
  const committed = tx.done;
  committed.catch(() => undefined); // awaited below; when fn fails, its error is the one to report
  try {
    const value = await fn(tx.objectStore(store) as Store<S, M>);
    await committed;
    return value;
  } catch (err) {
    try {
      tx.abort();
    } catch {
      // already finished
    }
    throw err;
  }
}

function isConstraintError(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'ConstraintError';
}

/** Turns IndexedDB's failures into a sentence a person can act on. */
export function storageProblem(err: unknown): string {
  if ((err as { name?: unknown } | null)?.name === 'QuotaExceededError') return 'this device has no room left to keep it offline';
  return err instanceof Error ? err.message : String(err);
}

export const queue = {
  /** Adds a capture; one already queued with the same capture_id is left as it is. */
  async addCapture(item: Omit<PendingCapture, 'seq'>): Promise<void> {
    try {
      await inTransaction(CAPTURES, 'readwrite', (s) => s.add(item));
    } catch (err) {
      if (!isConstraintError(err)) throw err;
    }
  },
  /** The next `limit` captures after queue position `seq` (0: from the start), in queue order. */
  capturesAfter: (seq: number, limit: number) =>
    inTransaction(CAPTURES, 'readonly', (s) => s.getAll(IDBKeyRange.lowerBound(seq, true), limit)),
  removeCapture: (seq: number) => inTransaction(CAPTURES, 'readwrite', (s) => s.delete(seq)),
  countCaptures: () => inTransaction(CAPTURES, 'readonly', (s) => s.count()),
  /** The labels of the captures waiting (results naming them wait for them: drain.ts). */
  async captureLabels(): Promise<Set<string>> {
    const labels = new Set<string>();
    await inTransaction(CAPTURES, 'readonly', async (s) => {
      for (let c = await s.openCursor(); c; c = await c.continue()) labels.add(c.value.label);
    });
    return labels;
  },

  /** Adds a result (a repeated id is ignored); beyond MAX_PENDING_RESULTS the oldest go. Returns how many were dropped. */
  async addResult(record: ResultRecordInput): Promise<number> {
    try {
      return await inTransaction(RESULTS, 'readwrite', async (s) => {
        await s.add({ id: record.id, record, created: Date.now() });
        const extra = (await s.count()) - MAX_PENDING_RESULTS;
        if (extra <= 0) return 0;
        const keys = await s.getAllKeys(null, extra);
        await Promise.all(keys.map((k) => s.delete(k)));
        return keys.length;
      });
    } catch (err) {
      if (isConstraintError(err)) return 0;
      throw err;
    }
  },
  /** The oldest `limit` results, in queue order. */
  oldestResults: (limit: number) => inTransaction(RESULTS, 'readonly', (s) => s.getAll(null, limit)),
  /** The next `limit` results after queue position `seq` (0: from the start), in queue order. */
  resultsAfter: (seq: number, limit: number) =>
    inTransaction(RESULTS, 'readonly', (s) => s.getAll(IDBKeyRange.lowerBound(seq, true), limit)),
  removeResults: (seqs: number[]) =>
    inTransaction(RESULTS, 'readwrite', async (s) => {
      await Promise.all(seqs.map((k) => s.delete(k)));
    }),
  countResults: () => inTransaction(RESULTS, 'readonly', (s) => s.count()),

  /** Closes the connection (the next call opens it again): for tests, and for a page about to go. */
  async close(): Promise<void> {
    const db = await opening?.catch(() => null);
    opening = null;
    db?.close();
  },
};
