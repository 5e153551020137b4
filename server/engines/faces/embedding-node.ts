/**
 * Node host of the embedding recognizer (shared/embedding/engine.ts): tfjs with the WASM backend (binaries
 * read from node_modules/@tensorflow/tfjs-backend-wasm/dist, never fetched), face-api's node-wasm bundle, and
 * weights read from the model folder on disk.
 *
 * Meant to run inside a vision worker thread, one engine per thread. Node gives every worker thread its own
 * module instances, so each thread has its own tfjs and backend; the module-level promise below is per
 * thread too. Loading happens once per engine; failures
 * become `{ available: false, reason }` instead of exceptions, so a missing model disables the recognizer
 * without taking the worker down.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DEFAULT_DESCRIPTOR_MODEL, type DescriptorModelId } from '../../../shared/embedding/descriptor-models.js';
import { createEmbeddingEngine, type EmbeddingEngine, type FaceApiModule, type FaceDescription } from '../../../shared/embedding/engine.js';
import type { GrayImage, Rect, RgbImage } from '../../../shared/image/types.js';
import { errorMessage, keepingProcessHandlers } from '../workers/runtime-support.js';

export interface NodeEmbeddingOptions {
  /** Folder with the face-api weight manifests and shards (the repo's `public/models/face-api`). */
  modelDir: string;
  /** Folder with the tfjs WASM binaries; defaults to the installed `@tensorflow/tfjs-backend-wasm/dist`. */
  wasmDir?: string;
  /** The descriptor model (EMBEDDING_DESCRIPTOR); `faceapi-128` when absent. */
  descriptor?: DescriptorModelId;
  /** Folder with faceres.json and faceres.bin (`faceres-1024`); defaults to the folder above `modelDir`. */
  descriptorDir?: string;
  /** `faceres-1024`: flip-averaged descriptors (see shared/embedding/engine.ts). */
  flip?: boolean;
}

export interface EmbeddingAvailability {
  available: boolean;
  /** Why the recognizer is unavailable, in words (absent when available). */
  reason?: string;
  /** Time spent in `load()` (backend start plus weights), ms. */
  loadMs: number;
  /** The tfjs backend in use, e.g. "wasm". */
  backend?: string;
  /** The descriptor model the engine computes (loaded or not). */
  descriptorModel?: DescriptorModelId;
  /** Versions of face-api and tfjs, for the health report. */
  versions?: { faceapi: string; tfjs: string };
}

/** Thrown by `describeFaces` when the engine could not load; the message carries the reason. */
export class EmbeddingUnavailableError extends Error {
  constructor(reason: string) {
    super(`embedding recognizer unavailable: ${reason}`);
    this.name = 'EmbeddingUnavailableError';
  }
}

type FaceApiNode = FaceApiModule & {
  version: string;
  tf: FaceApiModule['tf'] & {
    version_core: string;
    setWasmPaths(prefix: string, usePlatformFetch?: boolean): void;
    setBackend(name: string): Promise<boolean>;
    getBackend(): string;
    ready(): Promise<void>;
  };
};

const require = createRequire(import.meta.url);

function defaultWasmDir(): string {
  return path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
}

let runtime: Promise<FaceApiNode> | null = null;

/** face-api (node-wasm bundle) with tfjs switched to the WASM backend; once per thread. */
function loadRuntime(wasmDir: string): Promise<FaceApiNode> {
  runtime ??= (async () => {
    // require, not import(): the bundle is CommonJS, and require gives the one instance every caller in this
    // thread shares (loaders differ in how they wrap a CommonJS module for import()).
    const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js') as FaceApiNode;
    const { tf } = faceapi;
    // Emscripten's Node glue would leave process-wide handlers behind: keepingProcessHandlers takes them off.
    await keepingProcessHandlers(async () => {
      // Before any backend starts (asking tfjs for its backend would already start one): plain file paths,
      // no fetch, so Emscripten reads the binary from disk.
      tf.setWasmPaths(wasmDir.endsWith(path.sep) ? wasmDir : wasmDir + path.sep, false);
      if (!(await tf.setBackend('wasm'))) throw new Error(`tfjs WASM backend failed to start (binaries in ${wasmDir})`);
      await tf.ready();
    });
    return faceapi;
  })().catch((err: unknown) => {
    runtime = null;
    throw err;
  });
  return runtime;
}

