/**
 * The embedded database: PGlite (PostgreSQL 17 compiled to WebAssembly) in a folder of DATA_DIR. One process
 * only: a lock file (server/storage/file-lock.ts) is held while it is open, and a second process is refused with
 * the reason (replicas share a PostgreSQL server through DATABASE_URL instead).
 *
 * PGlite runs in a worker thread (pglite-worker.ts): on this thread its first open stalled the event loop for
 * seconds (initdb), long enough for requests and timers to fail. The lock stays on this thread (its refresh timer
 * must run while the worker is busy). A worker that dies fails the statements it owed, and the next statement
 * starts a new one on the same folder.
 */
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../engines/workers/worker-pool.js';
import { FileLock, type HeldLock, LockBusyError } from '../storage/file-lock.js';
import { privateDir } from '../storage/private-modes.js';
import type { Driver, Queryable } from './database.js';
import { seedPath } from './pglite-seed.js';
import type { DbErrorData, DbReady, DbReply, DbRequest, DbWorkerData } from './pglite-worker.js';

const LOCK_FILE = '.lookout-db.lock';

/** The embedded driver; `worker` is the thread holding PGlite now (null before the first use after a crash). */
export interface EmbeddedDriver extends Driver {
  readonly worker: Worker | null;
  /** Whether this open made a new database from the build's seed (pglite-seed.ts) rather than initdb. */
  readonly seeded: boolean;
}

export interface PgliteOptions {
  /** PostgreSQL's shared_buffers in MB (`EMBEDDED_DB_BUFFERS_MB`). */
  buffersMb?: number;
  /** The seed a new database is unpacked from; absent: the build's (pglite-seed.ts); null: none, initdb (tests). */
  seed?: string | null;
}

/** `EMBEDDED_DB_BUFFERS_MB`'s default (server/config/storage-settings.ts). */
export const DEFAULT_BUFFERS_MB = 16;

/** A worker's error on this thread, with PostgreSQL's fields (code, detail, constraint...) as pg gives them. */
function fromErrorData(data: DbErrorData): Error {
  const err = Object.assign(new Error(data.message), data.fields);
  err.name = data.name;
  return err;
}

type Request = DbRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** One worker thread and the answers it owes. */
class DbThread {
  readonly worker: Worker;
  /** Resolves once PGlite is open in the worker; rejects with why it could not open. */
  readonly ready: Promise<void>;
  /** Whether the worker made a new database from the seed. */
  seeded = false;
  /** Set once the thread has ended: every request after that fails with it. */
  ended: Error | null = null;
  private started = false;
  private stopping: string | null = null;
  private readonly pending = new Map<number, { resolve(result: unknown): void; reject(err: Error): void }>();
  private nextId = 1;

  constructor(dir: string, buffersMb: number, seed: string | null) {
    this.worker = startWorker('../db/pglite-worker', { dir, buffersMb, seed } satisfies DbWorkerData);
    let failure: Error | null = null;
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (msg: DbReply | DbReady) => {
        if ('ready' in msg) {
          if (msg.ready) {
            this.started = true;
            this.seeded = msg.seeded;
            this.updateRef();
            resolve();
          } else reject(fromErrorData(msg.error));
          return;
        }
        const waiting = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        this.updateRef();
        if (!waiting) return;
        if (msg.ok) waiting.resolve(msg.result);
        else waiting.reject(fromErrorData(msg.error));
      });
      this.worker.on('error', (err) => {
        failure = err;
      });
      this.worker.on('exit', (code) => {
        const why = this.stopping
          ? new Error(this.stopping)
          : new Error(
              `the embedded database's worker thread stopped (exit code ${code}${failure ? `: ${failure.message}` : ''}) before it answered: ` +
                'whether this statement took effect is unknown; the next statement opens the database again',
            );
        this.ended = why;
        reject(why);
        for (const waiting of this.pending.values()) waiting.reject(why);
        this.pending.clear();
      });
    });
    this.ready.catch(() => {});
  }

  /**
   * Keeps the process alive only while the worker owes an answer (or is opening): an idle database does not hold
   * a process open, as PGlite on the main thread did not, but a script awaiting a query is not left to exit.
   */
  private updateRef(): void {
    if (this.started && this.pending.size === 0) this.worker.unref();
    else this.worker.ref();
  }

  request(body: Request): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.updateRef();
      this.worker.postMessage({ ...body, id } as DbRequest);
    });
  }

  /** Ends the thread; statements still owed fail with `reason`. */
  async stop(reason: string): Promise<void> {
    this.stopping = reason;
    await this.worker.terminate();
  }
}

export async function openPglite(dir: string, opts: PgliteOptions = {}): Promise<EmbeddedDriver> {
  const buffersMb = opts.buffersMb ?? DEFAULT_BUFFERS_MB;
  const seed = opts.seed === undefined ? seedPath() : opts.seed;
  await privateDir(dir);
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

  let live: DbThread | null = null;
  let closed = false;
  /** The open thread, starting one when there is none or the last one died (callers at that moment share it). */
  const use = async (): Promise<DbThread> => {
    if (closed) throw new Error('the database is closed');
    if (!live || live.ended) live = new DbThread(dir, buffersMb, seed);
    const thread = live;
    try {
      await thread.ready;
    } catch (err) {
      if (live === thread) live = null;
      await thread.stop('the database did not open');
      throw err;
    }
    return thread;
  };

  let seeded: boolean;
  try {
    seeded = (await use()).seeded;
  } catch (err) {
    await held.release();
    throw err;
  }

  const on = (thread: DbThread, tx?: number): Queryable => ({
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return (await thread.request({ op: 'query', sql, params, tx })) as Row[];
    },
    async exec(sql: string) {
      await thread.request({ op: 'exec', sql, tx });
    },
  });

  return {
    get worker() {
      return live?.ended ? null : (live?.worker ?? null);
    },
    seeded,
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return on(await use()).query<Row>(sql, params);
    },
    async exec(sql: string) {
      await on(await use()).exec(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      // Every statement of the transaction goes to the thread that began it: after a crash they fail, never
      // running outside the transaction on a new thread.
      const thread = await use();
      const tx = (await thread.request({ op: 'begin' })) as number;
      let out: T;
      try {
        out = await fn(on(thread, tx));
      } catch (err) {
        await thread.request({ op: 'end', tx, commit: false }).catch(() => {});
        throw err;
      }
      await thread.request({ op: 'end', tx, commit: true });
      return out;
    },
    async close() {
      if (closed) return;
      closed = true;
      const thread = live;
      live = null;
      try {
        if (thread && !thread.ended) {
          // PGlite closes cleanly (a checkpoint) before the thread ends; a worker that cannot is ended anyway.
          await thread.ready.then(() => thread.request({ op: 'close' })).catch(() => {});
        }
      } finally {
        await thread?.stop('the database is closed');
        await held.release();
      }
    },
  };
}
