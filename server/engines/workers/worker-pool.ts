/**
 * A pool of worker threads with one shared queue: a job goes to the first idle worker, so a slow
 * image never holds back the others. Broadcast jobs (a new model) reach every worker, and each worker applies
 * them in order with the jobs it receives, so a request never sees half of a model update.
 *
 * Idle workers lend a hand: a worker may ask the pool to run part of its job on another worker
 * (worker-host.ts askForHelp, e.g. half of a cascade pyramid), which the pool does only while nothing waits
 * in the queue and another worker is idle, so one request uses every core when the server is quiet, and
 * queued requests always come first when it is busy. Each request tells its worker how many others were idle
 * when it was sent (`spare`), so a worker does not ask in vain.
 *
 * A pool may be elastic (`min` below `size`, #38: each worker costs 20-30 MB at idle): it starts `min` workers and
 * starts another, up to `size`, when the work asks for it: a job has to wait because every worker is busy, or a
 * worker asks for help and none is idle (declined as always; the next lone job gets the new one). A worker started so
 * gets the current broadcast state before any job, as a replacement does; one idle for `idleReleaseMs` is stopped
 * while more than `min` run. A worker that fails to start is logged, and its job goes back to the queue.
 *
 * Jobs are typed by operation (shared/recognition/worker-messages.ts): `pool.run('detect', args)` resolves
 * with detect's result. The pool's name is in every error it raises ("embedding worker exited with code 1").
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { postMoving } from './post-message.js';
import type { ArgsOf, OpName, OpReply, OpRequest, OpsOf, ResultOf } from '../../../shared/recognition/worker-messages.js';

interface Pending {
  /** A broadcast or a help job (not a caller's): given back differently when a starting worker fails. */
  kind?: 'broadcast' | 'help';
  op: string;
  args: unknown;
  transfer: ArrayBuffer[];
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

/** A worker asking the pool to run `op` on another worker (the buffers in `transfer` travel with `args`). */
export interface HelpRequest {
  help: number;
  op: string;
  args: unknown;
  transfer: ArrayBuffer[];
}

/** The pool's answer to a HelpRequest: the result, or declined (no worker free, or the helper failed). */
export type HelpReply = { help: number; ok: true; result: unknown } | { help: number; ok: false; error: string };

/** A job as a worker receives it: the request, and how many other workers were idle with nothing queued. */
export type PoolRequest<Ops> = OpRequest<Ops> & { spare: number };

interface Slot {
  worker: Worker;
  busy: Pending | null;
  /** Broadcast jobs waiting for this worker, sent before any queued ordinary job. */
  broadcasts: Pending[];
  /** Whether the worker has answered anything: until then it is starting, and losing it is a failed start. */
  answered: boolean;
  /** An extra worker's stop after idleReleaseMs without work (elastic pools). */
  idleTimer: ReturnType<typeof setTimeout> | null;
}

/**
 * Starts a worker running `<script>`, a path under server/engines/ without extension (`faces/vision-worker`):
 * the compiled .js normally; when running from the TypeScript sources (tests,
 * dev), a bootstrap that registers tsx's loader in the worker first.
 */
