/**
 * The object detection worker thread: NanoDet (shared/objects, converted to ONNX at load) or a YOLO ONNX
 * model the operator configured, both on onnxruntime-node. Jobs arrive one at a time (the pool waits for each
 * reply), so async jobs never interleave.
 */
import { workerData } from 'node:worker_threads';
import type { RgbImage } from '../../../shared/image/types.js';
import type { DetectedObject } from '../../../shared/objects/types.js';
import { serveOps } from '../workers/worker-host.js';
import { defaultThreads, type ObjectDetectorInfo, type ObjectOps, type ObjectWorkerData } from './object-protocol.js';

interface Engine {
  load(): Promise<{ available: boolean; reason?: string; loadMs: number; threads?: number }>;
  detect(rgb: RgbImage, opts: { confidence?: number; iou?: number }): Promise<DetectedObject[]>;
  dispose(): Promise<void>;
  describe(): { name: string; runtime: string; inputSize: number; classes: number };
}

const config = workerData as ObjectWorkerData;

// Only the configured runtime is loaded into this thread.
async function createEngine(): Promise<Engine> {
  if (config.model.kind === 'yolo') {
    const { YoloOnnxDetector } = await import('./yolo-onnx-node.js');
    return new YoloOnnxDetector({ modelPath: config.model.file });
  }
  const { NodeObjectDetector } = await import('./object-detector-node.js');
  return new NodeObjectDetector({ modelDir: config.model.dir, threads: config.threads ?? defaultThreads() });
}

const engine = createEngine();
const loaded = engine.then((e) => e.load());

serveOps<ObjectOps>({
  async status() {
    const e = await engine;
    const status = await loaded;
    const d = e.describe();
    const info: ObjectDetectorInfo = { name: d.name, runtime: d.runtime, inputSize: d.inputSize, classes: d.classes };
    if (status.threads !== undefined) info.threads = status.threads;
    return { info, available: status.available, loadMs: status.loadMs, ...(status.reason ? { reason: status.reason } : {}) };
  },
  async detect({ rgb, confidence, iou }) {
    const e = await engine;
    const t0 = performance.now();
    const objects = await e.detect(rgb, { confidence, iou });
    return { objects, ms: performance.now() - t0 };
  },
  async dispose() {
    await (await engine).dispose();
  },
});
