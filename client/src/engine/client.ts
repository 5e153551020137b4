/**
 * The page's handle on the in-browser engine (worker.ts): promises for each operation, pixels moved to the
 * worker without copying, and the time each operation took (in the worker and round trip).
 *
 *   const engine = createEngine();
 *   await engine.init({ backend: 'auto', preload: { embedding: true } });
 *   await engine.setModel(await fetchTrainedModels());
 *   const result = await engine.recognize(imageData, { recognition_model: 'lbph' });
 *
 * Images: ImageData or `{ data: RGBA bytes, width, height }` (their buffer is transferred: the caller's copy is
 * left empty unless `{ transfer: false }`), or an ImageBitmap (always transferred and closed by the worker).
 */
import type { ArgsOf, ResultOf } from '../../../shared/recognition/worker-messages';
import { DEFAULT_FEATURE_CASCADE_URLS } from './features';
import { defaultLanePlan, type ObjectBackend, ObjectPool, type LanePlan } from './object-pool';
import { OpsWorker } from './ops-worker';
import type {
  BackendChoice,
  CascadeOptions,
  DetectObjectsResult,
  EngineOps,
  FramePixels,
  InitResult,
  ModelTexts,
  ModelUrls,
  RecognizeOptions,
  RecognizeResult,
  SetModelResult,
  TrainResult,
} from './protocol';

export type { ObjectBackend } from './object-pool';
export type {
  BackendChoice,
  DetectObjectsResult,
  InitResult,
  ModelTexts,
  RecognizeOptions,
  RecognizeResult,
  SetModelResult,
  TrainResult,
} from './protocol';

/** RGBA pixels, as ImageData holds them. */
export interface RgbaImage {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

export type EngineImage = ImageData | RgbaImage | ImageBitmap;

export interface EngineInitOptions {
  backend?: BackendChoice;
  cascade?: Partial<CascadeOptions>;
  /** Threads sharing each cascade run (default: the cores, up to 4). The boxes are the same for any number. */
  cascadeThreads?: number;
  /** Where the model files are; relative URLs resolve against the page. Defaults: the server's /models/. */
  urls?: Partial<ModelUrls>;
  preload?: { embedding?: boolean; objects?: boolean };
  /**
   * Object detection with frames overlapping (object-pool.ts): lanes and threads each, null for the engine
   * worker alone. Default: defaultLanePlan for this device's cores.
   */
  objectLanes?: LanePlan | null;
}

export interface PixelOptions {
  /** Move the pixel buffer to the worker (default true); false sends a copy and leaves the caller's intact. */
  transfer?: boolean;
}

/** Every result also carries the round trip seen by the page, ms. */
export type Timed<T> = T & { roundTripMs: number };

export const DEFAULT_MODEL_URLS: ModelUrls = {
  cascade: '/models/haarcascade_frontalface_alt2.xml',
  faceApi: '/models/face-api/',
  nanodet: '/models/nanodet.json',
  features: DEFAULT_FEATURE_CASCADE_URLS,
};

function absolute(url: string): string {
  return new URL(url, document.baseURI).href;
}

function toPixels(image: EngineImage, transfer: boolean): { pixels: FramePixels; transferables: Transferable[] } {
  if (typeof ImageBitmap !== 'undefined' && image instanceof ImageBitmap) {
    return { pixels: { kind: 'bitmap', bitmap: image }, transferables: [image] };
  }
  const { data, width, height } = image as RgbaImage;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new Error(`the image must have a positive whole width and height, got ${width}x${height}`);
  }
  if (data.length !== width * height * 4)
    throw new Error(`the image must hold ${width}x${height} RGBA pixels (${width * height * 4} bytes), got ${data.length}`);
  // Only a buffer the view covers whole can move; otherwise (or on request) send a copy.
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer;
  const bytes = transfer && whole ? new Uint8Array(data.buffer, 0, data.byteLength) : new Uint8Array(data);
  return { pixels: { kind: 'rgba', data: bytes, width, height }, transferables: [bytes.buffer as ArrayBuffer] };
}

export class EngineClient {
  private readonly worker: OpsWorker<EngineOps>;
  private urls: ModelUrls | null = null;
  private objects: ObjectPool;
  private gpuWanted = false;
  private readonly backendListeners = new Set<(backend: ObjectBackend) => void>();

