/**
 * The webcam as a Solid primitive: start/stop, every failure turned into a state a page can explain
 * (permission denied, no camera, camera busy, no camera API on an insecure page), the torch where the device
 * has one, and frame capture: at once (`capture`, the picture now), or each new camera frame once
 * (`nextFrame`, for a live analysis that keeps up with the camera without analysing a frame twice). The
 * stream stops when the owning component goes away.
 */
import { createSignal, onCleanup } from 'solid-js';

export type CameraState = 'off' | 'starting' | 'live' | 'denied' | 'absent' | 'busy' | 'unsupported' | 'error';

/** What to tell a person for each state that is not live. */
export const CAMERA_MESSAGES: Record<Exclude<CameraState, 'live'>, string> = {
  off: 'The camera is off.',
  starting: 'Starting the camera…',
  denied:
    'Camera access was denied. Allow the camera for this site in your browser settings, then try again. You can also upload a photo instead.',
  absent: 'No camera was found on this device. Connect one and try again, or upload a photo instead.',
  busy: 'The camera is in use by another application. Close it and try again.',
  unsupported: 'This browser cannot use a camera here (the page must be opened over https or on localhost). Upload a photo instead.',
  error: 'The camera could not be started.',
};

export interface CapturedFrame {
  canvas: HTMLCanvasElement;
  width: number;
  height: number;
  /** nextFrame: the time taking it took once the camera had it (ms), for the page's own timing. */
  takenMs?: number;
}

export interface Camera {
  state: () => CameraState;
  /** Details of the last failure, for the `error` state. */
  detail: () => string;
  torchAvailable: () => boolean;
  torchOn: () => boolean;
  /** Give the camera its <video> element (a ref callback). */
  attach(video: HTMLVideoElement): void;
  start(): Promise<void>;
  stop(): void;
  setTorch(on: boolean): Promise<void>;
  /** The current frame at the camera's own resolution, or null when no frame is showing yet. */
  capture(into?: HTMLCanvasElement): CapturedFrame | null;
  /**
   * The camera's next frame not taken by an earlier call (waiting for the camera when there is none yet), or
   * null when the camera is not live or `signal` aborts. Its canvas holds the frame as a bitmap (a
   * `bitmaprenderer` context): made off the page's pixel path (createImageBitmap of the video), it draws and
   * snapshots as a 2D canvas does but has no 2D context to read pixels from.
   */
  nextFrame(signal?: AbortSignal): Promise<CapturedFrame | null>;
  video(): HTMLVideoElement | undefined;
}

