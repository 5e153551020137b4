/**
 * The embedded database: PGlite (PostgreSQL 17 compiled to WebAssembly) in a folder of DATA_DIR. One process
 * only: a lock file (server/storage/file-lock.ts) is held while it is open, and a second process is refused with
 * the reason (replicas share a PostgreSQL server through DATABASE_URL instead).
 *
 * PGlite runs in a child process of its own (pglite-process.ts): on this thread its first open stalled the event
 * loop for seconds (initdb), and in a process of its own it runs with V8's baseline WebAssembly compiler only
 * (#38: half a gigabyte less at start). The lock stays here (its refresh timer must run while the database is
 * busy). A database process that dies fails the statements it owed, and the next statement starts a new one on
 * the same folder.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { FileLock, type HeldLock, LockBusyError } from '../storage/file-lock.js';
import { privateDir } from '../storage/private-modes.js';
import type { Driver, Queryable } from './database.js';
import { seedPath } from './pglite-seed.js';
import { DB_PROCESS_DATA, type DbErrorData, type DbProcessData, type DbReady, type DbReply, type DbRequest } from './pglite-process.js';

const LOCK_FILE = '.lookout-db.lock';

/** The embedded driver; `process` is the one holding PGlite now (null before the first use after a crash). */
export interface EmbeddedDriver extends Driver {
  readonly process: ChildProcess | null;
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

/** The database process's error here, with PostgreSQL's fields (code, detail, constraint...) as pg gives them. */
function fromErrorData(data: DbErrorData): Error {
  const err = Object.assign(new Error(data.message), data.fields);
  err.name = data.name;
  return err;
}

type Request = DbRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * V8's options of the database process: the baseline WebAssembly compiler only (see pglite-process.ts), and a small
 * nursery (its JavaScript is PGlite's glue; the data lives in WebAssembly memory).
 */
export const DB_PROCESS_V8_OPTIONS = ['--liftoff-only', '--max-semi-space-size=1'];

/** Starts pglite-process: the compiled .js normally; from the TypeScript sources (tests, dev), through tsx's loader. */
function startDbProcess(data: DbProcessData): ChildProcess {
  const fromSources = import.meta.url.endsWith('.ts');
  const script = new URL(`./pglite-process.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  return fork(script, [], {
    // Structured clone, as between threads: rows keep their Dates and byte arrays.
    serialization: 'advanced',
    execArgv: [...(fromSources ? ['--import', import.meta.resolve('tsx')] : []), ...DB_PROCESS_V8_OPTIONS],
    env: { ...process.env, [DB_PROCESS_DATA]: JSON.stringify(data) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** One database process and the answers it owes. */
class DbProcess {
  readonly process: ChildProcess;
  /** Resolves once PGlite is open in the process; rejects with why it could not open. */
  readonly ready: Promise<void>;
  /** Whether the process made a new database from the seed. */
  seeded = false;
  /** Set once the process has ended: every request after that fails with it. */
  ended: Error | null = null;
  private started = false;
  private stopping: string | null = null;
  private readonly exited: Promise<void>;
  private readonly pending = new Map<number, { resolve(result: unknown): void; reject(err: Error): void }>();
  private nextId = 1;

  constructor(dir: string, buffersMb: number, seed: string | null) {
    this.process = startDbProcess({ dir, buffersMb, seed });
    let failure: Error | null = null;
    let exited!: () => void;
    this.exited = new Promise((resolve) => {
      exited = resolve;
    });
    this.ready = new Promise((resolve, reject) => {
      this.process.on('message', (msg: DbReply | DbReady) => {
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
      this.process.on('error', (err) => {
        failure = err;
      });
      this.process.on('exit', (code, signal) => {
        const why = this.stopping
          ? new Error(this.stopping)
          : new Error(
              `the embedded database's process stopped (${signal ?? `exit code ${code}`}${failure ? `: ${failure.message}` : ''}) before it answered: ` +
                'whether this statement took effect is unknown; the next statement opens the database again',
            );
        this.ended = why;
        reject(why);
        for (const waiting of this.pending.values()) waiting.reject(why);
        this.pending.clear();
        exited();
      });
    });
    this.ready.catch(() => {});
  }

  /**
   * Keeps this process alive only while the database owes an answer (or is opening): an idle database does not
   * hold a process open, as PGlite on the main thread did not, but a script awaiting a query is not left to exit.
   */
  private updateRef(): void {
    const idle = this.started && this.pending.size === 0;
    for (const handle of [this.process, this.process.channel]) {
      if (idle) handle?.unref();
      else handle?.ref();
    }
  }

  request(body: Request): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.updateRef();
      this.process.send({ ...body, id } as DbRequest);
    });
  }

  /** Ends the process; statements still owed fail with `reason`. */
  async stop(reason: string): Promise<void> {
    this.stopping = reason;
    if (this.process.exitCode === null && this.process.signalCode === null) {
      // Held until it has ended: a script whose last step is close() must not exit with the process still there.
      this.process.ref();
      this.process.kill('SIGKILL');
    }
    await this.exited;
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

  let live: DbProcess | null = null;
  let closed = false;
  /** The open process, starting one when there is none or the last one died (callers at that moment share it). */
  const use = async (): Promise<DbProcess> => {
    if (closed) throw new Error('the database is closed');
    if (!live || live.ended) live = new DbProcess(dir, buffersMb, seed);
    const db = live;
    try {
      await db.ready;
    } catch (err) {
      if (live === db) live = null;
      await db.stop('the database did not open');
      throw err;
    }
    return db;
  };

  let seeded: boolean;
  try {
    seeded = (await use()).seeded;
  } catch (err) {
    await held.release();
    throw err;
  }

  const on = (db: DbProcess, tx?: number): Queryable => ({
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return (await db.request({ op: 'query', sql, params, tx })) as Row[];
    },
    async exec(sql: string) {
      await db.request({ op: 'exec', sql, tx });
    },
  });

  return {
    get process() {
      return live?.ended ? null : (live?.process ?? null);
    },
    seeded,
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return on(await use()).query<Row>(sql, params);
    },
    async exec(sql: string) {
      await on(await use()).exec(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      // Every statement of the transaction goes to the process that began it: after a crash they fail, never
      // running outside the transaction in a new one.
      const db = await use();
      const tx = (await db.request({ op: 'begin' })) as number;
      let out: T;
      try {
        out = await fn(on(db, tx));
      } catch (err) {
        await db.request({ op: 'end', tx, commit: false }).catch(() => {});
        throw err;
      }
      await db.request({ op: 'end', tx, commit: true });
      return out;
    },
    async close() {
      if (closed) return;
      closed = true;
      const db = live;
      live = null;
      try {
        if (db && !db.ended) {
          // PGlite closes cleanly (a checkpoint) before the process ends; one that cannot is ended anyway.
          await db.ready.then(() => db.request({ op: 'close' })).catch(() => {});
        }
      } finally {
        await db?.stop('the database is closed');
        await held.release();
      }
    },
  };
}
