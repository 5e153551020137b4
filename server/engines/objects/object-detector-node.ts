/**
 * Node host of the NanoDet object detector (shared/objects/nanodet.ts): `@tensorflow/tfjs` on the WASM
 * backend (binaries read from node_modules/@tensorflow/tfjs-backend-wasm/dist, never fetched) and the graph
 * model read from disk by a custom IOHandler.
 *
 * Meant for its own worker thread (object-worker.ts). Node gives every thread its own module instances, so
 * the runtime promise below is per thread. In a thread where another engine (face-api, Human) already started
 * the WASM backend, that backend is reused as it is: tfjs allows `setWasmPaths` only before the first start.
 *
 * Threads: tfjs-backend-wasm 4.22 never uses its multi-threaded build in Node (its loader hands Emscripten a
 * blob: URL that Node's Worker refuses, and it halves the core count). With `threads > 1` we start that build
 * anyway: the worker script is written to a temp file and the pool size is asked for explicitly. Anything
 * unexpected falls back to the single-threaded SIMD build. On the 2-core box this takes a forward pass from
 * about 170 ms to about 115 ms; the load-time graph rewrite (nanodet-graph.ts) then to about 150 / 90 ms.
 *
 * Load failures become `{ available: false, reason }`, never exceptions, so a missing model disables object
 * detection without taking the worker down.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { RgbImage } from '../../../shared/image/types.js';
import { OBJECT_CLASS_COUNT } from '../../../shared/objects/classes.js';
import {
  createNanoDetRunner,
  NANODET_INPUT_SIZE,
  type DecodeOptions,
  type GraphModelLike,
  type NanoDetRunner,
  type NanoDetTimings,
  type TfLike,
} from '../../../shared/objects/nanodet.js';
import type { DetectedObject } from '../../../shared/objects/types.js';
import { optimizeNanoDetGraph, type GraphArtifacts, type GraphRewriteOptions } from './nanodet-graph.js';
import { errorMessage, keepingProcessHandlers } from '../workers/runtime-support.js';

export interface NodeObjectDetectorOptions {
  /** Folder holding nanodet.json and nanodet.bin (the repo's `public/models`). */
  modelDir: string;
  /** Folder with the tfjs WASM binaries; defaults to the installed `@tensorflow/tfjs-backend-wasm/dist`. */
  wasmDir?: string;
  /**
   * XNNPACK threads when this thread starts the WASM backend (ignored when it is already running). Default 1.
   * More than 1 spawns Emscripten pthreads (nested worker threads); give it a thread of its own.
   */
  threads?: number;
  /**
   * Rewrite the graph in memory at load (NHWC throughout, Conv2D + bias + LeakyRelu fused; see
   * nanodet-graph.ts). Default true; false runs the shipped graph as converted; an object picks steps.
   */
  optimizeGraph?: boolean | GraphRewriteOptions;
}

export interface ObjectDetectorStatus {
  name: 'nanodet';
  runtime: 'tfjs-wasm';
  inputSize: number;
  classes: number;
  available: boolean;
  /** Why detection is unavailable, in words (absent when available). */
  reason?: string;
  /** Time spent in `load()`: backend start, weights and one warm-up pass, ms. */
  loadMs: number;
  /** XNNPACK threads actually in use. */
  threads?: number;
  /** tfjs version. */
  tfjs?: string;
}

/** Thrown by `detect` when the detector could not load; the message carries the reason. */
export class ObjectDetectorUnavailableError extends Error {
  constructor(reason: string) {
    super(`object detector unavailable: ${reason}`);
    this.name = 'ObjectDetectorUnavailableError';
  }
}

type Tensor = ReturnType<TfLike['tensor4d']>;
interface TfNode extends TfLike {
  version_core: string;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  getBackend(): string;
  env(): { set(flag: string, value: unknown): void };
  engine(): { registry: Record<string, unknown> };
  backend(): unknown;
  zeros(shape: number[]): Tensor;
  loadGraphModel(handler: { load(): Promise<unknown> }): Promise<GraphModelLike>;
}
interface TfWasm {
  setWasmPaths(prefix: string, usePlatformFetch?: boolean): void;
  setThreadsCount(n: number): void;
  getThreadsCount(): number;
}
interface Runtime {
  tf: TfNode;
  threads: number;
}

const require = createRequire(import.meta.url);

function defaultWasmDir(): string {
  return path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
}

