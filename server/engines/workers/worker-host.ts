/**
 * The worker-thread side of WorkerPool: answers each request with the handler of its operation, and lets a
 * handler hand part of its job to another worker of the pool while that one would otherwise be idle.
 */
import { parentPort } from 'node:worker_threads';
import { answer, type ArgsOf, type OpHandlers, type OpName, type ResultOf } from '../../../shared/recognition/worker-messages.js';
import { postMoving } from './post-message.js';
import type { HelpReply, HelpRequest, PoolRequest } from './worker-pool.js';

/** Other workers that were idle, with nothing queued, when the current request was sent. */
let spare = 0;
let nextHelp = 1;
const waiting = new Map<number, (reply: HelpReply) => void>();

export function serveOps<Ops>(handlers: OpHandlers<Ops>): void {
  const port = parentPort;
  if (!port) throw new Error('serveOps must run in a worker thread');
  port.on('message', (message: PoolRequest<Ops> | HelpReply) => {
    if ('help' in message) {
      waiting.get(message.help)?.(message);
      waiting.delete(message.help);
      return;
    }
    // The pool sends a worker one request at a time, so this is the one whose handler may ask for help.
    spare = message.spare ?? 0;
    void answer(handlers, message).then((reply) => port.postMessage(reply));
  });
}

/** Whether asking for help may be answered: another worker was idle when this request came. */
export function helpersIdle(): number {
  return spare;
}

/**
 * Runs `op` of this pool's operations on another, idle worker and resolves with its result, or with null when
 * none is free (or it failed): the caller then does that part itself. `transfer`: buffers of `args` to move.
 */
export function askForHelp<Ops, K extends OpName<Ops>>(
  op: K,
  args: ArgsOf<Ops, K>,
  transfer: ArrayBuffer[] = [],
): Promise<ResultOf<Ops, K> | null> {
  const port = parentPort;
  if (!port || spare === 0) return Promise.resolve(null);
  const help = nextHelp++;
  return new Promise((resolve) => {
    waiting.set(help, (reply) => resolve(reply.ok ? (reply.result as ResultOf<Ops, K>) : null));
    const request: HelpRequest = { help, op, args, transfer };
    postMoving(port, request, transfer);
  });
}
