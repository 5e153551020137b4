/**
 * A worker pool started on first use and let go after a while without work (#38 2): an engine that is never asked
 * for costs no memory, and one asked once an hour gives its memory back in between. Callers use it as a
 * WorkerPool: `run` waits for the workers to start and load (concurrent first calls share one start), and
 * `broadcast` jobs (the current model, the corrections) are kept and given to every pool it starts, in order,
 * before any other job.
 */
import type { ArgsOf, OpName, OpsOf, ResultOf } from '../../../shared/recognition/worker-messages.js';
import { WorkerPool, type WorkerPoolOptions } from './worker-pool.js';

/** What callers of a pool use: a WorkerPool and a LazyWorkerPool alike. */
export interface EnginePool<Ops extends OpsOf<Ops>> {
  readonly name: string;
  readonly queueLength: number;
  run<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>, transfer?: ArrayBuffer[]): Promise<ResultOf<Ops, K>>;
  broadcast<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>): Promise<void>;
  onJob(listener: (op: string, seconds: number) => void): void;
  close(): Promise<void>;
}

/** `not_loaded`: no workers (never used, or let go); `loading`: starting, the first jobs wait; `ready`: running. */
export type LazyPoolState = 'not_loaded' | 'loading' | 'ready';

export interface LazyWorkerPoolOptions<Ops extends OpsOf<Ops>> extends WorkerPoolOptions {
  /** Let the workers go after this long without a job, ms; 0: keep them once started. */
  idleReleaseMs: number;
  /** Runs on each new pool before any caller's job (e.g. waits for the model and reads its status). */
  onLoad?: (pool: WorkerPool<Ops>) => Promise<void>;
  /** Runs before a pool is let go, while it still answers (e.g. reads a counter it keeps). */
  onRelease?: (pool: WorkerPool<Ops>) => Promise<void>;
  /** Says when the workers start and go (the operator sees why memory moved). */
  log?: (message: string) => void;
}

/** How long close() waits for a start in progress. */
const LOAD_WAIT_ON_CLOSE_MS = 4000;

export class LazyWorkerPool<Ops extends OpsOf<Ops>> implements EnginePool<Ops> {
  readonly name: string;
  private pool: WorkerPool<Ops> | null = null;
  /** The start in progress or done, shared by every caller until the pool is let go. */
  private loading: Promise<WorkerPool<Ops>> | null = null;
  private loaded = false;
  private closed = false;
  /** Jobs started and not settled: the pool is never let go under them. */
  private inflight = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private releasing: Promise<void> = Promise.resolve();
  /** The latest broadcast per op, given to each new pool. */
  private readonly broadcasts = new Map<string, unknown>();
  private readonly jobListeners: ((op: string, seconds: number) => void)[] = [];
  /** Times the workers were started and let go, since the start (for tests and the log). */
  starts = 0;
  releases = 0;

  constructor(private readonly options: LazyWorkerPoolOptions<Ops>) {
    this.name = options.name;
  }

  get state(): LazyPoolState {
    return !this.loading ? 'not_loaded' : this.loaded ? 'ready' : 'loading';
  }

  get queueLength(): number {
    return this.pool?.queueLength ?? 0;
  }

  onJob(listener: (op: string, seconds: number) => void): void {
    this.jobListeners.push(listener);
    this.pool?.onJob(listener);
  }

  /** The running pool, started (and loaded) first when there is none. */
  ensure(): Promise<WorkerPool<Ops>> {
    if (this.closed) return Promise.reject(new Error(`${this.name} pool is closed`));
    this.loading ??= this.start();
    return this.loading;
  }

  private async start(): Promise<WorkerPool<Ops>> {
    // A release still closing its workers finishes first: two engines never hold memory at once.
    await this.releasing;
    const started = performance.now();
    const pool = new WorkerPool<Ops>(this.options);
    for (const listener of this.jobListeners) pool.onJob(listener);
    this.pool = pool;
    this.starts++;
    try {
      for (const [op, args] of this.broadcasts) await pool.broadcast(op as OpName<Ops>, args as ArgsOf<Ops, OpName<Ops>>);
      await this.options.onLoad?.(pool);
    } catch (err) {
      // A start that failed leaves nothing behind: the next job tries again.
      this.pool = null;
      this.loading = null;
      await pool.close();
      throw err;
    }
    this.loaded = true;
    this.options.log?.(`${this.name} worker started on first use in ${Math.round(performance.now() - started)} ms`);
    this.armIdleTimer();
    return pool;
  }

  async run<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>, transfer: ArrayBuffer[] = []): Promise<ResultOf<Ops, K>> {
    this.inflight++;
    try {
      const pool = await this.ensure();
      return await pool.run(op, args, transfer);
    } finally {
      this.inflight--;
      this.armIdleTimer();
    }
  }

  /** Kept for every pool started later; applied now to a running (or starting) one. */
  async broadcast<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>): Promise<void> {
    if (this.closed) throw new Error(`${this.name} pool is closed`);
    this.broadcasts.set(op, args);
    if (this.pool) await this.pool.broadcast(op, args);
  }

  private armIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.options.idleReleaseMs <= 0 || this.closed || !this.loaded || this.inflight > 0) return;
    this.idleTimer = setTimeout(() => void this.release(), this.options.idleReleaseMs);
    this.idleTimer.unref();
  }

  /** Lets the workers go now, unless a job runs (then the next idle time does). */
  async release(): Promise<void> {
    const pool = this.pool;
    if (!pool || !this.loaded || this.inflight > 0 || this.closed) return;
    // From here a new job starts a new pool (after this one is closed: start() waits for `releasing`).
    this.pool = null;
    this.loading = null;
    this.loaded = false;
    this.releases++;
    this.releasing = (async () => {
      await this.options.onRelease?.(pool).catch(() => undefined);
      await pool.close();
      this.options.log?.(`${this.name} worker let go after ${this.options.idleReleaseMs / 1000} s without work`);
    })();
    await this.releasing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // A start in progress finishes first, for a bounded time (the server's own shutdown gives up after 5 s):
    // onnxruntime aborts the whole process when a worker dies while it creates a session.
    const loading = this.loading?.catch(() => undefined);
    await Promise.race([loading, new Promise((r) => setTimeout(r, LOAD_WAIT_ON_CLOSE_MS).unref())]);
    await this.releasing;
    await this.pool?.close();
    this.pool = null;
  }
}
