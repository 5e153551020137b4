/**
 * The Safety page's live camera: a frame is checked every `intervalMs` (not as fast as the server answers, as
 * on the objects page), still with one request in flight at most: the loop is the analysis pages' own
 * (live-loop.ts), whose step here first waits out the rest of the interval, then takes the frame. A new
 * interval applies to the wait already running. Nothing is sent while `ready` is false (the detector cannot
 * be reached); the picture shows either way.
 */
import { createSignal, onMount, Show } from 'solid-js';
import { createCamera } from '../../lib/camera';
import { createLiveLoop, sleep } from '../analysis/live-loop';
import { LiveStage } from '../analysis/LiveStage';
import { createPace } from './pace';

export interface SafetyCameraProps<T> {
  label: string;
  intervalMs: number;
  ready: boolean;
  analyze: (frame: HTMLCanvasElement, signal: AbortSignal) => Promise<T>;
  draw: (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, result: T) => void;
  onResult: (result: T, frame: HTMLCanvasElement) => void;
  onError: (err: unknown) => void;
}

export function SafetyCamera<T>(props: SafetyCameraProps<T>) {
  const camera = createCamera({ facingMode: 'environment' });
  const [overlay, setOverlay] = createSignal<HTMLCanvasElement>();
  const [lastCheck, setLastCheck] = createSignal<Date | null>(null);
  onMount(() => void camera.start());

  const pace = createPace({ intervalMs: () => props.intervalMs, now: () => performance.now(), sleep });
  const loop = createLiveLoop<{ result: T; frame: HTMLCanvasElement }>({
    active: () => camera.state() === 'live' && props.ready,
    step: async (signal) => {
      if (!(await pace.due(signal))) return null;
      const frame = camera.capture();
      if (!frame) return null;
      pace.taken();
      return { result: await props.analyze(frame.canvas, signal), frame: frame.canvas };
    },
    onResult: ({ result, frame }) => {
      const o = overlay();
      if (o) props.draw(o, frame, result);
      setLastCheck(new Date());
      props.onResult(result, frame);
    },
    onError: (err) => props.onError(err),
  });

  return (
    <LiveStage
      camera={camera}
      label={props.label}
      overlayRef={setOverlay}
      running={loop.running()}
      status={loop.running() ? `Live: a check every ${props.intervalMs / 1000} s` : props.ready ? 'Paused' : 'Waiting for the detector'}
    >
      <Show when={lastCheck()}>
        {(t) => (
          <span data-testid="last-check" class="muted">
            last at {t().toLocaleTimeString()}
          </span>
        )}
      </Show>
    </LiveStage>
  );
}
