/**
 * Face detection, recognition and training, as the spec's flows describe them: the active detection engine
 * finds faces, the active recognizer names them, training runs the detector over every stored image.
 * The heavy work runs in the vision worker pool; this module owns the state (active engines, trained model)
 * and the rules (one training at a time, the previous model stays until a new one is saved).
 */
import fs from 'node:fs/promises';
import type {
  DetectionMethod,
  FaceResult,
  RecognitionModel,
  RecognizeResponse,
  SkippedImage,
  TrainResponse,
  TrainStatusResponse,
} from '../../shared/api/contract.js';
import { decide, type DistanceWindow } from '../../shared/recognition/confidence.js';
import { LBPH_DEFAULTS, type LbphModel } from '../../shared/lbph/lbph.js';
import type { GrayImage, Rect } from '../../shared/image/types.js';
import { ApiError } from '../http/errors.js';
import { decodeImage, type DecodedImage, type DecodeLimits } from '../imaging/decode.js';
import type { ImageStore } from '../storage/image-store.js';
import type { ModelStore } from '../storage/model-store.js';
import type { RemoteEngine } from './remote-engine.js';
import type { VisionPool } from './vision-pool.js';
import type { Logger } from '../logger.js';

export interface FaceServiceOptions {
  pool: VisionPool;
  images: ImageStore;
  models: ModelStore;
  remote: RemoteEngine;
  limits: DecodeLimits;
  lbphWindow: DistanceWindow;
  detectionMethod: DetectionMethod;
  recognitionModel: RecognitionModel;
  log: Logger;
}

interface TrainedLbph {
  model: LbphModel;
  version: number;
  names: Map<number, string>;
  trainedAt: string;
}

/** Moves the pixel buffer to the worker instead of copying it. */
function transferable(gray: GrayImage): ArrayBuffer[] {
  return gray.data.byteOffset === 0 && gray.data.byteLength === gray.data.buffer.byteLength
    ? [gray.data.buffer as ArrayBuffer]
    : [];
}

export class FaceService {
  private lbph: TrainedLbph | null = null;
  /** The installed model and the one before it: a request may still run on the previous one during a swap. */
  private readonly recentLbph = new Map<number, TrainedLbph>();
  private modelVersion = 0;
  private training: { processed: number; total: number } | null = null;
  private lastTraining: TrainResponse | undefined;
  private lastTrainingError: TrainStatusResponse['last_error'];
  detectionMethod: DetectionMethod;
  recognitionModel: RecognitionModel;

  constructor(private readonly opts: FaceServiceOptions) {
    this.detectionMethod = opts.detectionMethod;
    this.recognitionModel = opts.recognitionModel;
  }

  /** Loads the saved model, if any, into every worker. A broken model file is logged and ignored, not fatal. */
  async init(): Promise<void> {
    try {
      const stored = await this.opts.models.loadLbph();
      if (stored) {
        await this.installLbph(stored.model, stored.labelIds, stored.trainedAt);
        this.opts.log.info(`loaded LBPH model: ${Object.keys(stored.labelIds).length} labels, ${stored.model.labels.length} faces`);
      }
    } catch (err) {
      this.opts.log.error(`the saved LBPH model could not be loaded and is ignored until the next training: ${String(err)}`);
    }
  }

  get trained(): boolean {
    return this.lbph !== null;
  }

  get trainedLabels(): Set<string> {
    return new Set(this.lbph ? this.lbph.names.values() : []);
  }

  get trainedAt(): string | undefined {
    return this.lbph?.trainedAt;
  }

  /** Why a detection method cannot be selected now, or null when it can. */
  detectionUnavailable(method: DetectionMethod): string | null {
    return method === 'remote' ? this.opts.remote.unavailableReason : null;
  }

  /** Selects the detection engine for every later recognize and train; 409 when it is not available. */
  setDetectionMethod(method: DetectionMethod): void {
    const reason = this.detectionUnavailable(method);
    if (reason) throw new ApiError('model_unavailable', `detection method "${method}" is not available: ${reason}`);
    if (method !== this.detectionMethod) this.opts.log.info(`detection method: ${this.detectionMethod} -> ${method}`);
    this.detectionMethod = method;
  }

