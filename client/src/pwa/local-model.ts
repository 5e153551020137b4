/**
 * The model trained in this browser ("Train in this browser", offline), kept in IndexedDB so it survives a
 * reload and every tab of this origin uses it: model-sync.ts reads it at each check and installs it until
 * the server has a model that replaces it. A database of its own (not the offline queues'): adding a store
 * there would mean a version bump that older open tabs block.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

export interface LocalModel {
  /** Unique per training (`local-<ms>`): what the engine reports as its model version. */
  id: string;
  /** When it was trained (ISO time, this device's clock). */
  trainedAt: string;
  /** The people it knows. */
  labels: string[];
  lbphYaml: string;
  /** Present when the embedding nets were loaded at training; else the engine's embedding model is left as it is. */
  embeddingsJson: string | null;
  /** The server model version the device had when it trained (null: none trained; undefined: never heard from the server). */
  over?: string | null;
}

interface LocalModelDb extends DBSchema {
  model: { key: string; value: LocalModel };
}

const DB_NAME = 'lookout-local-model';
const STORE = 'model';
/** One record: the current in-browser model. */
const KEY = 'current';

let opening: Promise<IDBPDatabase<LocalModelDb>> | null = null;

function openDb(): Promise<IDBPDatabase<LocalModelDb>> {
  if (typeof indexedDB === 'undefined') return Promise.reject(new Error('this browser cannot store data offline (no IndexedDB)'));
  opening ??= openDB<LocalModelDb>(DB_NAME, 1, {
    upgrade(db) {
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE);
    },
    terminated: () => (opening = null),
  }).catch((err: unknown) => {
    opening = null;
    throw err;
  });
  return opening;
}

export interface LocalModelStore {
  get(): Promise<LocalModel | null>;
  put(model: LocalModel): Promise<void>;
  /** Removes it only when it is still `id` (another tab may have trained a newer one meanwhile). */
  clear(id: string): Promise<void>;
}

export const localModelStore: LocalModelStore = {
  async get() {
    return (await (await openDb()).get(STORE, KEY)) ?? null;
  },
  async put(model) {
    const db = await openDb();
    await db.put(STORE, model, KEY);
  },
  async clear(id) {
    const db = await openDb();
    const tx = db.transaction(STORE, 'readwrite');
    if ((await tx.store.get(KEY))?.id === id) await tx.store.delete(KEY);
    await tx.done;
  },
};

/** Closes the connection (tests). */
export async function closeLocalModelDb(): Promise<void> {
  const db = await opening?.catch(() => null);
  opening = null;
  db?.close();
}