export function startWorker(script: string, workerData: unknown): Worker {
  const options = { workerData, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`../${script}.js`, import.meta.url), options);
  const entry = new URL(`../${script}.ts`, import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * Each worker's young generation (V8's nursery: two semi-spaces and the new large objects), in MB. V8's default
 * lets every isolate grow it to 48 MB and keep it, and a server has four or five isolates (#38: about 80 MB of
 * the idle server's resident memory). The workers' big data (images, descriptors, tensors) lives in ArrayBuffers
 * outside V8's heap, so a small nursery costs them no speed (bench/RESULTS.md, "Footprint by component").
 */
export const WORKER_YOUNG_GENERATION_MB = 6;

export interface WorkerPoolOptions {
  /** What the workers are, for errors: "vision", "embedding", "object". */
  name: string;
  /** Path under server/engines/ without extension, e.g. `faces/vision-worker`. */
  script: string;
  /** The worker's `workerData`. */
  data: unknown;
  /** Threads at most; 0 or absent: one per available core. */
  size?: number;
  /** Threads always running (at least 1); absent: `size` (a fixed pool). Below `size`, the pool grows with the work. */
  min?: number;
  /** An elastic pool stops a worker beyond `min` after this long without a job, ms; 0 or absent: keeps it. */
  idleReleaseMs?: number;
  /** Says when an elastic pool starts and stops a worker, or fails to start one (the operator sees why memory moved). */
  log?: (message: string) => void;
}

/** After a worker failed to start, the pool grows again only this much later (a broken install is not retried per job). */
const START_RETRY_MS = 30_000;

/** A pool of workers serving the operations `Ops`. */
export class WorkerPool<Ops extends OpsOf<Ops>> {
  readonly name: string;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private readonly inflight = new Map<number, Pending>();
  private closed = false;
  /** The latest broadcast job per op (e.g. the current model), replayed to a worker that replaces a dead one. */
  private readonly state = new Map<string, unknown>();
  private readonly jobListeners: ((op: string, seconds: number) => void)[] = [];
  /** Threads at most (`size`), and always running (`min`). */
  private readonly max: number;
  private readonly min: number;
  private noStartsUntil = 0;

  constructor(private readonly options: WorkerPoolOptions) {
    this.name = options.name;
    const size = options.size ?? 0;
    this.max = size > 0 ? size : Math.max(1, os.availableParallelism());
    this.min = Math.min(this.max, Math.max(1, options.min ?? this.max));
    for (let i = 0; i < this.min; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = startWorker(this.options.script, this.options.data);
    const slot: Slot = { worker, busy: null, broadcasts: [], answered: false, idleTimer: null };
    worker.on('message', (message: OpReply | HelpRequest) => {
      slot.answered = true;
      if ('help' in message) this.onHelp(slot, message);
      else this.onReply(slot, message);
    });
    worker.on('error', (err) => this.onWorkerLost(slot, new Error(`${this.name} worker failed: ${err.message}`)));
    worker.on('exit', (code) => this.onWorkerLost(slot, new Error(`${this.name} worker exited with code ${code}`)));
    for (const [op, args] of this.state) {
      slot.broadcasts.push({ kind: 'broadcast', op, args, transfer: [], resolve: () => {}, reject: () => {} });
    }
    return slot;
  }

  /** Whether an elastic pool may start another worker now. */
  private canGrow(): boolean {
    return !this.closed && this.slots.length < this.max && Date.now() >= this.noStartsUntil;
  }

  /** Starts one more worker (with the current state, sent before any job), when the pool may grow. */
  private grow(why: string): void {
    if (!this.canGrow()) return;
    let slot: Slot;
    try {
      slot = this.spawn();
    } catch (err) {
      this.startFailed(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.slots.push(slot);
    this.options.log?.(`${this.name} worker ${this.slots.length} of ${this.max} started: ${why}`);
    this.pump();
  }

  private startFailed(err: Error): void {
    this.noStartsUntil = Date.now() + START_RETRY_MS;
    this.options.log?.(`${this.name} worker failed to start (${err.message}); going on with ${this.slots.length}`);
  }

  /** Arms the stop of an idle worker beyond `min`; sending it a job disarms it. */
  private armIdleStop(slot: Slot): void {
    const after = this.options.idleReleaseMs ?? 0;
    if (after <= 0 || slot.idleTimer || this.closed || this.slots.length <= this.min) return;
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = null;
      const index = this.slots.indexOf(slot);
      if (index < 0 || slot.busy || slot.broadcasts.length > 0 || this.closed || this.slots.length <= this.min) return;
      // Out of the pool first: its exit is then not taken for a crash.
      this.slots.splice(index, 1);
      void slot.worker.terminate();
      this.options.log?.(`${this.name} worker stopped after ${after / 1000} s without work; ${this.slots.length} running`);
    }, after);
    slot.idleTimer.unref();
  }

  /** Parts of jobs that idle workers took over (askForHelp), since the start. */
  helped = 0;

  /** Jobs waiting for a free worker (for metrics). */
  get queueLength(): number {
    return this.queue.length;
  }

  /** Calls `listener` when a job of `run` settles, with its op and its time from `run` on (waiting included). */
  onJob(listener: (op: string, seconds: number) => void): void {
    this.jobListeners.push(listener);
  }

  /** Threads at most (WORKERS); an elastic pool may run fewer (`running`). */
  get size(): number {
    return this.max;
  }

  /** Threads running now, those starting included. */
  get running(): number {
    return this.slots.length;
  }

  private closedError(): Error {
    return new Error(`${this.name} pool is closed`);
  }

  /** Runs `op` on the next idle worker. `transfer` lists buffers moved (not copied) to the worker. */
  run<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>, transfer: ArrayBuffer[] = []): Promise<ResultOf<Ops, K>> {
    if (this.closed) return Promise.reject(this.closedError());
    const job = new Promise<ResultOf<Ops, K>>((resolve, reject) => {
      this.queue.push({ op, args, transfer, resolve: resolve as (r: unknown) => void, reject });
      this.pump();
      // Every worker busy: an elastic pool starts another for it (the job still goes to the first one free).
      if (this.queue.length > 0) this.grow('a job waited for a free worker');
    });
    if (this.jobListeners.length === 0) return job;
    const started = performance.now();
    const done = () => {
      const seconds = (performance.now() - started) / 1000;
      for (const listener of this.jobListeners) listener(op, seconds);
    };
    job.then(done, done);
    return job;
  }

  /** Runs `op` on every worker (e.g. a new model); resolves when all have applied it. */
  async broadcast<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>): Promise<void> {
    if (this.closed) throw this.closedError();
    this.state.set(op, args);
    await Promise.all(
      this.slots.map(
        (slot) =>
          new Promise((resolve, reject) => {
            slot.broadcasts.push({ kind: 'broadcast', op, args, transfer: [], resolve, reject });
            this.pump();
          }),
      ),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(this.closedError());
    for (const slot of this.slots) if (slot.idleTimer) clearTimeout(slot.idleTimer);
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  /** Workers other than `except` with nothing to do, when nothing waits in the queue (help goes to these). */
  private idle(except: Slot): Slot[] {
    if (this.queue.length > 0) return [];
    return this.slots.filter((s) => s !== except && !s.busy && s.broadcasts.length === 0);
  }

  /**
   * The `spare` a worker is told: the other idle workers, or 1 when there is none but the pool may start one (the
   * worker then asks, is declined, and that starts a helper for the next job).
   */
  private spareFor(slot: Slot): number {
    const idle = this.idle(slot).length;
    return idle > 0 || this.queue.length > 0 ? idle : this.canGrow() ? 1 : 0;
  }

  private send(slot: Slot, job: Pending, spare: number): void {
    const id = this.nextId++;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.busy = job;
    this.inflight.set(id, job);
    const request = { id, op: job.op, args: job.args, spare } as PoolRequest<Ops>;
    postMoving(slot.worker, request, job.transfer);
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const next = slot.broadcasts.shift() ?? this.queue.shift();
      if (next) this.send(slot, next, this.spareFor(slot));
      else this.armIdleStop(slot);
    }
  }

  /** Runs a worker's request for help on an idle worker, or declines at once when there is none. */
  private onHelp(asker: Slot, request: HelpRequest): void {
    const answer = (reply: HelpReply) => {
      // The asker may have died meanwhile: its replacement never asked.
      if (this.slots.includes(asker)) asker.worker.postMessage(reply);
    };
    const helper = this.closed ? undefined : this.idle(asker)[0];
    if (!helper) {
      answer({ help: request.help, ok: false, error: 'no worker is free' });
      // An elastic pool starts one, unless jobs wait (then they asked for it already): the next lone job gets help.
      if (this.queue.length === 0) this.grow('a lone job asked for help');
      return;
    }
    this.helped++;
    this.send(
      helper,
      {
        kind: 'help',
        op: request.op,
        args: request.args,
        transfer: request.transfer,
        resolve: (result) => answer({ help: request.help, ok: true, result }),
        reject: (err) => answer({ help: request.help, ok: false, error: err.message }),
      },
      0,
    );
  }

  private onReply(slot: Slot, reply: OpReply): void {
    const pending = this.inflight.get(reply.id);
    this.inflight.delete(reply.id);
    slot.busy = null;
    if (pending) {
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(new Error(reply.error));
    }
    this.pump();
  }

  private onWorkerLost(slot: Slot, err: Error): void {
    const index = this.slots.indexOf(slot);
    if (index < 0 || this.closed) return; // already replaced (error then exit), or we are shutting down
    // A crashed worker (e.g. out of memory) fails only the job it held; a fresh worker with the current
    // state takes its place, and broadcasts still owed to the old one are delivered to the new one.
    for (const [id, pending] of this.inflight) {
      if (pending === slot.busy) this.inflight.delete(id);
    }
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    if (!slot.answered && this.slots.length > this.min) {
      // An extra worker that failed to start: the pool goes on with the others. A caller's job it held goes back to
      // the front of the queue; help is declined (the asker does it); broadcasts were applied by every other worker.
      this.slots.splice(index, 1);
      this.startFailed(err);
      const held = slot.busy;
      if (held?.kind === 'help') held.reject(err);
      else if (held?.kind === 'broadcast') held.resolve(undefined);
      else if (held) this.queue.unshift(held);
      for (const owed of slot.broadcasts) owed.resolve(undefined);
      this.pump();
      return;
    }
    slot.busy?.reject(err);
    const replacement = this.spawn();
    replacement.broadcasts.push(...slot.broadcasts);
    this.slots[index] = replacement;
    this.pump();
  }
}
