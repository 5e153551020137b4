/**
 * A fixed pool of worker threads with one shared queue: a job goes to the first idle worker, so a slow
 * image never holds back the others. Broadcast jobs (a new model) reach every worker, and each worker applies
 * them in order with the jobs it receives, so a request never sees half of a model update.
 *
 * Idle workers lend a hand: a worker may ask the pool to run part of its job on another worker
 * (worker-host.ts askForHelp, e.g. half of a cascade pyramid), which the pool does only while nothing waits
 * in the queue and another worker is idle, so one request uses every core when the server is quiet, and
 * queued requests always come first when it is busy. Each request tells its worker how many others were idle
 * when it was sent (`spare`), so a worker does not ask in vain.
 *
 * Jobs are typed by operation (shared/recognition/worker-messages.ts): `pool.run('detect', args)` resolves
 * with detect's result. The pool's name is in every error it raises ("embedding worker exited with code 1").
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { postMoving } from './post-message.js';
import type { ArgsOf, OpName, OpReply, OpRequest, OpsOf, ResultOf } from '../../../shared/recognition/worker-messages.js';

interface Pending {
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
}

/**
 * Starts a worker running `<script>`, a path under server/engines/ without extension (`faces/vision-worker`;
 * `../db/pglite-worker` outside it): the compiled .js normally; when running from the TypeScript sources (tests,
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
  /** Threads; 0 or absent: one per available core. */
  size?: number;
}

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

  constructor(private readonly options: WorkerPoolOptions) {
    this.name = options.name;
    const size = options.size ?? 0;
    const count = size > 0 ? size : Math.max(1, os.availableParallelism());
    for (let i = 0; i < count; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = startWorker(this.options.script, this.options.data);
    const slot: Slot = { worker, busy: null, broadcasts: [] };
    worker.on('message', (message: OpReply | HelpRequest) => {
      if ('help' in message) this.onHelp(slot, message);
      else this.onReply(slot, message);
    });
    worker.on('error', (err) => this.onWorkerLost(slot, new Error(`${this.name} worker failed: ${err.message}`)));
    worker.on('exit', (code) => this.onWorkerLost(slot, new Error(`${this.name} worker exited with code ${code}`)));
    for (const [op, args] of this.state) {
      slot.broadcasts.push({ op, args, transfer: [], resolve: () => {}, reject: () => {} });
    }
    return slot;
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

  get size(): number {
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
            slot.broadcasts.push({ op, args, transfer: [], resolve, reject });
            this.pump();
          }),
      ),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(this.closedError());
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  /** Workers other than `except` with nothing to do, when nothing waits in the queue (help goes to these). */
  private idle(except: Slot): Slot[] {
    if (this.queue.length > 0) return [];
    return this.slots.filter((s) => s !== except && !s.busy && s.broadcasts.length === 0);
  }

  private send(slot: Slot, job: Pending, spare: number): void {
    const id = this.nextId++;
    slot.busy = job;
    this.inflight.set(id, job);
    const request = { id, op: job.op, args: job.args, spare } as PoolRequest<Ops>;
    postMoving(slot.worker, request, job.transfer);
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const next = slot.broadcasts.shift() ?? this.queue.shift();
      if (!next) continue;
      this.send(slot, next, this.idle(slot).length);
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
      return;
    }
    this.helped++;
    this.send(
      helper,
      {
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
    slot.busy?.reject(err);
    const replacement = this.spawn();
    replacement.broadcasts.push(...slot.broadcasts);
    this.slots[index] = replacement;
    this.pump();
  }
}
