/**
 * AnalysisCamera's picture, overlay and frame rate with the analysis pipelined (frame-pipeline.ts): while one
 * camera frame is analysed the next is already taken and sent (`depth` frames at once), each camera frame once,
 * taken without a pixel read on the page (camera.nextFrame). Used where the engine can take frames back to
 * back (live recognition and objects in this browser); `depth` 1 is AnalysisCamera's one request in flight.
 */
import { createSignal, onMount } from 'solid-js';
import { markLiveFrame } from '../../lib/analyze';
import { createCamera } from '../../lib/camera';
import { createPipelinedLoop } from './frame-pipeline';
import { formatFps } from './live-loop';
import { LiveStage } from './LiveStage';

export interface PipelinedCameraProps<T> {
  /** The video's accessible name. */
  label: string;
  facingMode?: 'user' | 'environment';
  /** Extra condition to analyse (e.g. the detector has loaded); the picture shows either way. */
  ready?: boolean;
  /** Frames analysed at once, read before each frame is sent: 2 keeps an engine busy, 1 waits for each answer. */
  depth: () => number;
  analyze: (frame: HTMLCanvasElement, signal: AbortSignal) => Promise<T>;
  /** Draws a result over the picture; the overlay has the frame's pixel size. */
  draw: (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, result: T) => void;
  onResult: (result: T, frame: HTMLCanvasElement) => void;
  onError: (err: unknown) => void;
}

export function PipelinedCamera<T>(props: PipelinedCameraProps<T>) {
  const camera = createCamera({ facingMode: props.facingMode ?? 'user' });
  const [overlay, setOverlay] = createSignal<HTMLCanvasElement>();
  onMount(() => void camera.start());

  const loop = createPipelinedLoop<HTMLCanvasElement, T>({
    active: () => camera.state() === 'live' && (props.ready ?? true),
    grab: async (signal) => {
      // A canvas per frame: the result keeps the very pixels it was computed from (face crops).
      const frame = await camera.nextFrame(signal);
      if (frame) markLiveFrame(frame.canvas);
      return frame?.canvas ?? null;
    },
    analyze: (frame, signal) => props.analyze(frame, signal),
    depth: () => props.depth(),
    onResult: (result, frame) => {
      const o = overlay();
      if (o) props.draw(o, frame, result);
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
      status={loop.running() ? 'Live' : (props.ready ?? true) ? 'Paused' : 'Waiting'}
    >
      <span data-testid="fps" title="Analysed frames per second">
        {formatFps(loop.fps())}
      </span>
    </LiveStage>
  );
}
