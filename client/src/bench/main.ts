/**
 * The in-browser engine bench (bench.html). With `?mode=lbph|embedding|objects&backend=...&seconds=N` it
 * starts the camera at 640x480, loads the server's trained models (for the face modes), and runs the live
 * loop: the live pages' pipeline (each camera frame once, the next sent while one is analysed; `&depth=1`
 * waits for each answer instead). Objects: `&lanes=N` detects overlapping frames on N single-threaded object
 * lanes, `&lanes=0` on the engine worker alone (default: the Objects page's, defaultLanePlan).
 * The summary goes to `window.__benchResult` and into <pre id="result">; a failure to `window.__benchError`.
 *
 * Without `mode` the page only exposes `window.lookoutEngine`, the harness the e2e tests drive: the same
 * engine on images they pass in, so its answers can be compared with the server's.
 */
import { createRoot } from 'solid-js';
import type { EngineBenchMode as Mode, EngineBenchResult as BenchResult } from '../../../shared/bench/engine-bench';
import {
  createEngine,
  type BackendChoice,
  type EngineClient,
  type EngineInitOptions,
  type RecognizeOptions,
  type RecognizeResult,
  type DetectObjectsResult,
} from '../engine/client';
import { defaultLanePlan, type LanePlan } from '../engine/object-pool';
import { fetchTrainedModels } from '../engine/models';
import { ModelSync } from '../engine/model-sync';
import { decodeImageFile } from '../engine/pixels';
import type { ModelTexts } from '../engine/protocol';
import { createCamera, CAMERA_MESSAGES, type Camera } from '../lib/camera';
import { runPipeline } from '../components/analysis/frame-pipeline';
import { drawFaces, drawObjects } from '../lib/overlay';

declare global {
  interface Window {
    __benchResult?: BenchResult;
    __benchError?: string;
    lookoutEngine?: ReturnType<typeof harness>;
  }
}

const statusEl = document.getElementById('status')!;
const resultEl = document.getElementById('result')!;

function setStatus(text: string, state: 'busy' | 'done' | 'error' = 'busy'): void {
  statusEl.textContent = text;
  statusEl.dataset.state = state;
}

