/**
 * Continuous analysis of a live camera with at most one request in flight: the next frame is captured only
 * when the previous reply has arrived, so a slow server or network lowers the frame rate instead of building
 * a queue. The loop runs while `active()` is true and the tab is visible, and stops (aborting the request in
 * flight) when either turns false or the owner goes away. After a failure it waits RETRY_MS before the next
 * try, so an unreachable server is asked gently until it is back.
 *
 * `runLoop` is the loop itself, free of Solid and the DOM (unit-tested); `createLiveLoop` wires it to signals.
 */
import { createEffect, createMemo, createSignal, onCleanup } from 'solid-js';

export const RETRY_MS = 2000;
/** The frame rate is averaged over the replies of this many last milliseconds. */
export const FPS_WINDOW_MS = 5000;
/** How long to wait when the camera has no picture yet. */
export const NO_FRAME_WAIT_MS = 100;

export interface LiveLoopOptions<T> {
  active: () => boolean;
  /** Captures a frame and analyses it; null when there is no frame yet (it is tried again shortly). */
  step: (signal: AbortSignal) => Promise<T | null>;
  onResult: (result: T) => void;
  onError: (err: unknown) => void;
}

export interface LiveLoop {
  /** Analysed frames per second over the last few seconds; null until two replies or while stopped. */
  fps: () => number | null;
  /** Whether the loop is running now (active and the tab visible). */
  running: () => boolean;
}

export interface LoopRun<T> extends Omit<LiveLoopOptions<T>, 'active'> {
  /** The rate after each reply (null: not known yet, or reset by a failure). */
  onFps: (fps: number | null) => void;
  retryMs?: number;
  noFrameMs?: number;
  now?: () => number;
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Steps until `signal` aborts; resolves then. A step's result or failure after the abort is dropped. */
export async function runLoop<T>(run: LoopRun<T>, signal: AbortSignal): Promise<void> {
  const now = run.now ?? (() => performance.now());
  const times: number[] = [];
  while (!signal.aborted) {
    let result: T | null;
    try {
      result = await run.step(signal);
    } catch (err) {
      if (signal.aborted) return;
      run.onError(err);
      // The rate before a failure says nothing about the rate after it.
      times.length = 0;
      run.onFps(null);
      await sleep(run.retryMs ?? RETRY_MS, signal);
      continue;
    }
    if (signal.aborted) return;
    if (result === null) {
      await sleep(run.noFrameMs ?? NO_FRAME_WAIT_MS, signal);
      continue;
    }
    const t = now();
    times.push(t);
    while (times.length > 0 && t - times[0] > FPS_WINDOW_MS) times.shift();
    run.onFps(times.length >= 2 ? (times.length - 1) / ((t - times[0]) / 1000) : null);
    run.onResult(result);
  }
}

/** `document.visibilityState === 'visible'` as a signal, for as long as the owner lives. */
export function createVisible(): () => boolean {
  const [visible, setVisible] = createSignal(document.visibilityState === 'visible');
  const update = () => setVisible(document.visibilityState === 'visible');
  document.addEventListener('visibilitychange', update);
  onCleanup(() => document.removeEventListener('visibilitychange', update));
  return visible;
}

/**
 * Runs `start` (a loop that ends when its signal aborts) while `active()` and the page is visible, restarting it
 * when either comes back; the frame rate it reports is the loop's `fps`. Shared by the one-at-a-time loop below
 * and the pipelined one (frame-pipeline.ts).
 */
export function createRunningLoop(
  active: () => boolean,
  start: (signal: AbortSignal, onFps: (fps: number | null) => void) => void,
): LiveLoop {
  const visible = createVisible();
  const [fps, setFps] = createSignal<number | null>(null);
  // A memo: the loop restarts only when running really changes, not whenever a signal behind it is set.
  const running = createMemo(() => active() && visible());
  let stopCurrent: (() => void) | null = null;

  createEffect(() => {
    stopCurrent?.();
    stopCurrent = null;
    if (!running()) {
      setFps(null);
      return;
    }
    const controller = new AbortController();
    stopCurrent = () => controller.abort();
    start(controller.signal, setFps);
  });
  onCleanup(() => stopCurrent?.());

  return { fps, running };
}

export function createLiveLoop<T>(options: LiveLoopOptions<T>): LiveLoop {
  return createRunningLoop(options.active, (signal, onFps) => {
    void runLoop({ step: options.step, onResult: options.onResult, onError: options.onError, onFps }, signal);
  });
}

/** "4.2 fps", or a dash while there is no rate yet. */
export function formatFps(fps: number | null): string {
  return fps === null ? '– fps' : `${fps.toFixed(1)} fps`;
}
