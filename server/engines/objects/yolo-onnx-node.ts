/**
 * Node host of the optional YOLO object detector: an operator-supplied Ultralytics YOLOv5/v8 `.onnx` export
 * (from `public/models/`) run by onnxruntime-node on the CPU, with the shared pre/post-processing in
 * shared/objects/yolo.ts. Same surface as the NanoDet host: `load()` never rejects (a bad model disables
 * the detector with a reason in words), `detect()` returns boxes in the submitted image's pixels.
 *
 * Meant to run inside a worker thread, so the session uses one intra-op thread.
 */
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RgbImage } from '../../../shared/image/types.js';
import type { DetectedObject } from '../../../shared/objects/types.js';
import { errorMessage } from '../workers/runtime-support.js';
import {
  YOLO_DEFAULT_INPUT_SIZE,
  YOLO_NUM_CLASSES,
  YoloModelError,
  decodeYolo,
  yoloLayoutOf,
  yoloPreprocess,
  type YoloLayout,
} from '../../../shared/objects/yolo.js';
import { checkYoloSession } from '../../../shared/objects/yolo-session.js';

type Ort = typeof import('onnxruntime-node');
type Session = import('onnxruntime-node').InferenceSession;

export interface YoloOnnxOptions {
  /** Path of the `.onnx` file (the lead resolves `OBJECT_MODEL` against `public/models/`). */
  modelPath: string;
  /** Input size when the model's height/width are symbolic; default 416 (the detector contract). */
  defaultInputSize?: number;
}

export interface YoloAvailability {
  available: boolean;
  /** Why the detector is unavailable, in words (absent when available). */
  reason?: string;
  /** Time spent in `load()`, ms. */
  loadMs: number;
}

export interface YoloDetectOptions {
  /** Keep detections scoring strictly above this (0..1); default 0.4. */
  confidence?: number;
  /** Per-class NMS IoU threshold; default 0.4. */
  iou?: number;
}

export interface YoloDescription {
  /** The model's file name, e.g. `yolov8n.onnx`. */
  name: string;
  runtime: 'onnxruntime-node';
  /** Input side in pixels (the width; Ultralytics exports are square). */
  inputSize: number;
  inputWidth: number;
  inputHeight: number;
  classes: typeof YOLO_NUM_CLASSES;
  /** The output layout, once known (after load; a fully symbolic output shape is settled on the first run). */
  layout?: YoloLayout;
}

/** Thrown by `detect` when the model could not load; the message carries the reason. */
export class YoloUnavailableError extends Error {
  constructor(reason: string) {
    super(`YOLO object detector unavailable: ${reason}`);
    this.name = 'YoloUnavailableError';
  }
}

const require = createRequire(import.meta.url);
let ortModule: Ort | null = null;

/** require, not import(): one CommonJS instance per thread, loaded only when a YOLO model is selected. */
function ort(): Ort {
  ortModule ??= require('onnxruntime-node') as Ort;
  return ortModule;
}

interface Loaded {
  session: Session;
  inputName: string;
  outputName: string;
  width: number;
  height: number;
  layout?: YoloLayout;
}

export class YoloOnnxDetector {
  readonly #modelPath: string;
  readonly #defaultInputSize: number;
  #loading: Promise<YoloAvailability> | null = null;
  #loaded: Loaded | null = null;
  #availability: YoloAvailability | null = null;

  constructor(options: YoloOnnxOptions) {
    this.#modelPath = path.resolve(options.modelPath);
    this.#defaultInputSize = options.defaultInputSize ?? YOLO_DEFAULT_INPUT_SIZE;
  }

  /** Opens the model, once; never rejects (see `available` and `reason`). */
  load(): Promise<YoloAvailability> {
    this.#loading ??= this.#load();
    return this.#loading;
  }

  /** The outcome of `load()`, or null before it finished. */
  get availability(): YoloAvailability | null {
    return this.#availability;
  }

  async #load(): Promise<YoloAvailability> {
    const t0 = performance.now();
    let result: YoloAvailability;
    try {
      this.#loaded = await this.#open();
      result = { available: true, loadMs: performance.now() - t0 };
    } catch (err) {
      result = { available: false, reason: errorMessage(err), loadMs: performance.now() - t0 };
    }
    this.#availability = result;
    return result;
  }

  async #open(): Promise<Loaded> {
    const file = this.#modelPath;
    const name = path.basename(file);
    const info = await stat(file).catch(() => null);
    if (!info) throw new YoloModelError(`YOLO model file not found: ${file} (put the .onnx file in public/models/)`);
    if (!info.isFile()) throw new YoloModelError(`YOLO model path is not a file: ${file}`);
    const bytes = await readFile(file);
    let session: Session;
    try {
      session = await ort().InferenceSession.create(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
        executionProviders: ['cpu'],
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      });
    } catch (err) {
      throw new YoloModelError(`${name} is not a valid ONNX model (onnxruntime: ${errorMessage(err)})`);
    }
    try {
      return this.#check(session, name);
    } catch (err) {
      await session.release().catch(() => undefined);
      throw err;
    }
  }

  #check(session: Session, name: string): Loaded {
    return { session, ...checkYoloSession(session, name, this.#defaultInputSize) };
  }

  /** Objects in `rgb` (RGB or RGBA), in its pixels, best first. Throws YoloUnavailableError if loading failed. */
  async detect(rgb: RgbImage, options: YoloDetectOptions = {}): Promise<DetectedObject[]> {
    const status = await this.load();
    const loaded = this.#loaded;
    if (!status.available || !loaded) throw new YoloUnavailableError(status.reason ?? 'not loaded');
    const { Tensor } = ort();
    const input = yoloPreprocess(rgb, loaded.width, loaded.height);
    const results = await loaded.session.run({ [loaded.inputName]: new Tensor('float32', input.data, input.dims) }, [loaded.outputName]);
    const out = results[loaded.outputName];
    if (out.type !== 'float32') throw new YoloModelError(`output "${loaded.outputName}" is ${out.type}, expected float32`);
    const dims = out.dims.map(Number);
    loaded.layout ??= yoloLayoutOf(dims);
    return decodeYolo(out.data as Float32Array, dims, input.letterbox, options);
  }

  describe(): YoloDescription {
    const width = this.#loaded?.width ?? this.#defaultInputSize;
    const height = this.#loaded?.height ?? this.#defaultInputSize;
    return {
      name: path.basename(this.#modelPath),
      runtime: 'onnxruntime-node',
      inputSize: width,
      inputWidth: width,
      inputHeight: height,
      classes: YOLO_NUM_CLASSES,
      ...(this.#loaded?.layout ? { layout: this.#loaded.layout } : {}),
    };
  }

  /** Releases the session; a later call loads again. */
  async dispose(): Promise<void> {
    const loaded = this.#loaded;
    this.#loaded = null;
    this.#loading = null;
    this.#availability = null;
    await loaded?.session.release();
  }
}

export function createYoloOnnxDetector(options: YoloOnnxOptions): YoloOnnxDetector {
  return new YoloOnnxDetector(options);
}