  constructor() {
    this.worker = new OpsWorker(
      new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'lookout-engine' }),
      'in-browser engine',
    );
    this.objects = this.objectPool(defaultLanePlan(navigator.hardwareConcurrency || 1));
  }

  private objectPool(plan: LanePlan | null): ObjectPool {
    return new ObjectPool({
      main: (args, transfer) => this.worker.run('detectObjects', args, transfer),
      urls: () => (this.urls ? { nanodet: this.urls.nanodet, ...(this.urls.yolo ? { yolo: this.urls.yolo } : {}) } : null),
      plan,
      onBackend: (backend) => {
        for (const listener of this.backendListeners) listener(backend);
      },
    });
  }

  private async call<K extends keyof EngineOps>(
    op: K,
    args: ArgsOf<EngineOps, K>,
    transferables: Transferable[] = [],
  ): Promise<Timed<ResultOf<EngineOps, K>>> {
    const t0 = performance.now();
    const result = await this.worker.run(op, args, transferables);
    return { ...result, roundTripMs: performance.now() - t0 };
  }

  /** Loads the cascade and starts the tfjs backend (see InitResult.backend for which and why). */
  async init(options: EngineInitOptions = {}): Promise<Timed<InitResult>> {
    const urls: ModelUrls = { ...DEFAULT_MODEL_URLS, ...options.urls };
    const resolved: ModelUrls = {
      cascade: absolute(urls.cascade),
      faceApi: absolute(urls.faceApi.endsWith('/') ? urls.faceApi : `${urls.faceApi}/`),
      nanodet: absolute(urls.nanodet),
      ...(urls.yolo ? { yolo: absolute(urls.yolo) } : {}),
      features: {
        eye: absolute(urls.features.eye),
        eyeglasses: absolute(urls.features.eyeglasses),
        smile: absolute(urls.features.smile),
      },
    };
    this.urls = resolved;
    if (options.objectLanes !== undefined) {
      this.objects.terminate();
      this.objects = this.objectPool(options.objectLanes);
      this.objects.useGpu(this.gpuWanted);
    }
    const init = await this.call('init', {
      backend: options.backend ?? 'auto',
      ...(options.cascade ? { cascade: options.cascade } : {}),
      ...(options.cascadeThreads !== undefined ? { cascadeThreads: options.cascadeThreads } : {}),
      urls: resolved,
      preload: options.preload,
    });
    // tfjs found a hardware WebGPU adapter: NanoDet moves there once its session is warm (object-pool.ts).
    this.gpuWanted = init.backend.backend === 'webgpu';
    this.objects.useGpu(this.gpuWanted);
    if (options.preload?.objects) this.objects.warmGpu();
    return init;
  }

  /** Installs trained models from the server's files (training.yml, embeddings.json); null clears one. */
  setModel(models: ModelTexts): Promise<Timed<SetModelResult>> {
    return this.call('setModel', models);
  }

  /** Faces in the image, in the shape of POST /api/recognize's answer, plus timing. */
  recognize(image: EngineImage, options: RecognizeOptions & PixelOptions = {}): Promise<Timed<RecognizeResult>> {
    const { transfer = true, ...rest } = options;
    const { pixels, transferables } = toPixels(image, transfer);
    return this.call('recognize', { frame: pixels, options: rest }, transferables);
  }

  /**
   * Objects in the image, in the shape of POST /api/objects/detect's answer, plus the detector and timing.
   * Calls that overlap (a live camera with frames in flight) are spread over object lanes (object-pool.ts).
   */
  async detectObjects(image: EngineImage, confidence?: number, options: PixelOptions = {}): Promise<Timed<DetectObjectsResult>> {
    const { pixels, transferables } = toPixels(image, options.transfer ?? true);
    const t0 = performance.now();
    const result = await this.objects.detect(pixels, transferables, confidence);
    return { ...result, roundTripMs: performance.now() - t0 };
  }

  /** Object lanes running now (0: the engine worker alone). */
  get objectLanes(): number {
    return this.objects.laneCount;
  }

  /** Resolves once object lanes being started are loaded (or failed). */
  objectLanesReady(): Promise<void> {
    return this.objects.ready();
  }

  /** What detects objects now: the runtime, and whether WebGPU is warming up, running or was given up. */
  get objectBackend(): ObjectBackend {
    return this.objects.current;
  }

  /** Calls `listener` each time what detects objects changes; returns the way to stop. */
  onObjectBackend(listener: (backend: ObjectBackend) => void): () => void {
    this.backendListeners.add(listener);
    return () => this.backendListeners.delete(listener);
  }

  /** Resolves once NanoDet's WebGPU lane is warm or given up (at once when none was started). */
  objectGpuReady(): Promise<void> {
    return this.objects.gpuReady();
  }

  /**
   * Trains local models from labelled captures (the largest face of each): LBPH, and the embedding recognizer
   * too when its nets are loaded (init with `preload: { embedding: true }`). They replace the worker's models
   * and come back in the server's file formats.
   */
  train(samples: { label: string; image: EngineImage }[], options: PixelOptions = {}): Promise<Timed<TrainResult>> {
    const transferables: Transferable[] = [];
    const converted = samples.map((s) => {
      const { pixels, transferables: t } = toPixels(s.image, options.transfer ?? true);
      transferables.push(...t);
      return { label: s.label, frame: pixels };
    });
    return this.call('train', { samples: converted }, transferables);
  }

  /** Loads the embedding nets now, so `train` trains the embedding recognizer too; says why when they cannot load. */
  loadEmbedding(): Promise<Timed<{ loaded: boolean; error?: string }>> {
    return this.call('loadEmbedding', {});
  }

  /** Stops the worker; pending calls fail. */
  terminate(): void {
    this.objects.terminate();
    this.worker.terminate();
  }
}

export function createEngine(): EngineClient {
  return new EngineClient();
}
