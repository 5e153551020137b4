/**
 * Object detection inside the engine worker, with the server's shared/ pre- and post-processing.
 *
 * NanoDet: the shipped tfjs graph (/models/nanodet.json + .bin, precached for offline use) converted to ONNX
 * here, in memory (shared/objects/nanodet-onnx.ts, as the server does), and run by onnxruntime-web: its WASM
 * execution provider (SIMD, threads when the page is cross-origin isolated; about tfjs-wasm's speed on the same
 * weights), or its WebGPU one in the object pool's GPU lane, which takes over once warm (object-pool.ts). Should
 * onnxruntime not start on WASM (its runtime is cached on first use, so a device that goes offline before it
 * first ran has none), the same graph runs on this worker's tfjs backend instead: same objects, slower.
 *
 * YOLO: an operator's ONNX export (the server's OBJECT_MODEL file, served under /models/) on onnxruntime-web.
 */
import ortWasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.wasm?url';
import ortWebGpuWasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url';
import type { RgbImage } from '../../../shared/image/types';
import { createNanoDetRunner, tfjsForward, type GraphModelLike, type NanoDetForward, type TfLike } from '../../../shared/objects/nanodet';
import { nanoDetToOnnx, type TfjsGraphArtifacts, type TfjsWeightSpec } from '../../../shared/objects/nanodet-onnx';
import { summarize, type DetectedObject } from '../../../shared/objects/types';
import { decodeYolo, yoloLayoutOf, yoloPreprocess, YoloModelError } from '../../../shared/objects/yolo';
import { checkYoloSession, type YoloIo, type YoloSessionInfo } from '../../../shared/objects/yolo-session';
import { errorText as messageOf } from '../../../shared/recognition/worker-messages';
import { loadTf, SOFTWARE_GPU } from './backend';
import { WEBGPU_SESSION_OPTIONS } from './webgpu-options';
import { fetchModelFile } from './fetch-model';
import { readRgba } from './frame-reader';
import type { DetectObjectsResult, FramePixels } from './protocol';

export interface DetectTimings {
  preprocessMs?: number;
  inferenceMs?: number;
  decodeMs?: number;
}

export interface ObjectDetector {
  /** `nanodet`, or the YOLO file's name. */
  readonly name: string;
  /** What runs it: `onnxruntime-web wasm`, `onnxruntime-web webgpu` or `tfjs <backend>`. */
  readonly runtime: string;
  /** Why NanoDet runs on tfjs rather than onnxruntime, in words (absent when it does not). */
  readonly fallbackReason?: string;
  detect(img: RgbImage, confidence?: number, iou?: number): Promise<{ objects: DetectedObject[]; timings: DetectTimings }>;
}

type Ort = typeof import('onnxruntime-web');
type Session = import('onnxruntime-web').InferenceSession;

/**
 * Threads for onnxruntime-web's WASM kernels: every core up to 4 (or `wanted`, an object lane's 1), where the
 * page may share memory with workers. The detections are the same, to the bit, for 1 and 2 threads (the six
 * object photos, e2e/object-lanes.spec.ts).
 */
function ortThreads(wanted?: number): number {
  const cores = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
  return self.crossOriginIsolated ? Math.max(1, Math.min(cores, wanted ?? cores)) : 1;
}

let ortWasm: Promise<Ort> | null = null;
let ortWebGpu: Promise<Ort> | null = null;

/** onnxruntime-web with the WASM execution provider only; its binary from this app's own build. `threads`: see ortThreads (set once per worker). */
function loadOrtWasm(threads?: number): Promise<Ort> {
  ortWasm ??= import('onnxruntime-web/wasm').then((ort) => {
    ort.env.wasm.wasmPaths = { wasm: ortWasmUrl };
    ort.env.wasm.numThreads = ortThreads(threads);
    return ort as unknown as Ort;
  });
  return ortWasm;
}

/** onnxruntime-web's WebGPU build (its own, larger binary, fetched only where it is used). */
function loadOrtWebGpu(): Promise<Ort> {
  ortWebGpu ??= import('onnxruntime-web/webgpu').then((ort) => {
    ort.env.wasm.wasmPaths = { wasm: ortWebGpuWasmUrl };
    ort.env.wasm.numThreads = ortThreads();
    return ort as unknown as Ort;
  });
  return ortWebGpu;
}

