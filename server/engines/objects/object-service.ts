/**
 * Object detection (80 COCO classes) as the API sees it: the detector loads once, in the background, in its
 * own worker pool; a request that arrives while it loads waits for it, and one that arrives after loading
 * failed gets a 503 with the reason.
 */
import type { ObjectDetectionResponse, ObjectDetectorStatus } from '../../../shared/api/index.js';
import path from 'node:path';
import type { RgbImage } from '../../../shared/image/types.js';
import { OBJECT_CLASSES } from '../../../shared/objects/classes.js';
import { summarize } from '../../../shared/objects/types.js';
import { ApiError } from '../../http/errors.js';
import type { ImageDecoder } from '../../imaging/decode.js';
import type { Logger } from '../../logger.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { ObjectDetectorInfo, ObjectOps, ObjectPool, ObjectWorkerData } from './object-protocol.js';

/** How long close() waits for a load in progress (the server's own shutdown gives up after 5 s). */
const LOAD_WAIT_ON_CLOSE_MS = 4000;

export type ObjectDetectorState = 'loading' | 'ready' | 'error' | 'disabled';

export interface ObjectServiceOptions {
  enabled: boolean;
  /** `nanodet`, or the file name of a YOLO ONNX model in `modelDir`. */
  model: string;
  modelDir: string;
  workers: number;
  confidence: number;
  nmsIou: number;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts). */
  decoder: ImageDecoder;
  log: Logger;
}

export class ObjectService {
  private pool: ObjectPool | null = null;

  /** Jobs waiting for a free object worker (for metrics). */
  get queueLength(): number {
    return this.pool?.queueLength ?? 0;
  }
  private state: ObjectDetectorState;
  private reason: string | undefined;
  private info: ObjectDetectorInfo | null = null;
  private loadMs: number | null = null;
  private loading: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ObjectServiceOptions) {
    this.state = opts.enabled ? 'loading' : 'disabled';
    if (!opts.enabled) this.reason = 'object detection is switched off (OBJECT_DETECTION_ENABLED=false)';
  }

  /** Starts loading in the background; resolves at once. */
  start(): void {
    if (!this.opts.enabled) return;
    const data: ObjectWorkerData = {
      model:
        this.opts.model === 'nanodet'
          ? { kind: 'nanodet', dir: this.opts.modelDir }
          : { kind: 'yolo', file: path.join(this.opts.modelDir, this.opts.model) },
    };
    this.pool = new WorkerPool<ObjectOps>({ name: 'object', script: 'objects/object-worker', data, size: this.opts.workers });
    const started = Date.now();
    this.loading = this.pool.run('status', undefined).then(
      (result) => {
        this.info = result.info;
        this.loadMs = result.loadMs;
        if (result.available) {
          this.state = 'ready';
          this.opts.log.info(`object detector ${result.info.name} (${result.info.runtime}) ready in ${Date.now() - started} ms`);
        } else {
          this.state = 'error';
          this.reason = result.reason ?? 'the object detector could not be loaded';
          this.opts.log.error(`object detector unavailable: ${this.reason}`);
        }
      },
      (err: unknown) => {
        this.state = 'error';
        this.reason = `the object detector could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
        this.opts.log.error(this.reason);
      },
    );
  }

  async close(): Promise<void> {
    // A worker terminated while onnxruntime-node creates its session aborts the whole process (SIGABRT, seen when
    // a server was stopped within a second of starting): let the load finish first, for a bounded time.
    await Promise.race([this.loading.catch(() => undefined), new Promise((r) => setTimeout(r, LOAD_WAIT_ON_CLOSE_MS).unref())]);
    await this.pool?.close();
  }

  get readiness(): ObjectDetectorState {
    return this.state;
  }

  /** The detector's name (`nanodet`, or the YOLO file), for class lists and status. */
  get name(): string {
    return this.info?.name ?? this.opts.model;
  }

  status(): ObjectDetectorStatus {
    return {
      name: this.name,
      runtime: this.info?.runtime ?? null,
      input_size: this.info?.inputSize ?? null,
      classes: OBJECT_CLASSES.length,
      available: this.state === 'ready',
      state: this.state,
      ...(this.reason && this.state !== 'ready' ? { reason: this.reason } : {}),
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
    await this.loading;
    if (this.state !== 'ready' || !this.pool) {
      throw new ApiError('detector_unavailable', this.reason ?? 'the object detector is not available');
    }
    const result = await this.pool.run('detect', { rgb, confidence: confidence ?? this.opts.confidence, iou: this.opts.nmsIou });
    return { objects: result.objects, count: result.objects.length, summary: summarize(result.objects) };
  }
}
