/**
 * The live camera of an analysis page: the picture, an overlay of the last result, and the frame rate. It
 * starts the camera when shown and analyses frame after frame (one request at a time, see live-loop.ts); the
 * camera and the loop stop when it is removed (source switched, page left).
 */
import { createSignal, onMount } from 'solid-js';
import { markLiveFrame } from '../../lib/analyze';
import { createCamera } from '../../lib/camera';
import { drawThenReport, FpsLiveStage } from './FpsLiveStage';
import { createLiveLoop } from './live-loop';

export interface AnalysisCameraProps<T> {
  /** The video's accessible name. */
  label: string;
  facingMode?: 'user' | 'environment';
  /** Extra condition to analyse (e.g. the detector has loaded); the picture shows either way. */
  ready?: boolean;
  analyze: (frame: HTMLCanvasElement, signal: AbortSignal) => Promise<T>;
  /** Draws a result over the picture; the overlay has the frame's pixel size. */
  draw: (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, result: T) => void;
  onResult: (result: T, frame: HTMLCanvasElement) => void;
  onError: (err: unknown) => void;
}

export function AnalysisCamera<T>(props: AnalysisCameraProps<T>) {
  const camera = createCamera({ facingMode: props.facingMode ?? 'user' });
  const [overlay, setOverlay] = createSignal<HTMLCanvasElement>();
  onMount(() => void camera.start());
  const report = drawThenReport(overlay, props);

  const loop = createLiveLoop<{ result: T; frame: HTMLCanvasElement }>({
    active: () => camera.state() === 'live' && (props.ready ?? true),
    step: async (signal) => {
      // A fresh canvas per frame: the result keeps the very pixels it was computed from (face crops).
      const frame = camera.capture();
      if (!frame) return null;
      markLiveFrame(frame.canvas);
      return { result: await props.analyze(frame.canvas, signal), frame: frame.canvas };
    },
    onResult: ({ result, frame }) => report(result, frame),
    onError: (err) => props.onError(err),
  });

  return (
    <FpsLiveStage
      camera={camera}
      label={props.label}
      overlayRef={setOverlay}
      running={loop.running()}
      fps={loop.fps()}
      ready={props.ready}
    />
  );
}
