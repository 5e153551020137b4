/**
 * The page's (or a worker's) side of a Web Worker that serves typed operations
 * (shared/recognition/worker-messages.ts): `run('detect', args)` resolves with detect's result. The worker's
 * name is in every error, and a worker that stops fails everything it still owed.
 */
import {
  answer,
  type ArgsOf,
  type OpHandlers,
  type OpName,
  type OpReply,
  type OpRequest,
  type OpsOf,
  type ResultOf,
} from '../../../shared/recognition/worker-messages';

export class OpsWorker<Ops extends OpsOf<Ops>> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private failure: Error | null = null;

  /** `worker` serves `Ops` with serveOps(); `name` ("in-browser engine", "cascade thread") is used in errors. */
  constructor(
    private readonly worker: Worker,
    readonly name: string,
    private readonly onStopped?: (err: Error) => void,
  ) {
    worker.onmessage = (event: MessageEvent<OpReply>) => {
      const reply = event.data;
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.result);
      else waiter.reject(new Error(reply.error));
    };
    // The script failed to load or threw at the top level: nothing it was asked will ever answer.
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      const err = new Error(`the ${name} stopped: ${event.message || 'its script could not be loaded'}`);
      this.fail(err);
      this.onStopped?.(err);
    };
  }

  private fail(err: Error): void {
    this.failure = err;
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }

  run<K extends OpName<Ops>>(op: K, args: ArgsOf<Ops, K>, transfer: Transferable[] = []): Promise<ResultOf<Ops, K>> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args } as OpRequest<Ops>, transfer);
    });
  }

  /** Stops the worker; pending and later calls fail. */
  terminate(): void {
    this.worker.terminate();
    this.fail(new Error(`the ${this.name} was stopped`));
  }
}

/**
 * The worker's side: answers each request with its operation's handler. `serial`: one request at a time in
 * arrival order (a model swap never interleaves with a recognition).
 */
export function serveOps<Ops>(
  scope: { onmessage: unknown; postMessage(message: unknown): void },
  handlers: OpHandlers<Ops>,
  serial = false,
): void {
  let queue: Promise<void> = Promise.resolve();
  scope.onmessage = (event: MessageEvent<OpRequest<Ops>>) => {
    const reply = () => answer(handlers, event.data).then((r) => scope.postMessage(r));
    if (serial) queue = queue.then(reply);
    else void reply();
  };
}
