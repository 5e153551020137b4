/**
 * The live camera with an overlay slot, or, when there is no picture, a panel that says why in words
 * (permission denied, no camera, busy...) with a button to try again.
 */
import type { JSX } from 'solid-js';
import { Show } from 'solid-js';
import { CAMERA_MESSAGES, type Camera } from '../lib/camera';

export function CameraView(props: { camera: Camera; label: string; children?: JSX.Element; mirrored?: boolean }) {
  const cam = props.camera;
  return (
    <div class="stage" classList={{ mirrored: props.mirrored ?? false }}>
      <video
        ref={(el) => cam.attach(el)}
        class="stage-media"
        classList={{ hidden: cam.state() !== 'live' }}
        autoplay
        muted
        playsinline
        aria-label={props.label}
      />
      <Show when={cam.state() === 'live'}>{props.children}</Show>
      <Show when={cam.state() !== 'live'}>
        <div
          class="stage-empty"
          data-testid="camera-message"
          role={cam.state() === 'starting' || cam.state() === 'off' ? 'status' : 'alert'}
        >
          <p>{CAMERA_MESSAGES[cam.state() as Exclude<ReturnType<Camera['state']>, 'live'>]}</p>
          <Show when={cam.state() === 'error' && cam.detail()}>
            <p class="muted">{cam.detail()}</p>
          </Show>
          <Show when={cam.state() !== 'starting' && cam.state() !== 'unsupported'}>
            <button type="button" class="button" onClick={() => void cam.start()}>
              {cam.state() === 'off' ? 'Start camera' : 'Try again'}
            </button>
          </Show>
        </div>
      </Show>
    </div>
  );
}
