/**
 * Live analysis that keeps up with the camera: up to `depth` frames are being analysed at once, so the next
 * camera frame is taken and sent while the previous one is still being analysed, and the engine starts on it
 * the moment it is free (the in-browser engine works through its frames in order). Each camera frame is taken
 * once (camera.nextFrame), so the rate counts real frames, at most the camera's. Results come in the order the
 * frames were taken, each with its own frame. Depth 1 is live-loop.ts's one request in flight (the server: a
 * slow server lowers the rate instead of building a queue).
 *
 * As live-loop.ts: runs while `active()` and the tab is visible; after a failure the answers still owed are
 * dropped and the next try waits RETRY_MS. `runPipeline` is the loop itself, free of Solid and the DOM
 * (unit-tested); `createPipelinedLoop` wires it to signals.
 */
import { createRunningLoop, FPS_WINDOW_MS, NO_FRAME_WAIT_MS, RETRY_MS, sleep, type LiveLoop } from './live-loop';

export interface PipelineOptions<F, R> {
  active: () => boolean;
  /** The camera's next frame (each once); null when there is none (tried again shortly). */
  grab: (signal: AbortSignal) => Promise<F | null>;
  analyze: (frame: F, signal: AbortSignal) => Promise<R>;
  /** Frames analysed at once, read before each frame is sent (at least 1). */
  depth: () => number;
  onResult: (result: R, frame: F) => void;
  onError: (err: unknown) => void;
}

export interface PipelineRun<F, R> extends Omit<PipelineOptions<F, R>, 'active'> {
  /** The rate after each result (null: not known yet, or reset by a failure). */
  onFps: (fps: number | null) => void;
  retryMs?: number;
  noFrameMs?: number;
  now?: () => number;
}

type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

type Event<F, R> =
  | { kind: 'frame'; frame: F | null }
  | { kind: 'grab-failed'; error: unknown }
  | { kind: 'no-frame-wait-over' }
  | { kind: 'answer'; outcome: Outcome<R> };

/**
 * Runs until `signal` aborts; resolves then. Results or failures after the abort are dropped. Waiting for the
 * camera's next frame and for the oldest answer go on side by side, so neither holds up the other.
 */
export async function runPipeline<F, R>(run: PipelineRun<F, R>, signal: AbortSignal): Promise<void> {
  const now = run.now ?? (() => performance.now());
  const times: number[] = [];
  const inflight: { frame: F; outcome: Promise<Outcome<R>> }[] = [];
  // A grab under way, or the pause after the camera had no frame (no new grab meanwhile).
  let grabbing: Promise<Event<F, R>> | null = null;
  const fail = async (error: unknown) => {
    run.onError(error);
    // The rate before a failure says nothing about the rate after it; answers to frames sent before it are stale.
    times.length = 0;
    run.onFps(null);
    await Promise.all(inflight.splice(0).map((f) => f.outcome));
    await sleep(run.retryMs ?? RETRY_MS, signal);
  };
  while (!signal.aborted) {
    if (!grabbing && inflight.length < Math.max(1, run.depth())) {
      grabbing = run.grab(signal).then(
        (frame): Event<F, R> => ({ kind: 'frame', frame }),
        (error: unknown): Event<F, R> => ({ kind: 'grab-failed', error }),
      );
    }
    const waits: Promise<Event<F, R>>[] = grabbing ? [grabbing] : [];
    const head = inflight[0];
    if (head) waits.push(head.outcome.then((outcome): Event<F, R> => ({ kind: 'answer', outcome })));
    const event = await Promise.race(waits);
    if (signal.aborted) return;
    if (event.kind === 'frame') {
      if (event.frame === null) {
        grabbing = sleep(run.noFrameMs ?? NO_FRAME_WAIT_MS, signal).then((): Event<F, R> => ({ kind: 'no-frame-wait-over' }));
        continue;
      }
      grabbing = null;
      const outcome = run.analyze(event.frame, signal).then(
        (result): Outcome<R> => ({ ok: true, result }),
        (error: unknown): Outcome<R> => ({ ok: false, error }),
      );
      inflight.push({ frame: event.frame, outcome });
    } else if (event.kind === 'no-frame-wait-over') {
      grabbing = null;
    } else if (event.kind === 'grab-failed') {
      grabbing = null;
      await fail(event.error);
    } else {
      inflight.shift();
      if (!event.outcome.ok) {
        await fail(event.outcome.error);
        continue;
      }
      const t = now();
      times.push(t);
      while (times.length > 0 && t - times[0] > FPS_WINDOW_MS) times.shift();
      run.onFps(times.length >= 2 ? (times.length - 1) / ((t - times[0]) / 1000) : null);
      run.onResult(event.outcome.result, head.frame);
    }
  }
}

export function createPipelinedLoop<F, R>(options: PipelineOptions<F, R>): LiveLoop {
  const { grab, analyze, depth, onResult, onError } = options;
  return createRunningLoop(options.active, (signal, onFps) => {
    void runPipeline({ grab, analyze, depth, onResult, onError, onFps }, signal);
  });
}
