import { describe, expect, it } from 'vitest';
import type { OpHandlers } from '../../../shared/recognition/worker-messages';
import { OpsWorker, serveOps } from './ops-worker';

interface Ops {
  add: { args: { a: number; b: number }; result: number };
  wait: { args: number; result: number };
}

/** A Worker stand-in: the page's and the worker's ends of one channel, in this thread. */
function fakeWorker(handlers: OpHandlers<Ops>, serial = false) {
  const inside = { onmessage: null as unknown, postMessage: (m: unknown) => page.onmessage?.({ data: m } as MessageEvent) };
  const page = {
    onmessage: null as ((e: MessageEvent) => void) | null,
    onerror: null as ((e: ErrorEvent) => void) | null,
    terminated: false,
    postMessage: (m: unknown) => queueMicrotask(() => (inside.onmessage as (e: MessageEvent) => void)({ data: m } as MessageEvent)),
    terminate() {
      this.terminated = true;
    },
  };
  serveOps<Ops>(inside, handlers, serial);
  return page;
}

describe('OpsWorker', () => {
  it('answers each call with its own operation’s result', async () => {
    const w = new OpsWorker<Ops>(fakeWorker({ add: ({ a, b }) => a + b, wait: async (n) => n }) as unknown as Worker, 'test engine');
    await expect(Promise.all([w.run('add', { a: 1, b: 2 }), w.run('wait', 7)])).resolves.toEqual([3, 7]);
  });

  it('serial: a slow request is answered before the next one starts', async () => {
    const order: string[] = [];
    const handlers: OpHandlers<Ops> = {
      add: ({ a }) => {
        order.push(`add ${a}`);
        return a;
      },
      wait: async (n) => {
        order.push(`wait ${n} start`);
        await new Promise((r) => setTimeout(r, 20));
        order.push(`wait ${n} end`);
        return n;
      },
    };
    const w = new OpsWorker<Ops>(fakeWorker(handlers, true) as unknown as Worker, 'test engine');
    await Promise.all([w.run('wait', 1), w.run('add', { a: 2, b: 0 })]);
    expect(order).toEqual(['wait 1 start', 'wait 1 end', 'add 2']);
  });

  it('passes a failure on, and names the worker when it stops', async () => {
    const page = fakeWorker({
      add: () => {
        throw new Error('bad numbers');
      },
      wait: () => new Promise<number>(() => {}),
    });
    const w = new OpsWorker<Ops>(page as unknown as Worker, 'cascade thread');
    await expect(w.run('add', { a: 1, b: 1 })).rejects.toThrow('bad numbers');
    const pending = w.run('wait', 1);
    page.onerror!({ message: 'out of memory', preventDefault() {} } as ErrorEvent);
    await expect(pending).rejects.toThrow('the cascade thread stopped: out of memory');
    await expect(w.run('add', { a: 1, b: 1 })).rejects.toThrow('the cascade thread stopped');
    const other = new OpsWorker<Ops>(fakeWorker({ add: () => 0, wait: () => 0 }) as unknown as Worker, 'in-browser engine');
    other.terminate();
    await expect(other.run('wait', 1)).rejects.toThrow('the in-browser engine was stopped');
  });
});
