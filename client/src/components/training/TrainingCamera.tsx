/**
 * The training page's camera: live picture, a shutter, a full-screen capture mode (the Fullscreen API on the
 * stage, or a fixed-position fallback where the API is missing or refused, as on iPhone Safari), the torch
 * where the camera has one, and a front/back switch where the device has more than one camera.
 */
import { createEffect, createSignal, on, onCleanup, onMount, Show } from 'solid-js';
import { CameraView } from '../CameraView';
import { createCamera, type CameraState } from '../../lib/camera';
import { canvasToBlob } from '../../lib/images';

type Facing = 'user' | 'environment';

export interface TrainingCameraProps {
  /**
   * Called when the shutter is pressed, before the photo is made (what it is for, the name typed, is decided at
   * the press, not once the picture is ready); returns what keeps the photo: false when it was not kept (batch full).
   */
  onShutter: () => (blob: Blob) => boolean;
  count: number;
  /** Offered beside the camera's own message when it cannot be used. */
  onUploadInstead: () => void;
}

export function TrainingCamera(props: TrainingCameraProps) {
  const [facing, setFacing] = createSignal<Facing>('user');
  // Keyed: switching cameras drops the old stream (createCamera stops it on cleanup) and starts the other.
  return (
    <Show when={facing()} keyed>
      {(f) => <CameraPanel {...props} facing={f} onSwitch={() => setFacing(f === 'user' ? 'environment' : 'user')} />}
    </Show>
  );
}

/** How long the shutter waits for the camera's first picture. */
const FIRST_FRAME_WAIT_MS = 3000;

const CANNOT_USE: CameraState[] = ['denied', 'absent', 'unsupported', 'busy', 'error'];

