/**
 * Object detection inside the engine worker, with the server's shared/ pre- and post-processing: NanoDet on
 * this worker's tfjs backend (the shipped graph, /models/nanodet.json; the server runs a rewritten copy of
 * the same weights, so scores agree to float rounding), or a YOLO ONNX export on onnxruntime-web when one is
 * configured (the server's OBJECT_MODEL file, served under /models/).
 */
import ortWasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.wasm?url';
import type { RgbImage } from '../../../shared/image/types';
import { createNanoDetRunner, type GraphModelLike, type NanoDetRunner, type TfLike } from '../../../shared/objects/nanodet';
import type { DetectedObject } from '../../../shared/objects/types';
import { decodeYolo, yoloLayoutOf, yoloPreprocess, YoloModelError } from '../../../shared/objects/yolo';
import { checkYoloSession, type YoloIo, type YoloSessionInfo } from '../../../shared/objects/yolo-session';
import { loadTf } from './backend';

export interface DetectTimings {
  preprocessMs?: number;
  inferenceMs?: number;
  decodeMs?: number;
}

export interface ObjectDetector {
  /** `nanodet`, or the YOLO file's name. */
  readonly name: string;
  detect(img: RgbImage, confidence?: number, iou?: number): Promise<{ objects: DetectedObject[]; timings: DetectTimings }>;
}

/** NanoDet on tfjs; one warm-up pass at load (shader compilation, XNNPACK set-up) so frames are not charged for it. */
export async function loadNanoDet(url: string): Promise<ObjectDetector> {
  const tf = await loadTf();
  const model = (await tf.loadGraphModel(url)) as unknown as GraphModelLike;
  const runner: NanoDetRunner = createNanoDetRunner(tf as unknown as TfLike, model);
  await runner.detect({ width: 64, height: 48, channels: 3, data: new Uint8Array(64 * 48 * 3) });
  return {
    name: 'nanodet',
    async detect(img, confidence, iou) {
      return runner.detectTimed(img, { confidence, iou });
    },
  };
}

/** A YOLOv5/v8 ONNX export on onnxruntime-web (WASM), with the server's checks and decoding. */
export async function loadYolo(url: string): Promise<ObjectDetector> {
  const ort = await import('onnxruntime-web/wasm');
  // The runtime's binary from this app's own build; threads only where the page is cross-origin isolated.
  ort.env.wasm.wasmPaths = { wasm: ortWasmUrl };
  ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1)) : 1;
  const name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? url);
  const res = await fetch(url).catch(() => null);
  if (!res) throw new YoloModelError(`cannot fetch the YOLO model ${url} (the server is unreachable)`);
  if (!res.ok) throw new YoloModelError(`cannot fetch the YOLO model ${url} (${res.status} ${res.statusText})`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  let session: import('onnxruntime-web').InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  } catch (err) {
    throw new YoloModelError(`${name} is not a valid ONNX model (onnxruntime-web: ${err instanceof Error ? err.message : String(err)})`);
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
