/**
 * Object detection (80 COCO classes) as the API sees it: the detector loads on the first request, in its own
 * worker pool, and is let go after ENGINE_IDLE_RELEASE_S without requests (#38 2); a request that arrives while
 * it loads waits for it (concurrent first requests share one load), and one that arrives after loading failed
 * gets a 503 with the reason. A missing model file is found at start, without loading anything.
 */
import type { ObjectDetectionResponse, ObjectDetectorStatus } from '../../../shared/api/index.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { RgbImage } from '../../../shared/image/types.js';
import { OBJECT_CLASSES } from '../../../shared/objects/classes.js';
import { summarize } from '../../../shared/objects/types.js';
import { ApiError } from '../../http/errors.js';
import type { ImageDecoder } from '../../imaging/decode.js';
import type { Logger } from '../../logger.js';
import { LazyWorkerPool } from '../workers/lazy-pool.js';
import type { ObjectDetectorInfo, ObjectOps, ObjectWorkerData } from './object-protocol.js';

/** `not_loaded`: enabled, loads on the next request (never used since the start, or let go when idle). */
export type ObjectDetectorState = 'not_loaded' | 'loading' | 'ready' | 'error' | 'disabled';

export interface ObjectServiceOptions {
  enabled: boolean;
  /** `nanodet`, or the file name of a YOLO ONNX model in `modelDir`. */
  model: string;
  modelDir: string;
  workers: number;
  confidence: number;
  nmsIou: number;
  /** Let the detector go after this long without a request, ms; 0: keep it once loaded (ENGINE_IDLE_RELEASE_S). */
  idleReleaseMs: number;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts). */
  decoder: ImageDecoder;
  log: Logger;
}

export class ObjectService {
  private readonly pool: LazyWorkerPool<ObjectOps> | null = null;

  /** Jobs waiting for a free object worker (for metrics). */
  get queueLength(): number {
    return this.pool?.queueLength ?? 0;
  }
  /** Why the detector cannot answer (switched off, or its load failed); it stays so until a restart. */
  private failure: string | undefined;
  private info: ObjectDetectorInfo | null = null;
  private loadMs: number | null = null;

  constructor(private readonly opts: ObjectServiceOptions) {
    if (!opts.enabled) {
      this.failure = 'object detection is switched off (OBJECT_DETECTION_ENABLED=false)';
      return;
    }
    const data: ObjectWorkerData = {
      model:
        opts.model === 'nanodet' ? { kind: 'nanodet', dir: opts.modelDir } : { kind: 'yolo', file: path.join(opts.modelDir, opts.model) },
    };
    // Loading is what would find a missing file; looking for it now keeps /api/ready honest before any request.
    const file = data.model.kind === 'nanodet' ? path.join(data.model.dir, 'nanodet.json') : data.model.file;
    if (!existsSync(file)) {
      this.failure = `the object detector could not be loaded: ${file} does not exist`;
      opts.log.error(`object detector unavailable: ${this.failure}`);
      return;
    }
    this.pool = new LazyWorkerPool<ObjectOps>({
      name: 'object',
      script: 'objects/object-worker',
      data,
      size: opts.workers,
      idleReleaseMs: opts.idleReleaseMs,
      onLoad: (pool) => this.onLoad(pool),
      onRelease: (pool) => pool.run('dispose', undefined),
      log: (message) => opts.log.info(message),
    });
  }

  /** The worker answers `status` once its detector loaded (or failed to). */
  private async onLoad(pool: { run: LazyWorkerPool<ObjectOps>['run'] }): Promise<void> {
    const result = await pool.run('status', undefined);
    this.info = result.info;
    this.loadMs = result.loadMs;
    if (result.available) {
      this.opts.log.info(`object detector ${result.info.name} (${result.info.runtime}) loaded in ${Math.round(result.loadMs)} ms`);
    } else {
      this.failure = result.reason ?? 'the object detector could not be loaded';
      this.opts.log.error(`object detector unavailable: ${this.failure}`);
    }
  }

  /** Nothing to start: the detector loads on the first request (kept for the callers that start services). */
  start(): void {}

  async close(): Promise<void> {
    await this.pool?.close();
  }

  /** Loads the detector now (what the first request would do); resolves when it can answer or failed. */
  async load(): Promise<void> {
    if (this.failure || !this.pool) return;
    try {
      await this.pool.ensure();
    } catch (err) {
      this.failure = `the object detector could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
      this.opts.log.error(this.failure);
    }
    // A detector that failed to load is of no use: its workers go at once.
    if (this.failure) await this.pool.release();
  }

  /** Times the detector was loaded since the start (concurrent first requests share one). */
  get loads(): number {
    return this.pool?.starts ?? 0;
  }

  get readiness(): ObjectDetectorState {
    if (!this.opts.enabled) return 'disabled';
    if (this.failure || !this.pool) return 'error';
    return this.pool.state;
  }

  /** The detector's name (`nanodet`, or the YOLO file), for class lists and status. */
  get name(): string {
    return this.info?.name ?? this.opts.model;
  }

  /** What the last load said (kept after the detector is let go); `available`: a request would be answered. */
  status(): ObjectDetectorStatus {
    const state = this.readiness;
    return {
      name: this.name,
      runtime: this.info?.runtime ?? null,
      input_size: this.info?.inputSize ?? null,
      classes: OBJECT_CLASSES.length,
      available: state !== 'error' && state !== 'disabled',
      state,
      ...(this.failure ? { reason: this.failure } : {}),
      confidence_threshold: this.opts.confidence,
      nms_iou: this.opts.nmsIou,
      load_ms: this.loadMs,
    };
  }

  async detect(bytes: Uint8Array, confidence?: number): Promise<ObjectDetectionResponse> {
    // Decode first: a bad image is a 400 whatever state the detector is in.
    return this.opts.decoder.use(bytes, ({ rgb }) => this.detectDecoded(rgb, confidence));
  }

  /** Detection on an image already decoded (the chat analysis decodes once for faces and objects). */
  async detectDecoded(rgb: RgbImage, confidence?: number): Promise<ObjectDetectionResponse> {
    await this.load();
    if (this.failure || !this.pool) {
      throw new ApiError('detector_unavailable', this.failure ?? 'the object detector is not available');
    }
    const result = await this.pool.run('detect', { rgb, confidence: confidence ?? this.opts.confidence, iou: this.opts.nmsIou });
    return { objects: result.objects, count: result.objects.length, summary: summarize(result.objects) };
  }
}