/** A tfjs graph model's model.json and its weight files, as the converter takes them. */
async function fetchTfjsGraph(url: string): Promise<TfjsGraphArtifacts> {
  const json = (await (await fetchModelFile(url, 'NanoDet model')).json()) as {
    modelTopology: unknown;
    signature?: unknown;
    weightsManifest: { paths: string[]; weights: TfjsWeightSpec[] }[];
  };
  const parts = await Promise.all(
    json.weightsManifest
      .flatMap((g) => g.paths)
      .map(async (p) => new Uint8Array(await (await fetchModelFile(new URL(p, url).href, 'NanoDet weights')).arrayBuffer())),
  );
  const weightData = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    weightData.set(p, at);
    at += p.length;
  }
  return {
    modelTopology: json.modelTopology,
    signature: json.signature,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData,
  };
}

function sessionForward(ort: Ort, session: Session, inputName: string): NanoDetForward {
  return async (input, shape) => {
    const results = await session.run({ [inputName]: new ort.Tensor('float32', input, shape) });
    // Outputs come back in CPU memory (the default output location, on WebGPU too).
    return Object.values(results).map((t) => ({ shape: t.dims.map(Number), data: t.data as Float32Array }));
  };
}

interface GpuAdapterLike {
  isFallbackAdapter?: boolean;
  info?: { vendor?: string; architecture?: string; description?: string; isFallbackAdapter?: boolean };
}

