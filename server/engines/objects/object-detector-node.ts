/**
 * Node host of the NanoDet object detector (shared/objects/nanodet.ts): the shipped tfjs graph
 * (public/models/nanodet.json + nanodet.bin) converted to ONNX in memory at load (shared/objects/nanodet-onnx.ts)
 * and run by onnxruntime-node on the CPU. Same weights, same pre- and post-processing as the browser; the
 * detections match tfjs's on the shipped graph to float rounding (nanodet-onnx.test.ts). onnxruntime's native
 * kernels (MLAS with Conv + LeakyRelu fused) take a whole detection from ~145 ms (tfjs WASM, 2 XNNPACK threads,
 * graph rewritten) to ~45 ms on one thread of the 2-core box, ~30 ms on two.
 *
 * Meant for its own worker thread (object-worker.ts). Load failures become `{ available: false, reason }`,
 * never exceptions, so a missing model disables object detection without taking the worker down.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RgbImage } from '../../../shared/image/types.js';
import { OBJECT_CLASS_COUNT } from '../../../shared/objects/classes.js';
import {
  createNanoDetRunner,
  NANODET_INPUT_SIZE,
  type DecodeOptions,
  type NanoDetForward,
  type NanoDetRunner,
  type NanoDetTimings,
} from '../../../shared/objects/nanodet.js';
import { nanoDetToOnnx, type TfjsGraphArtifacts, type TfjsWeightSpec } from '../../../shared/objects/nanodet-onnx.js';
import type { DetectedObject } from '../../../shared/objects/types.js';
import { errorMessage } from '../workers/runtime-support.js';

type Ort = typeof import('onnxruntime-node');
type Session = import('onnxruntime-node').InferenceSession;

export interface NodeObjectDetectorOptions {
  /** Folder holding nanodet.json and nanodet.bin (the repo's `public/models`). */
  modelDir: string;
  /** onnxruntime intra-op threads for one forward pass. Default 1 (the server's: object-protocol.ts). */
  threads?: number;
}

export interface ObjectDetectorStatus {
  name: 'nanodet';
  runtime: 'onnxruntime-node';
  inputSize: number;
  classes: number;
  available: boolean;
  /** Why detection is unavailable, in words (absent when available). */
  reason?: string;
  /** Time spent in `load()`: reading and converting the graph, the session, one warm-up pass, ms. */
  loadMs: number;
  /** Intra-op threads in use. */
  threads?: number;
  /** onnxruntime-node version. */
  onnxruntime?: string;
}

/** Thrown by `detect` when the detector could not load; the message carries the reason. */
export class ObjectDetectorUnavailableError extends Error {
  constructor(reason: string) {
    super(`object detector unavailable: ${reason}`);
    this.name = 'ObjectDetectorUnavailableError';
  }
}

const require = createRequire(import.meta.url);
let ortModule: Ort | null = null;

/** require, not import(): one CommonJS instance per thread (the YOLO host shares it). */
function ort(): Ort {
  ortModule ??= require('onnxruntime-node') as Ort;
  return ortModule;
}

interface ModelJson {
  modelTopology: unknown;
  signature?: unknown;
  weightsManifest: { paths: string[]; weights: TfjsWeightSpec[] }[];
}

/** `<name>` (a tfjs graph model.json) and its weight files from `modelDir`, as the converter takes them. */
export async function readTfjsGraph(modelDir: string, name = 'nanodet.json'): Promise<TfjsGraphArtifacts> {
  const json = JSON.parse(await readFile(path.join(modelDir, name), 'utf8')) as ModelJson;
  const buffers = await Promise.all(json.weightsManifest.flatMap((g) => g.paths).map((f) => readFile(path.join(modelDir, f))));
  return {
    modelTopology: json.modelTopology,
    signature: json.signature,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: new Uint8Array(Buffer.concat(buffers)),
  };
}

/** A forward pass on an onnxruntime session of the converted graph (also used by the browser's twin, objects.ts). */
function sessionForward(session: Session, inputName: string): NanoDetForward {
  const { Tensor } = ort();
  return async (input, shape) => {
    const results = await session.run({ [inputName]: new Tensor('float32', input, shape) });
    return Object.values(results).map((t) => ({ shape: t.dims.map(Number), data: t.data as Float32Array }));
  };
}