export class NodeEmbeddingEngine {
  readonly #modelDir: string;
  readonly #wasmDir: string;
  readonly #descriptor: DescriptorModelId;
  readonly #descriptorDir: string;
  readonly #flip: boolean;
  #engine: EmbeddingEngine | null = null;
  #loading: Promise<EmbeddingAvailability> | null = null;
  #availability: EmbeddingAvailability | null = null;

  constructor(options: NodeEmbeddingOptions) {
    this.#modelDir = path.resolve(options.modelDir);
    this.#wasmDir = options.wasmDir ? path.resolve(options.wasmDir) : defaultWasmDir();
    this.#descriptor = options.descriptor ?? DEFAULT_DESCRIPTOR_MODEL;
    this.#descriptorDir = options.descriptorDir ? path.resolve(options.descriptorDir) : path.dirname(this.#modelDir);
    this.#flip = options.flip === true;
  }

  /** The descriptor model this engine computes. */
  get descriptorModel(): DescriptorModelId {
    return this.#descriptor;
  }

  /** Starts the backend and loads the weights, once; never rejects (see `available` and `reason`). */
  load(): Promise<EmbeddingAvailability> {
    this.#loading ??= this.#load();
    return this.#loading;
  }

  /** The outcome of `load()`, or null before it finished. */
  get availability(): EmbeddingAvailability | null {
    return this.#availability;
  }

  async #load(): Promise<EmbeddingAvailability> {
    const t0 = performance.now();
    let result: EmbeddingAvailability;
    try {
      const faceapi = await loadRuntime(this.#wasmDir);
      const modelDir = this.#modelDir;
      const descriptorDir = this.#descriptorDir;
      const engine = createEmbeddingEngine({
        faceapi,
        readModelFile: (name) => readFile(path.join(modelDir, name)),
        descriptor: this.#descriptor,
        readDescriptorFile: (name) => readFile(path.join(descriptorDir, name)),
        flip: this.#flip,
      });
      await engine.load();
      this.#engine = engine;
      result = {
        available: true,
        loadMs: performance.now() - t0,
        backend: faceapi.tf.getBackend(),
        descriptorModel: this.#descriptor,
        versions: { faceapi: faceapi.version, tfjs: faceapi.tf.version_core },
      };
    } catch (err) {
      result = { available: false, reason: errorMessage(err), loadMs: performance.now() - t0, descriptorModel: this.#descriptor };
    }
    this.#availability = result;
    return result;
  }

  /** The full result per box (landmarks, aligned box, descriptor). Throws EmbeddingUnavailableError if loading failed. */
  async describeFacesDetailed(image: RgbImage | GrayImage, boxes: readonly Rect[]): Promise<FaceDescription[]> {
    const status = await this.load();
    if (!status.available || !this.#engine) throw new EmbeddingUnavailableError(status.reason ?? 'not loaded');
    return this.#engine.describe(image, boxes);
  }

  /** One descriptor per box, in order (128-d or unit-length 1024-d, see `descriptorModel`). Pass RGB where possible (gray is replicated to 3 channels). */
  async describeFaces(image: RgbImage | GrayImage, boxes: readonly Rect[]): Promise<Float32Array[]> {
    return (await this.describeFacesDetailed(image, boxes)).map((f) => f.descriptor);
  }

  /** Frees the nets; a later call loads again. */
  dispose(): void {
    this.#engine?.dispose();
    this.#engine = null;
    this.#loading = null;
    this.#availability = null;
  }
}

export function createNodeEmbeddingEngine(options: NodeEmbeddingOptions): NodeEmbeddingEngine {
  return new NodeEmbeddingEngine(options);
}
