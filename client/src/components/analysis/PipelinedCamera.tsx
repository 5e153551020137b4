/**
 * AnalysisCamera's picture, overlay and frame rate with the analysis pipelined (frame-pipeline.ts): while one
 * camera frame is analysed the next is already taken and sent (`depth` frames at once), each camera frame once,
 * taken without a pixel read on the page (camera.nextFrame). Used where the engine can take frames back to
 * back (live recognition and objects in this browser); `depth` 1 is AnalysisCamera's one request in flight.
 */
import { createSignal, onMount } from 'solid-js';
import { markLiveFrame } from '../../lib/analyze';
import { createCamera } from '../../lib/camera';
import type { AnalysisCameraProps } from './AnalysisCamera';
import { createPipelinedLoop } from './frame-pipeline';
import { drawThenReport, FpsLiveStage } from './FpsLiveStage';

export interface PipelinedCameraProps<T> extends AnalysisCameraProps<T> {
  /** Frames analysed at once, read before each frame is sent: 2 keeps an engine busy, 1 waits for each answer. */
  depth: () => number;
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
    onResult: drawThenReport(overlay, props),
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
