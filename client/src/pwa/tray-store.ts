/**
 * The Training page's photos that are checked but not saved yet, kept in IndexedDB (through idb, as the offline
 * queue in queue.ts) until they are saved or removed: closing the browser, a crash or a reload lost them (#36).
 * Its own database, so the offline queue's layout (which e2e/offline.spec.ts writes to directly) stays as it is.
 * Photos of faces are biometric data: dropped at sign-out (auth/session.ts), like the trained model's copy.
 */
import { type DBSchema, deleteDB, type IDBPDatabase, openDB } from 'idb';

/** What a kept photo needs to come back as it was: the picture, its person, its source and the person's decisions. */
export interface KeptPhoto {
  /** A key of its own, stable across reloads. */
  key: string;
  blob: Blob;
  source: 'camera' | 'file';
  originalName: string;
  name?: string;
  label?: string;
  face?: { x: number; y: number; w: number; h: number };
  keepAnyway?: boolean;
  /** When it was added (ms since the epoch): the order it comes back in. */
  created: number;
}

/** Where the tray keeps its photos (an IndexedDB store in the browser; a map in unit tests). */
export interface TrayKeeper {
  all(): Promise<KeptPhoto[]>;
  put(photo: KeptPhoto): Promise<void>;
  remove(key: string): Promise<void>;
}

interface TrayDb extends DBSchema {
  photos: { key: string; value: KeptPhoto };
}

const DB_NAME = 'lookout-tray';
const STORE = 'photos';

let opening: Promise<IDBPDatabase<TrayDb>> | null = null;

function openTray(): Promise<IDBPDatabase<TrayDb>> {
  if (typeof indexedDB === 'undefined') return Promise.reject(new Error('no IndexedDB'));
  opening ??= openDB<TrayDb>(DB_NAME, 1, {
    upgrade(db) {
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: 'key' });
    },
    blocking() {
      void opening?.then((db) => db.close());
      opening = null;
    },
    terminated() {
      opening = null;
    },
  });
  opening.catch(() => {
    opening = null;
  });
  return opening;
}

/**
 * The browser's keeper. Keeping is a convenience: a browser without IndexedDB (or with no room left) still takes
 * photos and saves them, it only cannot bring them back after a reload; so failures are not the page's errors.
 */
export const trayStore: TrayKeeper = {
  async all() {
    try {
      const photos = await (await openTray()).getAll(STORE);
      return photos.sort((a, b) => a.created - b.created);
    } catch {
      return [];
    }
  },
  async put(photo) {
    try {
      await (await openTray()).put(STORE, photo);
    } catch {
      // not kept: see above
    }
  },
  async remove(key) {
    try {
      await (await openTray()).delete(STORE, key);
    } catch {
      // nothing kept to remove
    }
  },
};

/** Forgets every kept photo (sign-out). */
export async function clearTray(): Promise<void> {
  if (typeof indexedDB === 'undefined') return;
  const db = await opening?.catch(() => null);
  db?.close();
  opening = null;
  await deleteDB(DB_NAME);
}