  /** Why a recognition model cannot be selected now, or null when it can. */
  recognitionUnavailable(model: RecognitionModel): string | null {
    return model === 'embedding' ? 'the embedding recognizer is not part of this build yet' : null;
  }

  /** Selects the recognizer for every later recognize and train; 409 when it is not available. */
  setRecognitionModel(model: RecognitionModel): void {
    const reason = this.recognitionUnavailable(model);
    if (reason) throw new ApiError('model_unavailable', `recognition model "${model}" is not available: ${reason}`);
    if (model !== this.recognitionModel) this.opts.log.info(`recognition model: ${this.recognitionModel} -> ${model}`);
    this.recognitionModel = model;
  }

  /** Training state of each recognizer. */
  recognizerStatus(): Record<RecognitionModel, { trained: boolean; trained_at: string | null; labels: number }> {
    return {
      lbph: { trained: this.lbph !== null, trained_at: this.lbph?.trainedAt ?? null, labels: this.lbph?.names.size ?? 0 },
      embedding: { trained: false, trained_at: null, labels: 0 },
    };
  }

  /** Boxes from the remote engine, or undefined to let the worker run the local cascade. */
  private async remoteBoxes(method: DetectionMethod, rgb: DecodedImage['rgb']): Promise<Rect[] | undefined> {
    return method === 'remote' ? this.opts.remote.detect(rgb) : undefined;
  }

  async recognize(bytes: Uint8Array): Promise<RecognizeResponse> {
    const { gray, rgb } = await decodeImage(bytes, this.opts.limits);
    // The method is read once: a switch while this request runs applies from the next request on.
    const method = this.detectionMethod;
    const boxes = await this.remoteBoxes(method, rgb);
    const result = await this.opts.pool.run({ op: 'recognize', gray, boxes }, transferable(gray));
    if (result.op !== 'recognize') throw new Error('unexpected worker reply');
    const lbph = this.recentLbph.get(result.modelVersion) ?? null;
    const faces: FaceResult[] = result.faces.map(({ box, labelId, distance }) => {
      const face: FaceResult = { x: box.x, y: box.y, w: box.width, h: box.height, label: 'unknown', confidence: 0 };
      if (labelId === null || distance === null || !lbph) return face;
      face.distance = Math.round(distance * 1000) / 1000;
      const decision = decide(distance, this.opts.lbphWindow);
      const name = lbph.names.get(labelId);
      if (decision.known && name !== undefined) {
        face.label = name;
        face.confidence = decision.confidence;
      }
      return face;
    });
    return {
      faces,
      count: faces.length,
      detection_method: method,
      recognition_model: this.recognitionModel,
      trained: lbph !== null,
    };
  }

  trainStatus(): TrainStatusResponse {
    return {
      state: this.training ? 'running' : 'idle',
      processed: this.training?.processed ?? 0,
      total: this.training?.total ?? 0,
      ...(this.lastTraining ? { last: this.lastTraining } : {}),
      ...(this.lastTrainingError ? { last_error: this.lastTrainingError } : {}),
    };
  }

  /**
   * Trains on every stored image. One run at a time (409 otherwise). When no image gives a face, nothing is
   * saved and the previous model stays in use.
   */
  async train(): Promise<TrainResponse> {
    if (this.training) {
      throw new ApiError(
        'training_in_progress',
        `a training run is already in progress (${this.training.processed} of ${this.training.total} images); try again when it ends`,
      );
    }
    this.training = { processed: 0, total: 0 };
    const started = Date.now();
    try {
      const result = await this.runTraining(started);
      this.lastTraining = result;
      this.lastTrainingError = undefined;
      return result;
    } catch (err) {
      if (err instanceof ApiError) {
        this.lastTrainingError = { code: err.code, message: err.message, at: new Date().toISOString() };
      }
      throw err;
    } finally {
      this.training = null;
    }
  }