function CameraPanel(props: TrainingCameraProps & { facing: Facing; onSwitch: () => void }) {
  const camera = createCamera({ facingMode: props.facing });
  const [cameras, setCameras] = createSignal(0);
  const [full, setFull] = createSignal(false);
  const [flash, setFlash] = createSignal(false);
  const [said, setSaid] = createSignal('');
  const [problem, setProblem] = createSignal('');
  let wrap!: HTMLDivElement;
  let fullButton: HTMLButtonElement | undefined;
  let stageShutter: HTMLButtonElement | undefined;
  const stage = () => wrap.querySelector<HTMLElement>('.stage');

  onMount(() => void camera.start());

  createEffect(
    on(camera.state, (s) => {
      if (s === 'live') {
        // Device labels and counts are only complete once permission is granted.
        navigator.mediaDevices
          ?.enumerateDevices()
          .then((d) => setCameras(d.filter((x) => x.kind === 'videoinput').length))
          .catch(() => undefined);
      } else if (full()) {
        exitFull(); // the camera's message and "Try again" live outside full-screen mode
      }
    }),
  );

  const take = async () => {
    setProblem('');
    const keep = props.onShutter();
    // Just after the camera starts it may have no picture yet: the first one is waited for (briefly).
    const frame = camera.capture() ?? (await camera.nextFrame(AbortSignal.timeout(FIRST_FRAME_WAIT_MS)));
    if (!frame) {
      setProblem('The camera has no picture yet. Wait a moment, then try again.');
      return;
    }
    let blob: Blob;
    try {
      blob = await canvasToBlob(frame.canvas);
    } catch (err) {
      setProblem(`The photo could not be made: ${(err as Error).message}.`);
      return;
    }
    if (!keep(blob)) {
      setProblem('That is plenty of photos for now. Save them, or remove some first.');
      return;
    }
    // A short white flash on the picture, and words for screen readers: the shutter is otherwise silent.
    setFlash(true);
    setTimeout(() => setFlash(false), 180);
    setSaid(`Photo ${props.count} taken.`);
  };

  const onFullscreenChange = () => {
    const el = stage();
    const native = !!el && document.fullscreenElement === el;
    if (native) {
      setFull(true);
      queueMicrotask(() => stageShutter?.focus());
    } else if (!el?.classList.contains('fullscreen')) {
      if (full()) fullButton?.focus();
      setFull(false);
    }
  };
  document.addEventListener('fullscreenchange', onFullscreenChange);

  const enterFull = async () => {
    const el = stage();
    if (!el) return;
    if (document.fullscreenEnabled && el.requestFullscreen) {
      try {
        await el.requestFullscreen({ navigationUI: 'hide' });
        return;
      } catch {
        // Refused (no user gesture, an iframe, a policy): the CSS fallback below still fills the screen.
      }
    }
    el.classList.add('fullscreen');
    document.documentElement.classList.add('training-no-scroll');
    setFull(true);
    queueMicrotask(() => stageShutter?.focus());
  };

  function exitFull() {
    const el = stage();
    const wasFull = full();
    if (el && document.fullscreenElement === el) void document.exitFullscreen().catch(() => undefined);
    el?.classList.remove('fullscreen');
    document.documentElement.classList.remove('training-no-scroll');
    setFull(false);
    if (wasFull) queueMicrotask(() => fullButton?.focus());
  }

  // The browser's own full screen ends on Escape by itself; the CSS fallback needs this.
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && full()) exitFull();
  };
  document.addEventListener('keydown', onKey);
  onCleanup(() => {
    document.removeEventListener('fullscreenchange', onFullscreenChange);
    document.removeEventListener('keydown', onKey);
    exitFull();
  });

  const toggleTorch = () => camera.setTorch(!camera.torchOn()).catch(() => setProblem('The flash could not be switched.'));
  const live = () => camera.state() === 'live';
  const FlashButton = (p: { class?: string }) => (
    <Show when={camera.torchAvailable()}>
      <button type="button" class={`secondary ${p.class ?? ''}`} aria-pressed={camera.torchOn() ? 'true' : 'false'} onClick={toggleTorch}>
        {camera.torchOn() ? 'Flash: on' : 'Flash: off'}
      </button>
    </Show>
  );

  return (
    <div class="training-camera" ref={wrap} data-testid="training-camera">
      <CameraView camera={camera} label="Camera picture">
        <div class="training-flash" classList={{ on: flash() }} aria-hidden="true" />
        <Show when={full()}>
          <div class="training-stage-controls" data-testid="fullscreen-controls">
            <span class="training-stage-count" aria-live="polite">
              {props.count} {props.count === 1 ? 'photo' : 'photos'} taken
            </span>
            <button type="button" class="training-shutter" ref={stageShutter} onClick={() => void take()}>
              Take photo
            </button>
            <div class="row">
              <FlashButton />
              <button type="button" class="secondary" onClick={exitFull}>
                Exit full screen
              </button>
            </div>
          </div>
        </Show>
      </CameraView>

      <Show when={CANNOT_USE.includes(camera.state())}>
        <p class="training-camera-alt">
          <button type="button" class="secondary" onClick={props.onUploadInstead}>
            Upload photos instead
          </button>
        </p>
      </Show>

      {/* Hidden, not disabled, when the camera cannot work: the message above says what to do instead. */}
      <Show when={!CANNOT_USE.includes(camera.state())}>
        <div class="row training-camera-controls">
          <button type="button" class="training-take" disabled={!live()} onClick={() => void take()}>
            Take photo
          </button>
          <button type="button" class="secondary" ref={fullButton} disabled={!live()} onClick={() => void enterFull()}>
            Full screen
          </button>
          <FlashButton />
          <Show when={cameras() > 1}>
            <button type="button" class="secondary" onClick={() => props.onSwitch()}>
              {props.facing === 'user' ? 'Use back camera' : 'Use front camera'}
            </button>
          </Show>
        </div>
      </Show>
      <Show when={problem()}>
        <p class="training-field-error" role="alert">
          {problem()}
        </p>
      </Show>
      <p class="training-sr-only" aria-live="polite">
        {said()}
      </p>
    </div>
  );
}
