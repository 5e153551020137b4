/**
 * The embedded database's own process (the other end is pglite-driver.ts). PGlite is PostgreSQL compiled to
 * WebAssembly and runs synchronously on whatever thread holds it: on the server's main thread its first open
 * (initdb, seconds) and its long queries stopped every request and timer. Here they stop only this process.
 *
 * A child process rather than a worker thread (#38), because V8's options are per process: this one runs with
 * `--liftoff-only` (WebAssembly compiled once by V8's baseline compiler, never optimised). Optimising PGlite's
 * 9 MB module took the server to a 0.8-1.0 GB peak at every start and kept about 50 MB of optimised code; with the
 * baseline compiler alone the database peaks and idles about 50 MB lower, and its short statements are as fast
 * (bench/RESULTS.md, "Footprint by component"). The server's other WebAssembly (tfjs in the embedding worker)
 * keeps the optimising compiler.
 *
 * One PGlite, one statement at a time: PGlite's own lock orders the requests, and a transaction holds it from
 * BEGIN to its end, so statements outside it wait (as they did on the main thread). The process ends when the
 * server that started it goes away (its IPC channel closes), so a killed server leaves no database behind.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { unpackSeed } from './pglite-seed.js';

/** What the driver asks. `tx` names a transaction begun by `begin` (its statements go to it, not after it). */
export type DbRequest =
  | { id: number; op: 'query'; sql: string; params: readonly unknown[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

/** An error as it crosses processes: structured clone keeps only message and stack, so PostgreSQL's fields travel by name. */
export interface DbErrorData {
  name: string;
  message: string;
  fields: Record<string, string | number>;
}

export type DbReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: DbErrorData };

/** The first message: the database is open (`seeded`: a new one unpacked from the seed), or why it could not be. */
export type DbReady = { ready: true; seeded: boolean } | { ready: false; error: DbErrorData };

/** How the driver starts this process: its settings, as JSON in the environment variable DB_PROCESS_DATA. */
export const DB_PROCESS_DATA = 'LOOKOUT_DB_PROCESS_DATA';

export interface DbProcessData {
  dir: string;
  /** PostgreSQL's shared_buffers in MB (`EMBEDDED_DB_BUFFERS_MB`). */
  buffersMb: number;
  /** The seed a new database is unpacked from (pglite-seed.ts); null: initdb. */
  seed: string | null;
}

/**
 * PGlite's own start parameters and a bound on memory. shared_buffers is PostgreSQL's page cache, 128 MB by
 * default, all of it touched at start in WebAssembly: 16 MB took the thread's idle memory from 332 to 181 MB (8 and
 * 32 MB measured the same within the noise). Reads past it come from the files, which the OS caches. Durability is
 * PGlite's as before (its defaults, `-F` included, are kept whole).
 */
export function startParams(buffersMb: number): string[] {
  return [...PGlite.defaultStartParams, '-c', `shared_buffers=${buffersMb}MB`];
}

/** PostgreSQL's error fields (pg-protocol's DatabaseError, which PGlite and pg both throw), plus the statement. */
const ERROR_FIELDS = [
  'code',
  'severity',
  'detail',
  'hint',
  'position',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'routine',
  'query',
] as const;

export function toErrorData(err: unknown): DbErrorData {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, string | number> = {};
  const record = err as unknown as Record<string, unknown>;
  for (const key of ERROR_FIELDS) {
    const value = record[key];
    if (typeof value === 'string' || typeof value === 'number') fields[key] = value;
  }
  return { name: err.name, message: err.message, fields };
}

/** Thrown into PGlite's transaction callback to make it roll back (the caller's own error stays on its side). */
const ROLLBACK = Symbol('rollback');

interface OpenTx {
  tx: Transaction;
  finish(commit: boolean): void;
  /** PGlite's transaction promise: settles after COMMIT or ROLLBACK ran. */
  done: Promise<unknown>;
}

/** The driver's end: this process's IPC channel (advanced serialization: structured clone, as between threads). */
interface Port {
  postMessage(msg: DbReply | DbReady): void;
  on(event: 'message', listener: (req: DbRequest) => void): void;
}

async function main(port: Port, data: DbProcessData): Promise<void> {
  let db: PGlite;
  let seeded = false;
  try {
    // A new database is the prepared folder unpacked (pglite-seed.ts), not initdb, when the build made one.
    if (!existsSync(path.join(data.dir, 'PG_VERSION'))) seeded = data.seed !== null && (await unpackSeed(data.dir, data.seed));
    db = await PGlite.create(data.dir, { startParams: startParams(data.buffersMb) });
  } catch (err) {
    port.postMessage({ ready: false, error: toErrorData(err) } satisfies DbReady);
    return;
  }
  const txs = new Map<number, OpenTx>();
  let nextTx = 1;

  const target = (tx: number | undefined) => {
    if (tx === undefined) return db;
    const open = txs.get(tx);
    if (!open) throw new Error('the transaction has already ended');
    return open.tx;
  };

  const begin = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const id = nextTx++;
      let begun = false;
      const done = db.transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            begun = true;
            txs.set(id, { tx, finish: (ok) => (ok ? commit() : rollback(ROLLBACK)), done });
            resolve(id);
          }),
      );
      // BEGIN itself failed: the callback never ran.
      done.catch((err) => {
        if (!begun) reject(err);
      });
    });

  const end = async (id: number, commit: boolean): Promise<void> => {
    const open = txs.get(id);
    if (!open) throw new Error('the transaction has already ended');
    txs.delete(id);
    open.finish(commit);
    try {
      await open.done;
    } catch (err) {
      if (err !== ROLLBACK) throw err;
    }
  };

  const handle = async (req: DbRequest): Promise<unknown> => {
    switch (req.op) {
      case 'query':
        return (await target(req.tx).query(req.sql, req.params as unknown[])).rows;
      case 'exec':
        await target(req.tx).exec(req.sql);
        return undefined;
      case 'begin':
        return begin();
      case 'end':
        return end(req.tx, req.commit);
      case 'close':
        // The driver ends this process once it has the answer.
        await db.close();
        return undefined;
    }
  };

  port.on('message', (req: DbRequest) => {
    handle(req).then(
      (result) => port.postMessage({ id: req.id, ok: true, result } satisfies DbReply),
      (err) => port.postMessage({ id: req.id, ok: false, error: toErrorData(err) } satisfies DbReply),
    );
  });
  port.postMessage({ ready: true, seeded } satisfies DbReady);
}

const settings = process.env[DB_PROCESS_DATA];
if (process.send && settings) {
  // The server went away (ended, or killed): nothing is left to answer to.
  process.on('disconnect', () => process.exit(0));
  const send = process.send.bind(process);
  void main(
    {
      postMessage: (msg) => {
        send(msg);
      },
      on: (event, listener) => {
        process.on(event, listener as (msg: unknown) => void);
      },
    },
    JSON.parse(settings) as DbProcessData,
  );
}
