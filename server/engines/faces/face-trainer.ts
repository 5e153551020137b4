/**
 * Face training (face-service.ts): one run at a time, here and across replicas (the models' training lock); the
 * detector runs over every stored image, reusing the features kept per image where their versions still hold,
 * and every available recognizer is trained and saved. The previous models stay until new ones are saved.
 */
import type { DetectionMethod, SkippedImage, TrainResponse, TrainStatusResponse } from '../../../shared/api/index.js';
import { trained } from '../../../shared/recognition/model-files.js';
import { assembleModels, type TrainingSample } from '../../../shared/recognition/training.js';
import { ApiError } from '../../http/errors.js';
import { cropVersion, featureWork, type FeatureVersions, type ImageFeatures, imageHash } from '../../storage/feature-store.js';
import { type HeldLock, LockBusyError } from '../../storage/file-lock.js';
import type { ImageRef } from '../../storage/image-store.js';
import type { TrainedFiles } from '../../storage/trained-files.js';
import type { FaceModelState } from './face-model-state.js';
import type { FaceServiceOptions } from './face-service.js';
import { transferable } from './vision-protocol.js';

/** Without the server's own versions: the cascade and crop by name only (tests that build the service by hand). */
const DEFAULT_FEATURE_VERSIONS: FeatureVersions = { detector: { local: 'haar', remote: 'remote' }, crop: cropVersion('default') };

/** What a training did with the stored features, so far (progress) or in all (its answer). */
interface FeatureCounts {
  reused: number;
  computed: number;
  detections: number;
  histograms: number;
  descriptors: number;
}

export class FaceTrainer {
  private training: ({ processed: number; total: number } & FeatureCounts) | null = null;
  private lastTraining: TrainResponse | undefined;
  private lastTrainingError: TrainStatusResponse['last_error'];

  constructor(
    private readonly opts: FaceServiceOptions,
    private readonly state: FaceModelState,
  ) {}

  /** True while a training runs here. */
  get running(): boolean {
    return this.training !== null;
  }

  /** Records why the recognizers need training (the training status's `last_error`). */
  failed(error: NonNullable<TrainStatusResponse['last_error']>): void {
    this.lastTrainingError = error;
  }

  trainStatus(): TrainStatusResponse {
    return {
      state: this.training ? 'running' : 'idle',
      processed: this.training?.processed ?? 0,
      total: this.training?.total ?? 0,
      ...(this.training ? { reused: this.training.reused, computed: this.training.computed } : {}),
      ...(this.lastTraining ? { last: this.lastTraining } : {}),
      ...(this.lastTrainingError ? { last_error: this.lastTrainingError } : {}),
    };
  }