export function createCamera(options: { width?: number; height?: number; facingMode?: 'user' | 'environment' } = {}): Camera {
  const [state, setState] = createSignal<CameraState>('off');
  const [detail, setDetail] = createSignal('');
  const [torchAvailable, setTorchAvailable] = createSignal(false);
  const [torchOn, setTorchOn] = createSignal(false);
  let stream: MediaStream | null = null;
  let videoEl: HTMLVideoElement | undefined;
  let generation = 0;
  const frames = createFrameClock();

  const attachStream = () => {
    if (videoEl && stream && videoEl.srcObject !== stream) {
      videoEl.srcObject = stream;
      void videoEl.play().catch(() => undefined);
      frames.follow(videoEl);
    }
  };

  const stop = () => {
    generation++;
    stream?.getTracks().forEach((t) => {
      t.stop();
    });
    stream = null;
    frames.stop();
    if (videoEl) videoEl.srcObject = null;
    setTorchAvailable(false);
    setTorchOn(false);
    setState('off');
  };

  const start = async () => {
    if (state() === 'live' || state() === 'starting') return;
    if (!navigator.mediaDevices?.getUserMedia) {
      setState('unsupported');
      return;
    }
    const mine = ++generation;
    setState('starting');
    try {
      const s = await navigator.mediaDevices.getUserMedia({
        audio: false,
        video: {
          width: { ideal: options.width ?? 640 },
          height: { ideal: options.height ?? 480 },
          facingMode: options.facingMode ?? 'user',
        },
      });
      if (mine !== generation) {
        for (const t of s.getTracks()) t.stop();
        return;
      }
      stream = s;
      const track = s.getVideoTracks()[0];
      const caps = (track?.getCapabilities?.() ?? {}) as MediaTrackCapabilities & { torch?: boolean };
      setTorchAvailable(caps.torch === true);
      attachStream();
      setState('live');
    } catch (err) {
      if (mine !== generation) return;
      const name = (err as DOMException)?.name;
      setDetail(err instanceof Error ? err.message : String(err));
      if (name === 'NotAllowedError' || name === 'SecurityError') setState('denied');
      else if (name === 'NotFoundError' || name === 'OverconstrainedError' || name === 'DevicesNotFoundError') setState('absent');
      else if (name === 'NotReadableError' || name === 'AbortError') setState('busy');
      else setState('error');
    }
  };

  const setTorch = async (on: boolean) => {
    const track = stream?.getVideoTracks()[0];
    if (!track || !torchAvailable()) return;
    await track.applyConstraints({ advanced: [{ torch: on } as MediaTrackConstraintSet] });
    setTorchOn(on);
  };

  const capture = (into?: HTMLCanvasElement): CapturedFrame | null => {
    if (!videoEl || state() !== 'live' || videoEl.readyState < 2 || !videoEl.videoWidth) return null;
    const canvas = into ?? document.createElement('canvas');
    canvas.width = videoEl.videoWidth;
    canvas.height = videoEl.videoHeight;
    canvas.getContext('2d')!.drawImage(videoEl, 0, 0);
    return { canvas, width: canvas.width, height: canvas.height };
  };

  const hasFrame = () => !!videoEl && state() === 'live' && videoEl.readyState >= 2 && videoEl.videoWidth > 0;

  const nextFrame = async (signal?: AbortSignal): Promise<CapturedFrame | null> => {
    const mine = generation;
    if (!(await frames.next(signal)) || mine !== generation || !hasFrame()) return null;
    const t0 = performance.now();
    const bitmap = await createImageBitmap(videoEl!);
    if (mine !== generation || signal?.aborted) {
      bitmap.close();
      return null;
    }
    const canvas = document.createElement('canvas');
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    const holder = canvas.getContext('bitmaprenderer');
    if (!holder) {
      // No bitmaprenderer: the bitmap drawn into a 2D canvas instead.
      canvas.getContext('2d')!.drawImage(bitmap, 0, 0);
      bitmap.close();
    } else holder.transferFromImageBitmap(bitmap);
    return { canvas, width: canvas.width, height: canvas.height, takenMs: performance.now() - t0 };
  };

  onCleanup(stop);

  return {
    state,
    detail,
    torchAvailable,
    torchOn,
    attach(video) {
      videoEl = video;
      attachStream();
    },
    start,
    stop,
    setTorch,
    capture,
    nextFrame,
    video: () => videoEl,
  };
}

/**
 * Counts the frames a <video> presents (requestVideoFrameCallback) so `next` can hand out each one once:
 * at once when a frame came since the last `next`, else at the next one. Browsers without the callback get
 * the picture at the next animation frame (possibly the same camera frame again).
 */
function createFrameClock() {
  let video: HTMLVideoElement | null = null;
  let handle = 0;
  let presented = 0;
  let taken = 0;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const tick = () => {
    if (!video) return;
    presented++;
    wake();
    handle = video.requestVideoFrameCallback(tick);
  };
  return {
    follow(el: HTMLVideoElement) {
      this.stop();
      video = el;
      if ('requestVideoFrameCallback' in el) handle = el.requestVideoFrameCallback(tick);
    },
    stop() {
      if (video && 'cancelVideoFrameCallback' in video) video.cancelVideoFrameCallback(handle);
      video = null;
      presented = 0;
      taken = 0;
      wake();
    },
    /** Resolves true when a frame not yet taken is showing (and takes it), false when stopped or aborted. */
    next(signal?: AbortSignal): Promise<boolean> {
      return new Promise((resolve) => {
        const el = video;
        if (!el || signal?.aborted) return resolve(false);
        if (!('requestVideoFrameCallback' in el)) {
          requestAnimationFrame(() => resolve(video === el && !signal?.aborted));
          return;
        }
        const check = () => {
          if (video !== el || signal?.aborted) return done(false);
          if (presented > taken) {
            taken = presented;
            done(true);
          }
        };
        const done = (ok: boolean) => {
          waiters.delete(check);
          signal?.removeEventListener('abort', check);
          resolve(ok);
        };
        waiters.add(check);
        signal?.addEventListener('abort', check, { once: true });
        check();
      });
    },
  };
}
