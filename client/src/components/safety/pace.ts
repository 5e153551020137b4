/**
 * The Safety camera's pace: a frame is taken `intervalMs` after the one before it was taken (not after its reply,
 * not after its encoding), waited out in short slices so a changed interval or a stop applies soon. The clock and
 * the sleep are given, so the schedule is tested with fake timers (pace.test.ts) rather than timed on a real page.
 */

/** The wait before a check is taken in slices this long, so a changed interval or a stop applies soon. */
export const SLICE_MS = 200;

export interface PaceOptions {
  intervalMs: () => number;
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface Pace {
  /** Resolves when the next frame is due (at once for the first), or when `signal` aborts; true when due. */
  due: (signal: AbortSignal) => Promise<boolean>;
  /** Marks that a frame was taken now: the next is due an interval later. */
  taken: () => void;
}

export function createPace({ intervalMs, now, sleep }: PaceOptions): Pace {
  let takenAt = Number.NEGATIVE_INFINITY;
  return {
    async due(signal) {
      for (;;) {
        if (signal.aborted) return false;
        const wait = takenAt + intervalMs() - now();
        if (wait <= 0) return true;
        await sleep(Math.min(wait, SLICE_MS), signal);
      }
    },
    taken() {
      takenAt = now();
    },
  };
}
