/**
 * What AnalysisCamera and PipelinedCamera both do with a result and show around the picture, kept in one place
 * so the two loops (one request at a time, pipelined) differ only in how they take and send frames.
 */
import type { Accessor } from 'solid-js';
import type { Camera } from '../../lib/camera';
import { formatFps } from './live-loop';
import { LiveStage } from './LiveStage';

interface ResultSink<T> {
  draw: (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, result: T) => void;
  onResult: (result: T, frame: HTMLCanvasElement) => void;
}

/** Draws a result over the picture (once the overlay exists), then hands it to the page. */
export function drawThenReport<T>(overlay: Accessor<HTMLCanvasElement | undefined>, sink: ResultSink<T>) {
  return (result: T, frame: HTMLCanvasElement) => {
    const o = overlay();
    if (o) sink.draw(o, frame, result);
    sink.onResult(result, frame);
  };
}

export interface FpsLiveStageProps {
  camera: Camera;
  label: string;
  overlayRef: (canvas: HTMLCanvasElement) => void;
  running: boolean;
  /** Analysed frames per second. */
  fps: number | null;
  /** The page's extra condition to analyse; without it the bar says "Waiting" rather than "Paused". */
  ready?: boolean;
}

/** LiveStage with the state and the analysed frame rate in its bar. */
export function FpsLiveStage(props: FpsLiveStageProps) {
  return (
    <LiveStage
      camera={props.camera}
      label={props.label}
      overlayRef={props.overlayRef}
      running={props.running}
      status={props.running ? 'Live' : (props.ready ?? true) ? 'Paused' : 'Waiting'}
    >
      <span data-testid="fps" title="Analysed frames per second">
        {formatFps(props.fps)}
      </span>
    </LiveStage>
  );
}
