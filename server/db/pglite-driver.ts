/**
 * The embedded database: PGlite (PostgreSQL 17 compiled to WebAssembly) in a folder of DATA_DIR. One process
 * only: a lock file (server/storage/file-lock.ts) is held while it is open, and a second process is refused with
 * the reason (replicas share a PostgreSQL server through DATABASE_URL instead).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { FileLock, type HeldLock, LockBusyError } from '../storage/file-lock.js';
import type { Driver, Queryable } from './database.js';

const LOCK_FILE = '.lookout-db.lock';

function wrap(q: Pick<PGlite, 'query' | 'exec'>): Queryable {
  return {
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return (await q.query<Row>(sql, params as unknown[])).rows;
    },
    async exec(sql: string) {
      await q.exec(sql);
    },
  };
}

export async function openPglite(dir: string): Promise<Driver> {
  await fs.mkdir(dir, { recursive: true });
  let held: HeldLock;
  try {
    held = await new FileLock(path.join(path.dirname(dir), LOCK_FILE), { staleMs: 30_000 }).acquire();
  } catch (err) {
    if (err instanceof LockBusyError) {
      const who = err.owner ? ` (pid ${err.owner.pid} on ${err.owner.host})` : '';
      throw new Error(
        `the embedded database in ${dir} is open in another process${who}: replicas on one DATA_DIR must share a PostgreSQL server (DATABASE_URL)`,
      );
    }
    throw err;
  }
  let db: PGlite;
  try {
    db = await PGlite.create(dir);
  } catch (err) {
    await held.release();
    throw err;
  }
  // PGlite runs one statement at a time; a transaction holds it until it ends.
  return {
    ...wrap(db),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    async close() {
      try {
        await db.close();
      } finally {
        await held.release();
      }
    },
  };
}
