import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runPipeline, type PipelineRun } from './frame-pipeline';

/** A camera whose frames the test releases by hand (frame n is the number n), and analyses it answers by hand. */
function rig(depth: () => number) {
  let released = 0;
  let taken = 0;
  const waiting: (() => void)[] = [];
  const analyses: { frame: number; resolve(v: string): void; reject(e: unknown): void }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const grab = (signal: AbortSignal) =>
    new Promise<number | null>((resolve) => {
      const check = () => {
        if (signal.aborted) return resolve(null);
        if (taken < released) return resolve(++taken);
        waiting.push(check);
      };
      signal.addEventListener('abort', () => resolve(null), { once: true });
      check();
    });
  const analyze = (frame: number) =>
    new Promise<string>((resolve, reject) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const done = () => inFlight--;
      analyses.push({
        frame,
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
  const results: [string, number][] = [];
  const errors: unknown[] = [];
  const controller = new AbortController();
  const run: PipelineRun<number, string> = {
    grab,
    analyze,
    depth,
    onResult: (r, f) => results.push([r, f]),
    onError: (e) => errors.push(e),
    onFps: () => undefined,
    retryMs: 2000,
    noFrameMs: 100,
  };
  const done = runPipeline(run, controller.signal);
  const camera = (n = 1) => {
    released += n;
    for (const w of waiting.splice(0)) w();
  };
  return { analyses, results, errors, controller, done, camera, maxInFlight: () => maxInFlight };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('runPipeline', () => {
  it('sends the next camera frame while one is analysed, and gives results in order with their frames', async () => {
    const r = rig(() => 2);
    r.camera();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses.map((a) => a.frame)).toEqual([1]);
    r.camera(); // frame 2 arrives while 1 is analysed: it is sent at once
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses.map((a) => a.frame)).toEqual([1, 2]);
    r.camera(); // frame 3 waits: two are being analysed
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses).toHaveLength(2);
    r.analyses[1].resolve('b'); // an answer out of order is held back
    await vi.advanceTimersByTimeAsync(0);
    expect(r.results).toEqual([]);
    r.analyses[0].resolve('a');
    await vi.advanceTimersByTimeAsync(0);
    expect(r.results).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(r.analyses.map((a) => a.frame)).toEqual([1, 2, 3]);
    expect(r.maxInFlight()).toBe(2);
    r.controller.abort();
    r.analyses[2].resolve('late');
    await r.done;
    expect(r.results).toHaveLength(2);
  });

  it('takes each camera frame once: no frame, no analysis', async () => {
    const r = rig(() => 2);
    r.camera();
    await vi.advanceTimersByTimeAsync(0);
    r.analyses[0].resolve('a');
    await vi.advanceTimersByTimeAsync(1000);
    expect(r.analyses).toHaveLength(1);
    expect(r.results).toEqual([['a', 1]]);
    r.camera();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses.map((a) => a.frame)).toEqual([1, 2]);
    r.controller.abort();
    r.analyses[1].resolve('late');
    await r.done;
  });

  it('with depth 1 waits for each answer before sending the next frame', async () => {
    const r = rig(() => 1);
    r.camera(3);
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses).toHaveLength(1);
    r.analyses[0].resolve('a');
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses.map((a) => a.frame)).toEqual([1, 2]);
    expect(r.maxInFlight()).toBe(1);
    r.controller.abort();
    r.analyses[1].resolve('late');
    await r.done;
  });

  it('after a failure drops the answers still owed, waits, and starts again', async () => {
    const r = rig(() => 2);
    r.camera(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(r.analyses).toHaveLength(2);
    r.analyses[0].reject(new Error('engine lost'));
    r.analyses[1].resolve('stale');
    await vi.advanceTimersByTimeAsync(0);
    expect(r.errors).toHaveLength(1);
    expect(r.results).toEqual([]);
    r.camera();
    await vi.advanceTimersByTimeAsync(1999);
    expect(r.analyses).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(r.analyses.map((a) => a.frame)).toEqual([1, 2, 3]);
    r.analyses[2].resolve('c');
    await vi.advanceTimersByTimeAsync(0);
    expect(r.results).toEqual([['c', 3]]);
    r.controller.abort();
    await r.done;
  });
});
