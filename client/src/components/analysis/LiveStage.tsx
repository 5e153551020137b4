/**
 * What every live analysis camera shows (AnalysisCamera, PipelinedCamera, SafetyCamera): the picture, the overlay
 * the results are drawn on, and while the camera is live a bar with the state and what the camera adds to it.
 */
import { type JSX, Show } from 'solid-js';
import { CameraView } from '../CameraView';
import type { Camera } from '../../lib/camera';

export interface LiveStageProps {
  camera: Camera;
  /** The video's accessible name. */
  label: string;
  overlayRef: (canvas: HTMLCanvasElement) => void;
  /** Whether frames are being analysed (the dot is lit). */
  running: boolean;
  /** The state in words ("Live", "Paused", ...). */
  status: string;
  /** More of the bar: the frame rate, the time of the last check. */
  children?: JSX.Element;
}

export function LiveStage(props: LiveStageProps) {
  return (
    <div class="analysis-camera">
      <CameraView camera={props.camera} label={props.label}>
        {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: a canvas without tabindex is not focusable (and this one lets pointer events through); the boxes drawn on it are for the eye, the results are given in text */}
        <canvas ref={props.overlayRef} class="stage-overlay" aria-hidden="true" />
      </CameraView>
      <Show when={props.camera.state() === 'live'}>
        <p class="live-bar">
          <span class="live-dot" classList={{ paused: !props.running }} aria-hidden="true" />
          <span>{props.status}</span>
          {props.children}
        </p>
      </Show>
    </div>
  );
}
