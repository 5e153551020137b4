/** The worker-thread side of WorkerPool: answers each request with the handler of its operation. */
import { parentPort } from 'node:worker_threads';
import { answer, type OpHandlers, type OpRequest } from '../../../shared/recognition/worker-messages.js';

export function serveOps<Ops>(handlers: OpHandlers<Ops>): void {
  const port = parentPort;
  if (!port) throw new Error('serveOps must run in a worker thread');
  port.on('message', (request: OpRequest<Ops>) => {
    void answer(handlers, request).then((reply) => port.postMessage(reply));
  });
}