  private async runTraining(started: number): Promise<TrainResponse> {
    const progress = this.training!;
    const refs = await this.opts.images.all();
    progress.total = refs.length;
    if (refs.length === 0) {
      throw new ApiError('no_training_data', 'there are no training images; upload images with POST /api/images first');
    }
    const method = this.detectionMethod;
    const samples: { label: string; histogram: Float32Array }[] = [];
    const skipped: SkippedImage[] = [];

    // Keep every worker busy, with a bounded number of decoded images in memory at once.
    let next = 0;
    let failure: unknown = null;
    const lane = async (): Promise<void> => {
      while (next < refs.length && failure === null) {
        const ref = refs[next++];
        try {
          const bytes = await fs.readFile(ref.path);
          const { gray, rgb } = await decodeImage(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), this.opts.limits);
          const boxes = await this.remoteBoxes(method, rgb);
          const result = await this.opts.pool.run({ op: 'trainSample', gray, boxes }, transferable(gray));
          if (result.op !== 'trainSample') throw new Error('unexpected worker reply');
          if (result.histogram) samples.push({ label: ref.label, histogram: result.histogram });
          else skipped.push({ label: ref.label, filename: ref.filename, reason: 'no_face' });
        } catch (err) {
          // The remote engine failing mid-run fails the run (the previous model stays): training on the images
          // it happened to reach would silently drop people.
          if (err instanceof ApiError && err.code === 'remote_unavailable') {
            failure ??= err;
            return;
          }
          // A file deleted meanwhile, or one that no longer decodes: report it, train on the rest.
          this.opts.log.warn(`training skipped ${ref.label}/${ref.filename}: ${String(err)}`);
          skipped.push({ label: ref.label, filename: ref.filename, reason: 'unreadable' });
        }
        progress.processed++;
      }
    };
    // Every lane has stopped before the run ends, so no stray work overlaps the next training.
    await Promise.all(Array.from({ length: this.opts.pool.size * 2 }, lane));
    if (failure) throw failure;

    if (samples.length === 0) {
      throw new ApiError(
        'no_faces_found',
        `no face was found in any of the ${refs.length} training images; the previous model is kept`,
        { images_skipped: skipped },
      );
    }

    // Label ids: sorted names, so a retrain over the same labels gives the same ids.
    const labels = [...new Set(samples.map((s) => s.label))].sort();
    const labelIds: Record<string, number> = Object.fromEntries(labels.map((name, id) => [name, id]));
    samples.sort((a, b) => a.label.localeCompare(b.label));
    const model: LbphModel = {
      ...LBPH_DEFAULTS,
      threshold: Number.MAX_VALUE,
      histograms: samples.map((s) => s.histogram),
      labels: Int32Array.from(samples.map((s) => labelIds[s.label])),
    };
    await this.opts.models.saveLbph(model, labelIds);
    const trainedAt = new Date().toISOString();
    await this.installLbph(model, labelIds, trainedAt);

    const facesPerLabel: Record<string, number> = {};
    for (const s of samples) facesPerLabel[s.label] = (facesPerLabel[s.label] ?? 0) + 1;
    skipped.sort((a, b) => a.label.localeCompare(b.label) || a.filename.localeCompare(b.filename));
    return {
      status: 'ok',
      labels,
      total_faces: samples.length,
      total_labels: labels.length,
      faces_per_label: facesPerLabel,
      images_total: refs.length,
      images_skipped: skipped,
      detection_method: method,
      recognition_model: 'lbph',
      duration_ms: Date.now() - started,
      trained_at: trainedAt,
    };
  }

  private async installLbph(model: LbphModel, labelIds: Record<string, number>, trainedAt: string): Promise<void> {
    const version = ++this.modelVersion;
    const names = new Map(Object.entries(labelIds).map(([name, id]) => [id, name]));
    const installed: TrainedLbph = { model, version, names, trainedAt };
    // Known before any worker can answer with this version; versions older than the previous one are dropped.
    this.recentLbph.set(version, installed);
    this.recentLbph.delete(version - 2);
    await this.opts.pool.broadcast({ op: 'setModel', model, version });
    this.lbph = installed;
  }
}
