/**
 * Messages between the API thread and the object worker. The worker runs NanoDet (tfjs WASM, the default) or
 * an operator-supplied YOLO ONNX model, apart from the cascade and embedding workers: one forward pass keeps
 * a core busy for ~170 ms (~115 ms on 2 XNNPACK threads), and tfjs's XNNPACK threads should not share a thread with another tfjs user.
 */
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
  /** tfjs XNNPACK threads inside the worker (NanoDet only); default min(2, available cores). */
  threads?: number;
}

/** What the status endpoint shows about the detector. */
export interface ObjectDetectorInfo {
  /** `nanodet`, or the YOLO file name. */
  name: string;
  /** `tfjs-wasm` or `onnxruntime-node`. */
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
}

/** The object detection worker(s): `new WorkerPool<ObjectOps>({ name: 'object', script: 'objects/object-worker', data })`. */
export type ObjectPool = WorkerPool<ObjectOps>;
