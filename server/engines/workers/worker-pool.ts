/**
 * A fixed pool of worker threads with one shared queue: a job goes to the first idle worker, so a slow
 * image never holds back the others. Broadcast jobs (a new model) reach every worker, and each worker applies
 * them in order with the jobs it receives, so a request never sees half of a model update.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';

/** What every worker script answers: `{ id, ok, result }` or `{ id, ok: false, error }` for `{ id, job }`. */
export type WorkerReply<R> = { id: number; ok: true; result: R } | { id: number; ok: false; error: string };

interface Pending<J, R> {
  job: J;
  transfer: ArrayBuffer[];
  resolve: (result: R) => void;
  reject: (err: Error) => void;
}

interface Slot<J, R> {
  worker: Worker;
  busy: Pending<J, R> | null;
  /** Broadcast jobs waiting for this worker, sent before any queued ordinary job. */
  broadcasts: Pending<J, R>[];
}

/**
 * Starts a worker running `<script>`, a path under server/engines/ without extension (`faces/vision-worker`):
 * the compiled .js normally; when running from the TypeScript sources (tests, dev), a bootstrap that registers
 * tsx's loader in the worker first.
 */
function startWorker(script: string, workerData: unknown): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`../${script}.js`, import.meta.url), { workerData });
  const entry = new URL(`../${script}.ts`, import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** A pool of `script` workers taking jobs `J` (tagged by `op`) and answering results `R`. */
export class WorkerPool<J extends { op: string }, R> {
  private readonly slots: Slot<J, R>[] = [];
  private readonly queue: Pending<J, R>[] = [];
  private nextId = 1;
  private readonly inflight = new Map<number, Pending<J, R>>();
  private closed = false;
  /** The latest broadcast job per op (e.g. the current model), replayed to a worker that replaces a dead one. */
  private readonly state = new Map<string, J>();

  constructor(
    private readonly script: string,
    private readonly data: unknown,
    size = 0,
  ) {
    const count = size > 0 ? size : Math.max(1, os.availableParallelism());
    for (let i = 0; i < count; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot<J, R> {
    const worker = startWorker(this.script, this.data);
    const slot: Slot<J, R> = { worker, busy: null, broadcasts: [] };
    worker.on('message', (reply: WorkerReply<R>) => this.onReply(slot, reply));
    worker.on('error', (err) => this.onWorkerLost(slot, err));
    worker.on('exit', (code) => this.onWorkerLost(slot, new Error(`vision worker exited with code ${code}`)));
    for (const job of this.state.values()) {
      slot.broadcasts.push({ job, transfer: [], resolve: () => {}, reject: () => {} });
    }
    return slot;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Runs a job on the next idle worker. `transfer` lists buffers moved (not copied) to the worker. */
  run(job: J, transfer: ArrayBuffer[] = []): Promise<R> {
    if (this.closed) return Promise.reject(new Error('vision pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ job, transfer, resolve, reject });
      this.pump();
    });
  }

  /** Runs a job on every worker (e.g. a new model); resolves when all have applied it. */
  async broadcast(job: J): Promise<void> {
    if (this.closed) throw new Error('vision pool is closed');
    this.state.set(job.op, job);
    await Promise.all(
      this.slots.map(
        (slot) =>
          new Promise<R>((resolve, reject) => {
            slot.broadcasts.push({ job, transfer: [], resolve, reject });
            this.pump();
          }),
      ),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('vision pool is closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const next = slot.broadcasts.shift() ?? this.queue.shift();
      if (!next) continue;
      const id = this.nextId++;
      slot.busy = next;
      this.inflight.set(id, next);
      slot.worker.postMessage({ id, job: next.job }, next.transfer);
    }
  }

  private onReply(slot: Slot<J, R>, reply: WorkerReply<R>): void {
    const pending = this.inflight.get(reply.id);
    this.inflight.delete(reply.id);
    slot.busy = null;
    if (pending) {
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(new Error(reply.error));
    }
    this.pump();
  }

  private onWorkerLost(slot: Slot<J, R>, err: Error): void {
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

/** The cascade + LBPH workers. */
export type VisionPool = WorkerPool<import('../faces/vision-protocol.js').VisionJob, import('../faces/vision-protocol.js').VisionResult>;
