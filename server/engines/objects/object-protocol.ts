/**
 * Messages between the API thread and the object worker. The worker runs NanoDet (the default) or an
 * operator-supplied YOLO ONNX model on onnxruntime-node, apart from the cascade and embedding workers: one
 * detection keeps a core busy for ~45 ms.
 */
import os from 'node:os';
import type { RgbImage } from '../../../shared/image/types.js';
import type { DetectedObject } from '../../../shared/objects/types.js';
import type { WorkerPool } from '../workers/worker-pool.js';

export type ObjectModelSpec =
  /** `dir` holds nanodet.json + nanodet.bin. */
  | { kind: 'nanodet'; dir: string }
  /** `file` is the `.onnx` path. */
  | { kind: 'yolo'; file: string };

export interface ObjectWorkerData {
  model: ObjectModelSpec;
  /** onnxruntime intra-op threads inside the worker (NanoDet only); default `defaultThreads()`. */
  threads?: number;
}

/**
 * NanoDet's intra-op threads per object worker when not set: min(2, available cores). On the 2-core box a pass
 * takes ~40 ms on 1 thread and ~30 ms on 2 when the cores are free; when other work holds them, 2 threads wait
 * for each other (~120 vs ~105 ms), which is why they do not spin (object-detector-node.ts).
 */
export function defaultThreads(): number {
  return Math.min(2, os.availableParallelism());
}

/** What the status endpoint shows about the detector. */
export interface ObjectDetectorInfo {
  /** `nanodet`, or the YOLO file name. */
  name: string;
  /** `onnxruntime-node`. */
  runtime: string;
  inputSize: number;
  classes: number;
  /** Threads the runtime computes with, when known. */
  threads?: number;
}

export interface ObjectOps {
  status: { args: void; result: { info: ObjectDetectorInfo; available: boolean; reason?: string; loadMs: number } };
  /**
   * Objects in the image; `confidence` and `iou` within 0..1 (defaults 0.4 and 0.4). `ms`: time spent in the
   * worker (pre-processing, forward pass, decoding).
   */
  detect: { args: { rgb: RgbImage; confidence?: number; iou?: number }; result: { objects: DetectedObject[]; ms: number } };
  /** Frees the runtime's session before the worker is let go (#38 2: its native memory goes back before the thread ends). */
  dispose: { args: void; result: void };
}

/** The object detection worker(s): `new WorkerPool<ObjectOps>({ name: 'object', script: 'objects/object-worker', data })`. */
export type ObjectPool = WorkerPool<ObjectOps>;
