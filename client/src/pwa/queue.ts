/**
 * The offline queues, in IndexedDB so they survive a reload, a crash or a power cut: training images waiting
 * for `POST /api/images`, and recognition/detection results waiting for `POST /api/results`. Each keeps the
 * order things were made in (an auto-increment key); an item is removed only once the server has answered for
 * it (sync.ts), and every item carries the id the server deduplicates on, so sending one twice stores it once.
 */
import type { ResultRecordInput } from '../../../shared/api/index';

export interface PendingCapture {
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

const DB_NAME = 'lookout-offline';
const DB_VERSION = 1;
export const CAPTURES = 'captures';
export const RESULTS = 'results';
type StoreName = typeof CAPTURES | typeof RESULTS;

/** Results waiting beyond this are dropped oldest first: a kiosk offline for days must not fill the disk. */
export const MAX_PENDING_RESULTS = 5000;

let opening: Promise<IDBDatabase> | null = null;

/** The promise of an IDBRequest's result. */
function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function openDb(): Promise<IDBDatabase> {
  if (opening) return opening;
  opening = new Promise<IDBDatabase>((resolve, reject) => {
    if (typeof indexedDB === 'undefined') return reject(new Error('this browser cannot store data offline (no IndexedDB)'));
    const req = indexedDB.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains(CAPTURES)) {
        db.createObjectStore(CAPTURES, { keyPath: 'seq', autoIncrement: true }).createIndex('capture_id', 'capture_id', { unique: true });
      }
      if (!db.objectStoreNames.contains(RESULTS)) {
        db.createObjectStore(RESULTS, { keyPath: 'seq', autoIncrement: true }).createIndex('id', 'id', { unique: true });
      }
    };
    req.onsuccess = () => {
      const db = req.result;
      // A newer version of the app (another tab) wants to upgrade: let it, and reopen on next use.
      db.onversionchange = () => {
        db.close();
        opening = null;
      };
      db.onclose = () => (opening = null);
      resolve(db);
    };
    req.onerror = () => reject(req.error ?? new Error('the offline store could not be opened'));
    req.onblocked = () => reject(new Error('the offline store is in use by an older Lookout tab; close it and reload'));
  });
  opening.catch(() => (opening = null));
  return opening;
}

/**
 * Runs `fn` in one transaction and resolves with its value once the transaction has committed. Writes ask
 * for strict durability: "queued" must mean on disk, not in a cache the OS may lose on a power cut.
 */
async function inTransaction<T>(store: StoreName, mode: IDBTransactionMode, fn: (s: IDBObjectStore) => Promise<T> | T): Promise<T> {
  const db = await openDb();
  const tx = db.transaction(store, mode, mode === 'readwrite' ? { durability: 'strict' } : undefined);
  const committed = new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('the offline store refused the change'));
  });
  let value: T;
  try {
    value = await fn(tx.objectStore(store));
  } catch (err) {
    try {
      tx.abort();
    } catch {
      // already finished
    }
    await committed.catch(() => undefined);
    throw err;
  }
  await committed;
  return value;
}

/** The oldest `limit` items, in queue order. */
function oldest<T>(store: StoreName, limit: number): Promise<T[]> {
  return inTransaction(store, 'readonly', (s) => done(s.getAll(null, limit)) as Promise<T[]>);
}

function isConstraintError(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'ConstraintError';
}

/** Turns IndexedDB's failures into a sentence a person can act on. */
export function storageProblem(err: unknown): string {
  if (err instanceof DOMException && err.name === 'QuotaExceededError') return 'this device has no room left to keep it offline';
  return err instanceof Error ? err.message : String(err);
}

export const queue = {
  /** Adds a capture; one already queued with the same capture_id is left as it is. */
  async addCapture(item: Omit<PendingCapture, 'seq'>): Promise<void> {
    try {
      await inTransaction(CAPTURES, 'readwrite', (s) => done(s.add(item)));
    } catch (err) {
      if (!isConstraintError(err)) throw err;
    }
  },
  /** The next `limit` captures after queue position `seq` (0: from the start), in queue order. */
  capturesAfter: (seq: number, limit: number) =>
    inTransaction(CAPTURES, 'readonly', (s) => done(s.getAll(IDBKeyRange.lowerBound(seq, true), limit)) as Promise<PendingCapture[]>),
  removeCapture: (seq: number) => inTransaction(CAPTURES, 'readwrite', (s) => done(s.delete(seq))),
  countCaptures: () => inTransaction(CAPTURES, 'readonly', (s) => done(s.count())),

  /** Adds a result (a repeated id is ignored); beyond MAX_PENDING_RESULTS the oldest go. Returns how many were dropped. */
  async addResult(record: ResultRecordInput): Promise<number> {
    try {
      return await inTransaction(RESULTS, 'readwrite', async (s) => {
        await done(s.add({ id: record.id, record, created: Date.now() } satisfies PendingResult));
        const extra = (await done(s.count())) - MAX_PENDING_RESULTS;
        if (extra <= 0) return 0;
        const keys = await done(s.getAllKeys(null, extra));
        for (const k of keys) s.delete(k);
        return keys.length;
      });
    } catch (err) {
      if (isConstraintError(err)) return 0;
      throw err;
    }
  },
  oldestResults: (limit: number) => oldest<PendingResult>(RESULTS, limit),
  removeResults: (seqs: number[]) =>
    inTransaction(RESULTS, 'readwrite', async (s) => {
      await Promise.all(seqs.map((k) => done(s.delete(k))));
    }),
  countResults: () => inTransaction(RESULTS, 'readonly', (s) => done(s.count())),
};