/** Whether this worker sees a WebGPU adapter that is a real GPU (a software one is far slower than WASM here). */
async function hardwareWebGpu(): Promise<boolean> {
  const gpu = (navigator as unknown as { gpu?: { requestAdapter(): Promise<GpuAdapterLike | null> } }).gpu;
  const adapter = await gpu?.requestAdapter().catch(() => null);
  if (!adapter) return false;
  const info = adapter.info;
  const name = [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ');
  return !(info?.isFallbackAdapter || adapter.isFallbackAdapter || SOFTWARE_GPU.test(name));
}

/** WebGPU cannot run NanoDet in this worker (the reason in words): the caller keeps detecting on WASM. */
export class WebGpuUnavailable extends Error {}

/**
 * The converted graph on onnxruntime-web. `wasm`: its WASM provider. `webgpu`: its WebGPU provider only; it
 * throws (with why) rather than fall back, since the object pool keeps detecting on WASM meanwhile (object-pool.ts).
 */
async function openNanoDetSession(
  bytes: Uint8Array,
  inputName: string,
  target: 'wasm' | 'webgpu',
  threads?: number,
): Promise<{ forward: NanoDetForward; runtime: string }> {
  if (target === 'webgpu') {
    if (!(await hardwareWebGpu())) {
      throw new WebGpuUnavailable('this worker has no WebGPU adapter on a real GPU (none, or a software emulation)');
    }
    const ort = await loadOrtWebGpu();
    let session: Session;
    try {
      session = await ort.InferenceSession.create(bytes, {
        ...WEBGPU_SESSION_OPTIONS,
        executionProviders: [...WEBGPU_SESSION_OPTIONS.executionProviders],
      });
    } catch (err) {
      throw new WebGpuUnavailable(`onnxruntime-web could not open NanoDet on WebGPU: ${messageOf(err)}`);
    }
    return { forward: sessionForward(ort, session, inputName), runtime: 'onnxruntime-web webgpu' };
  }
  const ort = await loadOrtWasm(threads);
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  return { forward: sessionForward(ort, session, inputName), runtime: 'onnxruntime-web wasm' };
}

/**
 * NanoDet (see the file comment) on onnxruntime-web's `target` provider; `threads` caps its WASM threads (an
 * object lane's 1, object-pool.ts). On `wasm`, should onnxruntime not start, the graph runs on this worker's
 * tfjs backend instead; on `webgpu` it throws WebGpuUnavailable. One warm-up pass at load (kernel set-up,
 * shader compilation) so frames are not charged for it.
 */
export async function loadNanoDet(url: string, target: 'wasm' | 'webgpu', threads?: number): Promise<ObjectDetector> {
  const graph = await fetchTfjsGraph(url);
  let forward: NanoDetForward;
  let runtime: string;
  let fallbackReason: string | undefined;
  try {
    const onnx = nanoDetToOnnx(graph);
    ({ forward, runtime } = await openNanoDetSession(onnx.bytes, onnx.input.name, target, threads));
  } catch (err) {
    if (target === 'webgpu') throw err instanceof WebGpuUnavailable ? err : new WebGpuUnavailable(messageOf(err));
    fallbackReason = `onnxruntime-web could not run NanoDet: ${messageOf(err)}`;
    console.warn(`${fallbackReason}; running it on tfjs instead`);
    const tf = await loadTf();
    const bytes = graph.weightData as Uint8Array;
    const model = await tf.loadGraphModel({
      load: async () => ({
        modelTopology: graph.modelTopology as object,
        signature: graph.signature as object | undefined,
        weightSpecs: graph.weightSpecs as never,
        weightData: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      }),
    });
    forward = tfjsForward(tf as unknown as TfLike, model as unknown as GraphModelLike);
    runtime = `tfjs ${tf.getBackend()}`;
  }
  const runner = createNanoDetRunner(forward);
  try {
    await runner.detect({ width: 64, height: 48, channels: 3, data: new Uint8Array(64 * 48 * 3) });
  } catch (err) {
    if (target === 'webgpu') throw new WebGpuUnavailable(`NanoDet's first pass on WebGPU failed: ${messageOf(err)}`);
    throw err;
  }
  return {
    name: 'nanodet',
    runtime,
    ...(fallbackReason ? { fallbackReason } : {}),
    async detect(img, confidence, iou) {
      return runner.detectTimed(img, { confidence, iou });
    },
  };
}

/** A YOLOv5/v8 ONNX export on onnxruntime-web (WASM), with the server's checks and decoding. */
export async function loadYolo(url: string, threads?: number): Promise<ObjectDetector> {
  const ort = await loadOrtWasm(threads);
  const name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? url);
  const res = await fetch(url).catch(() => null);
  if (!res) throw new YoloModelError(`cannot fetch the YOLO model ${url} (the server is unreachable)`);
  if (!res.ok) throw new YoloModelError(`cannot fetch the YOLO model ${url} (${res.status} ${res.statusText})`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  let session: Session;
  try {
    session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  } catch (err) {
    throw new YoloModelError(`${name} is not a valid ONNX model (onnxruntime-web: ${messageOf(err)})`);
  }
  let io: YoloIo;
  try {
    io = checkYoloSession(session as unknown as YoloSessionInfo, name);
  } catch (err) {
    await session.release().catch(() => undefined);
    throw err;
  }
  return {
    name,
    runtime: 'onnxruntime-web wasm',
    async detect(img, confidence, iou) {
      const t0 = performance.now();
      const input = yoloPreprocess(img, io.width, io.height);
      const t1 = performance.now();
      const results = await session.run({ [io.inputName]: new ort.Tensor('float32', input.data, input.dims) }, [io.outputName]);
      const out = results[io.outputName];
      const t2 = performance.now();
      if (out.type !== 'float32') throw new YoloModelError(`output "${io.outputName}" is ${out.type}, expected float32`);
      const dims = out.dims.map(Number);
      io.layout ??= yoloLayoutOf(dims);
      const objects = decodeYolo(out.data as Float32Array, dims, input.letterbox, { confidence, iou });
      out.dispose();
      return { objects, timings: { preprocessMs: t1 - t0, inferenceMs: t2 - t1, decodeMs: performance.now() - t2 } };
    },
  };
}

/** A detectObjects answer (the engine worker's and an object lane's): the frame read here, then detected. */
export async function detectPixels(d: ObjectDetector, pixels: FramePixels, confidence?: number): Promise<DetectObjectsResult> {
  const t0 = performance.now();
  const rgb = readRgba(pixels);
  const t1 = performance.now();
  const { objects, timings } = await d.detect(rgb, confidence);
  return {
    objects,
    count: objects.length,
    summary: summarize(objects),
    detector: d.name,
    runtime: d.runtime,
    timing: { totalMs: performance.now() - t0, convertMs: t1 - t0, ...timings },
  };
}