function median(values: number[]): number {
  if (!values.length) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function quantile(values: number[], q: number): number {
  if (!values.length) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

const round = (v: number) => Math.round(v * 100) / 100;

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** What the e2e tests call through page.evaluate: images travel as base64 text. */
function harness(engine: EngineClient) {
  const decode = (b64: string, type: string) => decodeImageFile(new Blob([base64ToBytes(b64) as BlobPart], { type }));
  // The pages' model check (model-sync.ts), run when asked rather than on a timer; what it installed last is kept.
  let installed: Awaited<ReturnType<EngineClient['setModel']>> | null = null;
  const sync = new ModelSync({
    install: async (models) => {
      installed = await engine.setModel(models);
    },
    base: document.baseURI,
  });
  return {
    init: (options: EngineInitOptions) => engine.init(options),
    setModel: (models: ModelTexts) => engine.setModel(models),
    /** The server's trained models via GET /api/models/trained. */
    loadServerModels: async (indexUrl?: string) => {
      const { version, ...texts } = await fetchTrainedModels(indexUrl);
      return { version, ...(await engine.setModel(texts)) };
    },
    /** One check of the pages' model sync (If-None-Match, then only what changed): the version, and what is installed. */
    checkServerModels: async () => {
      await sync.check();
      return { version: sync.version ?? null, installed, download: sync.lastDownload };
    },
    /** An image file, decoded by this browser as the app decodes uploads. */
    recognizeFile: async (b64: string, type: string, options: RecognizeOptions) => engine.recognize(await decode(b64, type), options),
    /** Pixels decoded elsewhere (RGBA, base64). */
    recognizeRgba: (b64: string, width: number, height: number, options: RecognizeOptions) =>
      engine.recognize({ data: base64ToBytes(b64), width, height }, options),
    detectObjectsFile: async (b64: string, type: string, confidence?: number) => engine.detectObjects(await decode(b64, type), confidence),
    /** Several files detected at once (their calls overlap, as a live camera's frames do: object lanes). */
    detectObjectsFiles: async (files: { b64: string; type: string }[], confidence?: number) => {
      const images = await Promise.all(files.map((f) => decode(f.b64, f.type)));
      return Promise.all(images.map((img) => engine.detectObjects(img, confidence)));
    },
    /** Object lanes running, once those being started are loaded. */
    objectLanes: async () => {
      await engine.objectLanesReady();
      return engine.objectLanes;
    },
    /** What detects objects (#29: WASM, WebGPU once warm), once a WebGPU lane being warmed is warm or given up. */
    objectBackend: async () => {
      await engine.objectGpuReady();
      return engine.objectBackend;
    },
    trainFiles: async (files: { label: string; b64: string; type: string }[]) =>
      engine.train(await Promise.all(files.map(async (f) => ({ label: f.label, image: await decode(f.b64, f.type) })))),
    /** The gray bytes' checksum of a decoded file, to check this browser decodes it as the server does. */
    decodeFile: async (b64: string, type: string) => {
      const img = await decode(b64, type);
      let sum = 0;
      for (let i = 0; i < img.data.length; i += 4) sum = (sum * 31 + img.data[i] + 7 * img.data[i + 1] + 13 * img.data[i + 2]) >>> 0;
      return { width: img.width, height: img.height, rgbChecksum: sum };
    },
  };
}

async function waitForFrame(camera: Camera, video: HTMLVideoElement, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(camera.state() === 'live' && video.readyState >= 2 && video.videoWidth > 0)) {
    const state = camera.state();
    if (state !== 'starting' && state !== 'live' && state !== 'off') throw new Error(CAMERA_MESSAGES[state]);
    if (performance.now() > deadline) throw new Error('the camera gave no frame within 15 seconds');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function runBench(engine: EngineClient, params: URLSearchParams): Promise<BenchResult> {
  const mode = (params.get('mode') ?? 'lbph') as Mode;
  if (!['lbph', 'embedding', 'objects'].includes(mode)) throw new Error(`mode must be lbph, embedding or objects, got "${mode}"`);
  const backend = (params.get('backend') ?? 'auto') as BackendChoice;
  if (!['auto', 'wasm', 'webgl', 'webgpu'].includes(backend))
    throw new Error(`backend must be wasm, webgl, webgpu or auto, got "${backend}"`);
  const seconds = Number(params.get('seconds') ?? '10');
  const threads = params.has('threads') ? Number(params.get('threads')) : undefined;
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1 && threads <= 16))
    throw new Error('threads must be a whole number from 1 to 16');
  if (!(seconds > 0 && seconds <= 600)) throw new Error('seconds must be a number from 1 to 600');
  // Frames analysed at once by the face modes (the live page's 2; 1: each frame waits for the previous answer).
  const depth = Number(params.get('depth') ?? '2');
  if (!(depth === 1 || depth === 2)) throw new Error('depth must be 1 or 2');
  const lanesParam = params.get('lanes');
  const lanes = lanesParam === null ? undefined : Number(lanesParam);
  if (lanes !== undefined && !(Number.isInteger(lanes) && lanes >= 0 && lanes <= 4))
    throw new Error('lanes must be a whole number from 0 to 4');
  const objectLanes: LanePlan | null | undefined = lanes === undefined ? undefined : lanes < 2 ? null : { lanes, threadsPerLane: 1 };

  setStatus(`Starting the engine (${backend})…`);
  const init = await engine.init({
    backend,
    ...(threads !== undefined ? { cascadeThreads: threads } : {}),
    ...(objectLanes !== undefined ? { objectLanes } : {}),
    preload: { embedding: mode === 'embedding', objects: mode === 'objects' },
    ...(params.get('yolo') ? { urls: { yolo: params.get('yolo')! } } : {}),
  });
  if (mode === 'embedding' && !init.embedding.loaded) throw new Error(init.embedding.error ?? 'the embedding recognizer did not load');
  if (mode === 'objects' && !init.objects.loaded) throw new Error(init.objects.error ?? 'the object detector did not load');
  if (mode !== 'objects') {
    setStatus('Loading the trained models…');
    const { version: _version, ...texts } = await fetchTrainedModels(params.get('models') ?? undefined);
    const set = await engine.setModel(texts);
    if (!set[mode]) throw new Error(`the server has no trained ${mode} model; train someone first`);
  }

  setStatus('Starting the camera…');
  const video = document.getElementById('video') as HTMLVideoElement;
  const overlay = document.getElementById('overlay') as HTMLCanvasElement;
  const { camera, dispose } = createRoot((dispose) => ({ camera: createCamera({ width: 640, height: 480 }), dispose }));
  camera.attach(video);
  await camera.start();
  await waitForFrame(camera, video);
  const width = video.videoWidth;
  const height = video.videoHeight;

  setStatus(`Running ${mode} on ${init.backend.backend} for ${seconds} s…`);
  const roundTrips: number[] = [];
  const steps: Record<string, number[]> = {};
  const labels = new Set<string>();
  let faces = 0;
  const options: RecognizeOptions = { recognition_model: mode === 'objects' ? 'lbph' : mode };
  // One warm-up frame (first-use costs: JIT, shader compiles) is not counted.
  let warm = false;
  let frames = 0;
  let started = 0;
  // The live pages' own pipeline (PipelinedCamera): each camera frame taken once, as a bitmap (no pixel read
  // here), and sent while the previous one is still being analysed.
  type Answer = RecognizeResult | DetectObjectsResult;
  const stop = new AbortController();
  const sentAt = new Map<HTMLCanvasElement, number>();
  let firstAt = 0;
  await runPipeline<HTMLCanvasElement, Answer>(
    {
      depth: () => depth,
      grab: async (signal) => {
        const frame = await camera.nextFrame(signal);
        if (!frame) throw new Error('the camera stopped giving frames');
        // Taking the picture on the page once the camera had it (not the wait for the camera's next frame).
        steps.grabMs ??= [];
        steps.grabMs.push(frame.takenMs ?? 0);
        sentAt.set(frame.canvas, performance.now());
        return frame.canvas;
      },
      // As analyze.ts sends a live frame: a bitmap of the frame's canvas, read into pixels in the worker.
      analyze: async (frame) =>
        mode === 'objects'
          ? engine.detectObjects(await createImageBitmap(frame))
          : engine.recognize(await createImageBitmap(frame), options),
      onResult: (r, frame) => {
        const t1 = performance.now();
        const sent = sentAt.get(frame) ?? t1;
        sentAt.delete(frame);
        faces = r.count;
        if ('faces' in r) {
          for (const f of r.faces) labels.add(f.label);
          drawFaces(overlay, width, height, r.faces);
        } else {
          for (const o of r.objects) labels.add(o.class_name);
          drawObjects(overlay, width, height, r.objects);
        }
        if (!warm) {
          firstAt ||= t1;
          // Warm-up frames are not counted: first-use costs (JIT, shader compiles), and for objects the lanes
          // loading (started by the first overlap; given up on after 20 s).
          const plan = objectLanes === undefined ? defaultLanePlan(navigator.hardwareConcurrency || 1) : objectLanes;
          const lanesPending = mode === 'objects' && depth > 1 && plan !== null && engine.objectLanes === 0;
          if (lanesPending && t1 - firstAt < 20_000) return;
          warm = true;
          started = t1;
          labels.clear();
          return;
        }
        frames++;
        // From sending the frame to its answer (with depth 2 that includes waiting for the frame before it).
        roundTrips.push(t1 - sent);
        for (const [k, v] of Object.entries(r.timing)) {
          if (typeof v !== 'number') continue;
          steps[k] ??= [];
          steps[k].push(v);
        }
        if (t1 - started >= seconds * 1000) stop.abort();
      },
      onError: (err) => {
        stop.abort();
        throw err;
      },
      onFps: () => undefined,
    },
    stop.signal,
  );
  const elapsed = performance.now() - started;
  // The camera keeps running, so the page still shows what was measured; it stops when the page goes.
  addEventListener('pagehide', dispose, { once: true });
  return {
    backend: init.backend.backend,
    requested_backend: backend,
    backend_attempts: init.backend.attempts,
    cross_origin_isolated: self.crossOriginIsolated === true,
    ...(init.backend.wasm ? { wasm: init.backend.wasm } : {}),
    mode,
    cascade_threads: init.cascade.threads,
    cascade_scan: init.cascade.scan,
    seconds,
    width,
    height,
    frames,
    fps: round((frames * 1000) / elapsed),
    ms_per_frame_median: round(median(roundTrips)),
    ms_per_frame_p90: round(quantile(roundTrips, 0.9)),
    worker_ms_median: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, round(median(v))])),
    faces,
    labels: [...labels].sort(),
    init_ms: round(init.timing.totalMs),
    ...(mode === 'objects' ? { depth, object_lanes: engine.objectLanes } : {}),
  };
}

const engine = createEngine();
window.lookoutEngine = harness(engine);
const params = new URLSearchParams(location.search);
if (params.has('mode')) {
  runBench(engine, params).then(
    (result) => {
      window.__benchResult = result;
      resultEl.textContent = JSON.stringify(result, null, 2);
      setStatus(`Done: ${result.fps} frames per second on ${result.backend} (${result.mode}).`, 'done');
    },
    (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      window.__benchError = message;
      resultEl.textContent = JSON.stringify({ error: message }, null, 2);
      setStatus(`The bench failed: ${message}`, 'error');
    },
  );
} else {
  setStatus('Ready. Add parameters to the address to run the benchmark (see above).', 'done');
}
