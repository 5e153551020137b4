import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sleep } from '../analysis/live-loop';
import { createPace } from './pace';

/** The Safety camera's schedule on a fake clock: no wall-clock gap measured on a busy machine (#36). */
describe('createPace', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs checks like SafetyCamera's step: wait until due, take the frame, then encode and ask for `workMs[i]`. */
  async function run(pace: ReturnType<typeof createPace>, workMs: number[], signal = new AbortController().signal) {
    const taken: number[] = [];
    const loop = (async () => {
      for (const work of workMs) {
        if (!(await pace.due(signal))) break;
        pace.taken();
        taken.push(Date.now());
        await new Promise((r) => setTimeout(r, work));
      }
    })();
    await vi.runAllTimersAsync();
    await loop;
    return taken;
  }

  it('takes a frame every interval after the one before was taken, whatever the encoding and the reply took', async () => {
    let interval = 1000;
    const pace = createPace({ intervalMs: () => interval, now: () => Date.now(), sleep });
    // A slow encoding (605 ms) followed by a fast one: the gap between requests on a page shrank to 395 ms, yet the
    // frames themselves were taken on time.
    expect(await run(pace, [605, 5, 300, 999])).toEqual([0, 1000, 2000, 3000]);
    interval = 5000;
    expect(await run(pace, [10, 10])).toEqual([8000, 13000]);
  });

  it('a check that takes longer than the interval is followed at once by the next, never two at a time', async () => {
    const pace = createPace({ intervalMs: () => 1000, now: () => Date.now(), sleep });
    expect(await run(pace, [1500, 10, 10])).toEqual([0, 1500, 2500]);
  });

  it('a new interval applies to the wait already running', async () => {
    let interval = 5000;
    const pace = createPace({ intervalMs: () => interval, now: () => Date.now(), sleep });
    pace.taken();
    const due = pace.due(new AbortController().signal);
    await vi.advanceTimersByTimeAsync(400);
    interval = 1000;
    await vi.advanceTimersByTimeAsync(600);
    await expect(due).resolves.toBe(true);
    expect(Date.now()).toBe(1000);
  });

  it('a stop ends the wait within a slice and takes no frame', async () => {
    const pace = createPace({ intervalMs: () => 5000, now: () => Date.now(), sleep });
    pace.taken();
    const stop = new AbortController();
    const due = pace.due(stop.signal);
    await vi.advanceTimersByTimeAsync(1000);
    stop.abort();
    await expect(due).resolves.toBe(false);
    expect(Date.now()).toBe(1000);
  });
});
