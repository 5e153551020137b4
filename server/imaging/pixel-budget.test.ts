import { describe, expect, it } from 'vitest';
import { PixelBudget, ServerBusyError } from './pixel-budget.js';
import { MemoryReclaimer } from './reclaim.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('PixelBudget', () => {
  it('grants while the pixels fit and queues the rest in arrival order', async () => {
    const budget = new PixelBudget({ capacity: 100, waitMs: 10_000 });
    const a = await budget.acquire(60);
    const order: string[] = [];
    const b = budget.acquire(50).then((l) => {
      order.push('b');
      return l;
    });
    const c = budget.acquire(10).then((l) => {
      order.push('c');
      return l;
    });
    await tick();
    // c would fit (60 + 10) but does not overtake b, which came first.
    expect(order).toEqual([]);
    expect([budget.inUse, budget.waiting]).toEqual([60, 2]);
    a.release();
    a.release(); // a second release gives nothing back twice
    const [lb, lc] = await Promise.all([b, c]);
    expect(order).toEqual(['b', 'c']);
    expect(budget.inUse).toBe(60);
    lb.release();
    lc.release();
    expect(budget.inUse).toBe(0);
  });

  it('admits an image larger than the whole budget alone, when nothing else is held', async () => {
    const budget = new PixelBudget({ capacity: 100, waitMs: 10_000 });
    const big = await budget.acquire(250);
    expect(budget.inUse).toBe(250);
    let small = false;
    const next = budget.acquire(1).then((l) => {
      small = true;
      return l;
    });
    await tick();
    expect(small).toBe(false);
    big.release();
    (await next).release();
    expect(small).toBe(true);
    const held = await budget.acquire(50);
    let second = false;
    const waiting = budget.acquire(250).then((l) => {
      second = true;
      return l;
    });
    await tick();
    expect(second).toBe(false);
    held.release();
    (await waiting).release();
  });

  it('refuses with 503 server_busy and a Retry-After after waiting waitMs, and lets the next ones in', async () => {
    const budget = new PixelBudget({ capacity: 100, waitMs: 30 });
    const held = await budget.acquire(90);
    const started = Date.now();
    const refused = await budget.acquire(50).catch((e: unknown) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(refused).toBeInstanceOf(ServerBusyError);
    expect(refused).toMatchObject({ code: 'server_busy', status: 503 });
    expect((refused as ServerBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((refused as ServerBusyError).message).toMatch(/MAX_INFLIGHT_PIXELS/);
    expect(budget.waiting).toBe(0);
    // A waiter behind a large one that gave up is let in as soon as it fits.
    const big = budget.acquire(80);
    const small = budget.acquire(10);
    const bigResult = await big.catch((e: unknown) => e);
    expect(bigResult).toBeInstanceOf(ServerBusyError);
    (await small).release();
    held.release();
  });

  it('lets training wait as long as it takes (unbounded), never refused', async () => {
    const budget = new PixelBudget({ capacity: 100, waitMs: 10 });
    const held = await budget.acquire(100);
    const training = budget.acquire(100, { wait: 'unbounded' });
    await new Promise((r) => setTimeout(r, 40));
    expect(budget.waiting).toBe(1);
    held.release();
    (await training).release();
  });

  it('answers at once with waitMs 0 when the budget is full', async () => {
    const budget = new PixelBudget({ capacity: 100, waitMs: 0 });
    const held = await budget.acquire(100);
    await expect(budget.acquire(1)).rejects.toBeInstanceOf(ServerBusyError);
    held.release();
    (await budget.acquire(1)).release();
  });

  it('tells the reclaimer of every release, which collects once half the budget was given back', async () => {
    const reclaimer = new MemoryReclaimer({ threshold: 50, idleMs: 10_000 });
    const budget = new PixelBudget({ capacity: 100, waitMs: 0, onRelease: (p, inUse) => reclaimer.released(p, inUse) });
    (await budget.acquire(30)).release();
    await tick();
    expect(reclaimer.collections).toBe(0);
    (await budget.acquire(30)).release();
    await tick();
    expect(reclaimer.collections).toBe(1);
    reclaimer.stop();
  });

  it('collects once after going idle following large images', async () => {
    const reclaimer = new MemoryReclaimer({ threshold: 1e9, idleMs: 20, idleMinimum: 10 });
    const budget = new PixelBudget({ capacity: 100, waitMs: 0, onRelease: (p, inUse) => reclaimer.released(p, inUse) });
    (await budget.acquire(20)).release();
    await new Promise((r) => setTimeout(r, 60));
    expect(reclaimer.collections).toBe(1);
    reclaimer.stop();
  });
});
