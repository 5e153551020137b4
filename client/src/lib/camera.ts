/**
 * The webcam as a Solid primitive: start/stop, every failure turned into a state a page can explain
 * (permission denied, no camera, camera busy, no camera API on an insecure page), the torch where the device
 * has one, and frame capture. The stream stops when the owning component goes away.
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

  const attachStream = () => {
    if (videoEl && stream && videoEl.srcObject !== stream) {
      videoEl.srcObject = stream;
      void videoEl.play().catch(() => undefined);
    }
  };

  const stop = () => {
    generation++;
    stream?.getTracks().forEach((t) => {
      t.stop();
    });
    stream = null;
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
    video: () => videoEl,
  };
}