// What the threaded worker does with the main script it is sent (a Blob, unreadable by importScripts in Node).
const WORKER_IMPORT = 'var objectUrl=URL.createObjectURL(e.data.urlOrBlob);importScripts(objectUrl);URL.revokeObjectURL(objectUrl)';
const MAIN_PREFIX = 'var WasmBackendModuleThreadedSimd';
// Free variables of the bundled factory (tf-backend-wasm.node.js lines 20-23 and its commonjsGlobal).
const MAIN_PRELUDE =
  "var require$$0=require('fs'),require$$1=require('path'),require$$3=require('perf_hooks'),require$$4=require('os'),commonjsGlobal=globalThis;";

/**
 * Starts tfjs-backend-wasm's threaded SIMD build in Node (see the file comment). Global patches last only
 * for the start; they turn the two Blobs the loader makes into files and report enough cores.
 */
async function startThreaded(tf: TfNode, wasm: TfWasm, threads: number): Promise<boolean> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lookout-tfjs-wasm-'));
  const mainFile = path.join(dir, 'main.js');
  const RealBlob = globalThis.Blob;
  const realCreateObjectURL = URL.createObjectURL;
  const realCpus = os.cpus;
  let patchedWorker = false;
  class FileBlob extends RealBlob {
    readonly text_: string;
    constructor(parts: ConstructorParameters<typeof Blob>[0] = [], options?: ConstructorParameters<typeof Blob>[1]) {
      super(parts, options);
      this.text_ = parts.map((p) => (typeof p === 'string' ? p : '')).join('');
      if (this.text_.startsWith(MAIN_PREFIX)) writeFileSync(mainFile, MAIN_PRELUDE + this.text_);
    }
  }
  globalThis.Blob = FileBlob as typeof Blob;
  URL.createObjectURL = (obj: Blob) => {
    const text = obj instanceof FileBlob ? obj.text_ : '';
    if (!text.includes(WORKER_IMPORT)) return realCreateObjectURL(obj);
    const file = path.join(dir, 'worker.js');
    writeFileSync(file, text.replace(WORKER_IMPORT, `importScripts(${JSON.stringify(mainFile)})`));
    patchedWorker = true;
    return file;
  };
  // The C++ side caps the pool at cores / 2 (it assumes hyper-threading).
  os.cpus = () => Array.from({ length: 2 * threads }, () => realCpus()[0]);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', true);
  wasm.setThreadsCount(threads);
  try {
    if (!(await tf.setBackend('wasm'))) return false;
    await tf.ready();
  } finally {
    globalThis.Blob = RealBlob;
    URL.createObjectURL = realCreateObjectURL;
    os.cpus = realCpus;
    // The module starts only after its 8 pooled workers loaded both files, and at most 8 threads are asked
    // for, so no worker reads them later.
    rmSync(dir, { recursive: true, force: true });
  }
  if (!patchedWorker) return true; // the loader changed; it started as it saw fit
  // pthreadpool's threads never exit: unref them so they do not keep the process (or thread) alive.
  const pthread = (tf.backend() as { wasm?: { PThread?: { runningWorkers?: { unref(): void }[] } } }).wasm?.PThread;
  for (const w of pthread?.runningWorkers ?? []) w.unref();
  return true;
}

let runtime: Promise<Runtime> | null = null;

/** tfjs with the WASM backend, once per thread. */
function loadRuntime(wasmDir: string, threads: number): Promise<Runtime> {
  runtime ??= keepingProcessHandlers(async () => {
    // require, not import(): the one CommonJS instance face-api and Human also require in this thread.
    const tf = require('@tensorflow/tfjs') as TfNode;
    const wasm = require('@tensorflow/tfjs-backend-wasm') as TfWasm;
    if (tf.engine().registry.wasm) {
      if (!(await tf.setBackend('wasm'))) throw new Error('tfjs WASM backend failed to start');
    } else {
      // Plain file paths, no fetch: Emscripten reads the binaries from disk.
      wasm.setWasmPaths(wasmDir.endsWith(path.sep) ? wasmDir : wasmDir + path.sep, false);
      let started = false;
      if (threads > 1) {
        try {
          started = await startThreaded(tf, wasm, threads);
        } catch {
          started = false;
        }
        if (!started) tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      }
      if (!started && !(await tf.setBackend('wasm'))) throw new Error(`tfjs WASM backend failed to start (binaries in ${wasmDir})`);
    }
    await tf.ready();
    let actual = 1;
    try {
      actual = wasm.getThreadsCount();
    } catch {
      // not reported by this build
    }
    return { tf, threads: actual };
  }).catch((err: unknown) => {
    runtime = null;
    throw err;
  });
  return runtime;
}

interface ModelJson {
  modelTopology: unknown;
  weightsManifest: { paths: string[]; weights: unknown[] }[];
  format?: string;
  generatedBy?: string;
  convertedBy?: string;
  signature?: unknown;
  userDefinedMetadata?: unknown;
}

