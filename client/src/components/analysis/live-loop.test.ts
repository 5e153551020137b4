import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runLoop, type LoopRun } from './live-loop';

/** A step the test answers by hand, counting how many run at once. */
function manualSteps() {
  const calls: { signal: AbortSignal; resolve(v: string | null): void; reject(e: unknown): void }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const step = (signal: AbortSignal) =>
    new Promise<string | null>((resolve, reject) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const done = () => inFlight--;
      calls.push({
        signal,
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
    });
  return { calls, step, maxInFlight: () => maxInFlight };
}

function loop(step: LoopRun<string>['step'], extra: Partial<LoopRun<string>> = {}) {
  const results: string[] = [];
  const errors: unknown[] = [];
  const rates: (number | null)[] = [];
  const controller = new AbortController();
  const done = runLoop<string>(
    {
      step,
      onResult: (r) => results.push(r),
      onError: (e) => errors.push(e),
      onFps: (f) => rates.push(f),
      retryMs: 2000,
      noFrameMs: 100,
      ...extra,
    },
    controller.signal,
  );
  return { results, errors, rates, controller, done };
}

/** Stops a loop whose last step is still waiting, and answers that step (late, so dropped). */
async function finish(l: ReturnType<typeof loop>, s: ReturnType<typeof manualSteps>): Promise<void> {
  l.controller.abort();
  s.calls.at(-1)!.resolve('late');
  await l.done;
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('runLoop', () => {
  it('keeps one request in flight: the next frame is taken only after the reply', async () => {
    const s = manualSteps();
    const l = loop(s.step);
    await vi.advanceTimersByTimeAsync(0);
    expect(s.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5000); // a slow reply builds no queue
    expect(s.calls).toHaveLength(1);
    s.calls[0].resolve('a');
    await vi.advanceTimersByTimeAsync(0);
    expect(l.results).toEqual(['a']);
    expect(s.calls).toHaveLength(2);
    s.calls[1].resolve('b');
    await vi.advanceTimersByTimeAsync(0);
    expect(l.results).toEqual(['a', 'b']);
    expect(s.maxInFlight()).toBe(1);
    await finish(l, s);
    expect(l.results).toEqual(['a', 'b']);
  });

  it('stops when aborted: the request in flight sees the abort and its late answer is dropped', async () => {
    const s = manualSteps();
    const l = loop(s.step);
    await vi.advanceTimersByTimeAsync(0);
    l.controller.abort();
    expect(s.calls[0].signal.aborted).toBe(true);
    s.calls[0].resolve('late');
    await l.done;
    expect(l.results).toEqual([]);
    expect(s.calls).toHaveLength(1);
    // A failure after the abort is not reported either.
    const t = manualSteps();
    const m = loop(t.step);
    await vi.advanceTimersByTimeAsync(0);
    m.controller.abort();
    t.calls[0].reject(new Error('aborted request'));
    await m.done;
    expect(m.errors).toEqual([]);
  });

  it('reports a failure, forgets the rate, and tries again after the retry delay', async () => {
    const s = manualSteps();
    const l = loop(s.step);
    await vi.advanceTimersByTimeAsync(0);
    const err = new Error('server unreachable');
    s.calls[0].reject(err);
    await vi.advanceTimersByTimeAsync(0);
    expect(l.errors).toEqual([err]);
    expect(l.rates.at(-1)).toBeNull();
    await vi.advanceTimersByTimeAsync(1999);
    expect(s.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.calls).toHaveLength(2);
    // Stopping during the wait ends the loop at once.
    s.calls[1].reject(new Error('again'));
    await vi.advanceTimersByTimeAsync(0);
    l.controller.abort();
    await l.done;
    expect(s.calls).toHaveLength(2);
  });

  it('waits briefly while the camera has no picture yet', async () => {
    const s = manualSteps();
    const l = loop(s.step);
    await vi.advanceTimersByTimeAsync(0);
    s.calls[0].resolve(null);
    await vi.advanceTimersByTimeAsync(99);
    expect(s.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(s.calls).toHaveLength(2);
    expect(l.results).toEqual([]);
    await finish(l, s);
    expect(l.results).toEqual([]);
  });

  it('gives the rate over the last replies', async () => {
    let t = 0;
    const s = manualSteps();
    const l = loop(s.step, { now: () => t });
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(0);
      t += 250;
      s.calls[i].resolve(String(i));
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(l.rates).toEqual([null, 4, 4]);
    await finish(l, s);
  });
});