  /**
   * Trains on every stored image. One run at a time (409 otherwise). When no image gives a face, nothing is
   * saved and the previous models stay in use.
   */
  async train(): Promise<TrainResponse> {
    if (this.training) {
      throw new ApiError(
        'training_in_progress',
        `a training run is already in progress (${this.training.processed} of ${this.training.total} images); try again when it ends`,
      );
    }
    this.training = { processed: 0, total: 0, reused: 0, computed: 0, detections: 0, histograms: 0, descriptors: 0 };
    // One training across every replica sharing DATA_DIR: the lock file in the models folder.
    let lock: HeldLock;
    try {
      lock = await this.opts.models.trainingLock.acquire();
    } catch (err) {
      this.training = null;
      if (err instanceof LockBusyError) {
        const by = err.owner ? ` (pid ${err.owner.pid} on ${err.owner.host}, since ${err.owner.started})` : '';
        throw new ApiError('training_in_progress', `a training run is already in progress on another server${by}; try again when it ends`);
      }
      throw err;
    }
    try {
      const result = await this.runTraining(Date.now());
      this.lastTraining = result;
      this.lastTrainingError = undefined;
      return result;
    } catch (err) {
      if (err instanceof ApiError) {
        this.lastTrainingError = { code: err.code, message: err.message, at: new Date().toISOString() };
      }
      throw err;
    } finally {
      await this.state.readSignature();
      await lock.release().catch((err) => this.opts.log.warn(`releasing the training lock failed: ${String(err)}`));
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
    const method = this.state.detectionMethod;
    const withEmbedding = this.state.embeddingAvailability.available;
    // By the image's place in the snapshot, not by which lane finished first: the same images give the same model.
    const found: (TrainingSample | undefined)[] = new Array(refs.length);
    const skipped: SkippedImage[] = [];
    const store = this.opts.images.features;
    const versions = this.opts.featureVersions ?? DEFAULT_FEATURE_VERSIONS;
    // The remote detector's version includes the served model's (asked now): a new model version is another detector.
    const detector =
      method === 'remote'
        ? `${versions.detector.remote}|${await this.opts.remote.modelIdentity({ fresh: true })}`
        : versions.detector[method];
    const descriptorModel = withEmbedding && this.opts.embedding ? this.descriptorVersion() : null;
    // Feature writes overlap the next images' work; all are done before the run ends (and before the lock goes).
    const writes: Promise<void>[] = [];

    // Keep every worker busy, with a bounded number of decoded images in memory at once.
    let next = 0;
    let failure: unknown = null;
    const lane = async (): Promise<void> => {
      while (next < refs.length && failure === null) {
        const index = next++;
        const ref = refs[index];
        try {
          // Not through a symbolic link (server/storage/no-follow.ts): one planted in a label folder is unreadable.
          const bytes = await this.opts.images.readRef(ref);
          const image = imageHash(bytes);
          const stored = store ? await store.read(ref.label, ref.filename) : null;
          const work = featureWork(stored, image, detector, versions.crop, descriptorModel);
          let features: ImageFeatures;
          if (stored && !work.detect && !work.histogram && !work.descriptor) {
            features = stored;
            progress.reused++;
          } else {
            features = await this.computeFeatures(bytes, stored, work, { image, detector, crop: versions.crop, method, descriptorModel });
            progress.computed++;
            if (store) writes.push(this.keepFeatures(ref, features));
          }
          if (features.face && features.histogram) {
            found[index] = {
              label: ref.label,
              histogram: features.histogram,
              // Only descriptors of the running model: a stored one of another model is never mixed in.
              descriptor: descriptorModel !== null && features.descriptorModel === descriptorModel ? features.descriptor : null,
              ...(features.faceAlignment ? { faceAlignment: features.faceAlignment } : {}),
            };
          } else skipped.push({ label: ref.label, filename: ref.filename, reason: 'no_face' });
        } catch (err) {
          // The remote engine failing mid-run fails the run (the previous models stay): training on the images
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
    await Promise.all(writes);
    // Features of images gone since (deleted on another replica while a training wrote them): removed.
    const removed = store
      ? await store.sweep(new Set(refs.map((r) => `${r.label}/${r.filename}`))).catch((err) => {
          this.opts.log.warn(`removing the features of deleted images failed: ${String(err)}`);
          return 0;
        })
      : 0;
    if (failure) throw failure;
    const samples = found.filter((s): s is TrainingSample => s !== undefined);

    if (samples.length === 0) {
      throw new ApiError('no_faces_found', `no face was found in any of the ${refs.length} training images; the previous model is kept`, {
        images_skipped: skipped,
      });
    }

    // Label ids: sorted names, so a retrain over the same labels gives the same ids (shared with the browser).
    const passed = Date.now();
    const assembled = assembleModels(samples);
    const { labels, labelIds, lbph: lbphModel, facesPerLabel } = assembled;
    const trainedAt = new Date().toISOString();
    // The model saved for good (training.lbph, fast); training.yml is written from it after the answer (publish).
    // Its mtime is the training's time, which a restart reads back: the file system's coarse clock stamped it a
    // few ms before `trainedAt`, and the training's records (trained-detection.json) no longer matched it.
    const saved = await this.opts.models.saveSource(lbphModel, labelIds, { mtime: new Date(trainedAt) });
    const lbph = trained({ model: lbphModel, labelIds }, trainedAt);
    // An embedding model this run does not replace stays, and so do its file's bytes.
    const files: TrainedFiles = {
      lbph: null,
      lbphSource: saved.source,
      labelMap: saved.pickle,
      embedding: this.state.trainedFiles.files.embedding,
    };

    let embedding = this.state.current.embedding;
    if (withEmbedding && assembled.embedding) {
      const { model, labelIds: usedIds } = assembled.embedding;
      files.embedding = await this.opts.models.saveEmbedding(model, usedIds, trainedAt);
      embedding = trained({ model, labelIds: usedIds }, trainedAt);
    }
    // Published once every file of this training is on disk: downloads switch from the old set to the new whole.
    this.state.publish(files, lbph, embedding, { model: lbphModel, labelIds }, saved.source);
    const savedAt = Date.now();
    await this.state.install(lbph, embedding);
    // Where a training's time goes, now that the image pass is no longer all of it.
    this.opts.log.info(
      `trained on ${refs.length} images: image pass ${passed - started} ms (${progress.reused} reused, ${progress.computed} computed), models assembled and saved ${savedAt - passed} ms, installed ${Date.now() - savedAt} ms (training.yml written after the answer)`,
    );

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
      recognition_model: this.state.recognitionModel,
      recognizers_trained: embedding?.trainedAt === trainedAt ? ['lbph', 'embedding'] : ['lbph'],
      duration_ms: Date.now() - started,
      trained_at: trainedAt,
      features: {
        reused: progress.reused,
        computed: progress.computed,
        detections: progress.detections,
        histograms: progress.histograms,
        descriptors: progress.descriptors,
        removed,
      },
    };
  }

  /** The running descriptor model's version: its id and the nets' library version (another build may differ). */
  private descriptorVersion(): string {
    const { descriptorModel, versions } = this.state.embeddingAvailability;
    return `${descriptorModel ?? 'unknown'}|face-api ${versions?.faceapi ?? '?'}`;
  }

  /**
   * Decodes an image and computes the parts of its features `work` names; the others come from `stored` (the box
   * stays when only the crop or the descriptor model changed). Counted in the training's progress.
   */
  private async computeFeatures(
    bytes: Uint8Array,
    stored: ImageFeatures | null,
    work: { detect: boolean; histogram: boolean; descriptor: boolean },
    run: { image: string; detector: string; crop: string; method: DetectionMethod; descriptorModel: string | null },
  ): Promise<ImageFeatures> {
    const progress = this.training!;
    // Training waits for room in the pixel budget as long as it takes, rather than losing an image.
    return this.opts.decoder.use(
      bytes,
      async ({ gray, rgb }) => {
        const base = work.detect || !stored ? null : stored;
        let features: ImageFeatures = base
          ? { ...base }
          : { image: run.image, detector: run.detector, face: null, crop: null, histogram: null, descriptorModel: null, descriptor: null };
        if (!base) {
          const boxes = await this.state.remoteBoxes(run.method, rgb);
          const result = await this.opts.pool.run('trainSample', { gray, boxes }, transferable(gray));
          progress.detections++;
          if (!result.face || !result.histogram) return features;
          progress.histograms++;
          features = { ...features, face: result.face, crop: run.crop, histogram: result.histogram };
          if (result.faceAlignment) features.faceAlignment = result.faceAlignment;
        } else if (work.histogram && base.face) {
          // The stored box as the only box: the same crop the detection would have given, without detecting.
          const result = await this.opts.pool.run('trainSample', { gray, boxes: [base.face] }, transferable(gray));
          progress.histograms++;
          const { faceAlignment: _old, ...rest } = features;
          features = { ...rest, crop: run.crop, histogram: result.histogram };
          if (result.faceAlignment) features.faceAlignment = result.faceAlignment;
        }
        if (features.face && run.descriptorModel !== null && (work.descriptor || !base) && this.opts.embedding) {
          const descriptor = (await this.opts.embedding.run('describe', { rgb, boxes: [features.face] }))[0] ?? null;
          progress.descriptors++;
          features = { ...features, descriptorModel: run.descriptorModel, descriptor };
        }
        return features;
      },
      { wait: 'unbounded' },
    );
  }

  /** Keeps an image's new features; a failed write costs a recomputation next time, not the training. */
  private async keepFeatures(ref: ImageRef, features: ImageFeatures): Promise<void> {
    try {
      await this.opts.images.keepFeatures(ref, features);
    } catch (err) {
      this.opts.log.warn(`the training features of ${ref.label}/${ref.filename} were not kept: ${String(err)}`);
    }
  }
}