/**
 * `fileModelHandler` with the load-time rewrite of nanodet-graph.ts applied (about 30% of a forward pass
 * saved). If the rewrite does not apply (another graph), the model loads as it is.
 */
export function optimizedModelHandler(
  modelDir: string,
  name = 'nanodet.json',
  options: GraphRewriteOptions = {},
): { load(): Promise<unknown> } {
  const plain = fileModelHandler(modelDir, name);
  return {
    async load() {
      const artifacts = (await plain.load()) as GraphArtifacts;
      try {
        return optimizeNanoDetGraph(artifacts, options).artifacts;
      } catch {
        return artifacts;
      }
    },
  };
}

/** A tfjs IOHandler reading `<name>.json` and its weight files from a folder. */
export function fileModelHandler(modelDir: string, name = 'nanodet.json'): { load(): Promise<unknown> } {
  return {
    async load() {
      const json = JSON.parse(await readFile(path.join(modelDir, name), 'utf8')) as ModelJson;
      const files = json.weightsManifest.flatMap((g) => g.paths);
      const buffers = await Promise.all(files.map((f) => readFile(path.join(modelDir, f))));
      const all = Buffer.concat(buffers);
      return {
        modelTopology: json.modelTopology,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        signature: json.signature,
        userDefinedMetadata: json.userDefinedMetadata,
        weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
      };
    },
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
  readonly #wasmDir: string;
  readonly #threads: number;
  readonly #optimize: boolean | GraphRewriteOptions;
  #runner: NanoDetRunner | null = null;
  #model: { dispose(): void } | null = null;
  #loading: Promise<ObjectDetectorStatus> | null = null;
  #status: ObjectDetectorStatus | null = null;

  constructor(options: NodeObjectDetectorOptions) {
    this.#modelDir = path.resolve(options.modelDir);
    this.#wasmDir = options.wasmDir ? path.resolve(options.wasmDir) : defaultWasmDir();
    // 8: the size of Emscripten's pre-started pthread pool in this build.
    this.#threads = Math.min(8, Math.max(1, Math.floor(options.threads ?? 1)));
    this.#optimize = options.optimizeGraph ?? true;
  }

  /** Starts the backend, loads the graph and runs one warm-up pass, once; never rejects. */
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
    return { name: 'nanodet', runtime: 'tfjs-wasm', inputSize: NANODET_INPUT_SIZE, classes: OBJECT_CLASS_COUNT } as const;
  }

  async #load(): Promise<ObjectDetectorStatus> {
    const t0 = performance.now();
    let result: ObjectDetectorStatus;
    try {
      const { tf, threads } = await loadRuntime(this.#wasmDir, this.#threads);
      const rewrite = this.#optimize;
      const handler = rewrite
        ? optimizedModelHandler(this.#modelDir, undefined, rewrite === true ? {} : rewrite)
        : fileModelHandler(this.#modelDir);
      const model = await tf.loadGraphModel(handler);
      const runner = createNanoDetRunner(tf, model);
      // The first pass sets up XNNPACK operators (slow); pay it here, not on the first request.
      const blank: RgbImage = { width: 64, height: 48, channels: 3, data: new Uint8Array(64 * 48 * 3) };
      await runner.detect(blank);
      this.#runner = runner;
      this.#model = model as unknown as { dispose(): void };
      result = { ...this.#base(), available: true, loadMs: performance.now() - t0, threads, tfjs: tf.version_core };
    } catch (err) {
      result = { ...this.#base(), available: false, reason: errorMessage(err), loadMs: performance.now() - t0 };
    }
    this.#status = result;
    return result;
  }

  /** Objects in `rgb`, highest confidence first. Throws ObjectDetectorUnavailableError if loading failed. */
  async detect(rgb: RgbImage, opts: DetectOptions = {}): Promise<DetectedObject[]> {
    return (await this.detectTimed(rgb, opts)).objects;
  }

  async detectTimed(rgb: RgbImage, opts: DetectOptions = {}): Promise<{ objects: DetectedObject[]; timings: NanoDetTimings }> {
    const status = await this.load();
    if (!status.available || !this.#runner) throw new ObjectDetectorUnavailableError(status.reason ?? 'not loaded');
    const options: DecodeOptions = { confidence: opts.confidence, iou: opts.iou };
    return this.#runner.detectTimed(rgb, options);
  }

  /** Frees the graph's weights; a later call loads again. */
  dispose(): void {
    this.#model?.dispose();
    this.#model = null;
    this.#runner = null;
    this.#loading = null;
    this.#status = null;
  }
}

export function createNodeObjectDetector(options: NodeObjectDetectorOptions): NodeObjectDetector {
  return new NodeObjectDetector(options);
}