export interface DetectOptions {
  /** Keep detections scoring above this, 0..1 (default 0.4). */
  confidence?: number;
  /** Per-class NMS IoU threshold, 0..1 (default 0.4). */
  iou?: number;
}

export class NodeObjectDetector {
  readonly #modelDir: string;
  readonly #threads: number;
  #runner: NanoDetRunner | null = null;
  #session: Session | null = null;
  #loading: Promise<ObjectDetectorStatus> | null = null;
  #status: ObjectDetectorStatus | null = null;

  constructor(options: NodeObjectDetectorOptions) {
    this.#modelDir = path.resolve(options.modelDir);
    this.#threads = Math.min(16, Math.max(1, Math.floor(options.threads ?? 1)));
  }

  /** Converts the graph, opens the session and runs one warm-up pass, once; never rejects. */
  load(): Promise<ObjectDetectorStatus> {
    this.#loading ??= this.#load();
    return this.#loading;
  }

  /** The outcome of `load()`, or null before it finished. */
  get status(): ObjectDetectorStatus | null {
    return this.#status;
  }

  /** For the status endpoint: what the detector is, and whether it is ready. */
  describe(): ObjectDetectorStatus {
    return this.#status ?? { ...this.#base(), available: false, reason: 'not loaded yet', loadMs: 0 };
  }

  #base() {
    return { name: 'nanodet', runtime: 'onnxruntime-node', inputSize: NANODET_INPUT_SIZE, classes: OBJECT_CLASS_COUNT } as const;
  }

  async #load(): Promise<ObjectDetectorStatus> {
    const t0 = performance.now();
    let result: ObjectDetectorStatus;
    try {
      const model = nanoDetToOnnx(await readTfjsGraph(this.#modelDir));
      const session = await ort().InferenceSession.create(model.bytes, {
        executionProviders: ['cpu'],
        intraOpNumThreads: this.#threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        // Helper threads sleep between passes instead of spinning: spinning halves the wait when the cores are
        // free (21 vs 30 ms a pass on 2 threads) but burns the cores the API's other workers need, and a pass
        // took ~145 instead of ~120 ms when they were busy.
        ...(this.#threads > 1 ? { extra: { session: { intra_op: { allow_spinning: '0' } } } } : {}),
      });
      const runner = createNanoDetRunner(sessionForward(session, model.input.name));
      // The first pass allocates and plans; pay it here, not on the first request.
      await runner.detect({ width: 64, height: 48, channels: 3, data: new Uint8Array(64 * 48 * 3) });
      this.#session = session;
      this.#runner = runner;
      const version = (ort() as { env?: { versions?: { node?: string } } }).env?.versions?.node;
      result = {
        ...this.#base(),
        available: true,
        loadMs: performance.now() - t0,
        threads: this.#threads,
        ...(version ? { onnxruntime: version } : {}),
      };
    } catch (err) {
      result = { ...this.#base(), available: false, reason: errorMessage(err), loadMs: performance.now() - t0 };
    }
    this.#status = result;
    return result;
  }

  /** Objects in `rgb` (RGB or RGBA), in its pixels, best first. Throws ObjectDetectorUnavailableError if loading failed. */
  async detect(rgb: RgbImage, opts: DetectOptions = {}): Promise<DetectedObject[]> {
    return (await this.detectTimed(rgb, opts)).objects;
  }

  async detectTimed(rgb: RgbImage, opts: DetectOptions = {}): Promise<{ objects: DetectedObject[]; timings: NanoDetTimings }> {
    const status = await this.load();
    if (!status.available || !this.#runner) throw new ObjectDetectorUnavailableError(status.reason ?? 'not loaded');
    const options: DecodeOptions = { confidence: opts.confidence, iou: opts.iou };
    return this.#runner.detectTimed(rgb, options);
  }

  /** Releases the session; a later call loads again. */
  async dispose(): Promise<void> {
    const session = this.#session;
    this.#session = null;
    this.#runner = null;
    this.#loading = null;
    this.#status = null;
    await session?.release();
  }
}

export function createNodeObjectDetector(options: NodeObjectDetectorOptions): NodeObjectDetector {
  return new NodeObjectDetector(options);
}
