/**
 * Face detection, recognition and training, as the spec's flows describe them: the active detection engine
 * finds faces, the active recognizer names them, training runs the detector over every stored image and
 * trains every available recognizer (LBPH always, the embedding recognizer when its model loaded), so a
 * switch of recognizer needs no retraining. The heavy work runs in the vision worker pool; this module owns
 * the state (active engines, trained models) and the rules (one training at a time, the previous models stay
 * until new ones are saved).
 */
import type {
  DetectionMethod,
  RecognitionModel,
  RecognizeResponse,
  RecognizerStatus,
  SkippedImage,
  TrainResponse,
  TrainStatusResponse,
} from '../../../shared/api/index.js';
import type { VerifyFrame, VerifyResponse } from '../../../shared/api/verify.js';
import { type EmbeddingModel, labelDistanceEmbedding } from '../../../shared/embedding/matcher.js';
import { refuseOtherDescriptorModel } from '../../../shared/embedding/model-check.js';
import type { GrayImage, Rect, RgbImage } from '../../../shared/image/types.js';
import type { LbphModel } from '../../../shared/lbph/lbph.js';
import { boundsFor, type Cohort, withCorrectionFaces } from '../../../shared/recognition/cohort.js';
import { type DecisionRule, scoreOf, verifyLimit } from '../../../shared/recognition/decision.js';
import {
  EMPTY_FACE_NEGATIVES,
  embeddingFeatureDistance,
  type FaceNegatives,
  nearestNegative,
} from '../../../shared/recognition/corrections.js';
import { trained } from '../../../shared/recognition/model-files.js';
import { combineFrames, decideVerify, labelIdOf } from '../../../shared/recognition/verify.js';
import type { FaceModels, Recognition, Trained } from '../../../shared/recognition/pipeline.js';
import { assembleModels, type TrainingSample } from '../../../shared/recognition/training.js';
import { ApiError } from '../../http/errors.js';
import type { DecodedImage, ImageDecoder } from '../../imaging/decode.js';
import type { Logger } from '../../logger.js';
import { cropVersion, featureWork, type FeatureVersions, type ImageFeatures, imageHash } from '../../storage/feature-store.js';
import type { ImageRef, ImageStore } from '../../storage/image-store.js';
import { type ModelStore, type SourceId, YamlSuperseded } from '../../storage/model-store.js';
import { type HeldLock, LockBusyError } from '../../storage/file-lock.js';
import { EMPTY_SNAPSHOT, type LbphSource, makeSnapshot, type TrainedFiles, type TrainedSnapshot } from '../../storage/trained-files.js';
import type { RemoteEngine } from '../remote/remote-engine.js';
import type { EmbeddingAvailability } from './embedding-node.js';
import type { EmbeddingPool } from './embedding-protocol.js';
import type { FrameVerification, VisionPool } from './vision-protocol.js';

export type { EmbeddingPool } from './embedding-protocol.js';

/** A verification's verdict, with every frame's (the route keeps `frames` or `face` as the request asked). */
export type Verification = Omit<VerifyResponse, 'face' | 'frames'> & { frames: VerifyFrame[] };

/**
 * Each frame decided (exactly one face, then its distance against the rule), and the burst's verdict: no model
 * and a label the model does not know come first, since no frame could change them.
 */
function verdictOf(
  frames: readonly FrameVerification[],
  rule: DecisionRule,
  base: Pick<VerifyResponse, 'label' | 'recognition_model' | 'detection_method'>,
  bound?: number,
): Verification {
  // The claimed person's own limits (#34): stricter for one whose photos sit near many strangers' faces.
  const threshold = verifyLimit(rule, bound);
  const judged = frames.map((f): VerifyFrame => {
    const face = f.boxes.length === 1 ? { x: f.boxes[0].x, y: f.boxes[0].y, w: f.boxes[0].width, h: f.boxes[0].height } : undefined;
    const common = { faces: f.boxes.length, ...(face ? { face } : {}) };
    const none = { match: false, distance: null, confidence: 0, ...common };
    if (f.boxes.length === 0) return { ...none, reason: 'no_face' };
    if (f.boxes.length > 1) return { ...none, reason: 'several_faces' };
    if (!f.trained) return { ...none, reason: 'not_trained' };
    if (!f.enrolled || f.distance === null) return { ...none, reason: 'not_enrolled' };
    const decided = decideVerify(f.distance, { min: rule.min, verifyMax: threshold }, f.correction);
    const distance = Number.isFinite(f.distance) ? f.distance : null;
    return { ...decided, distance, confidence: scoreOf(f.distance, rule), ...common };
  });
  const overall = frames.some((f) => !f.trained)
    ? { match: false, reason: 'not_trained' as const, distance: null, confidence: 0 }
    : frames.some((f) => !f.enrolled)
      ? { match: false, reason: 'not_enrolled' as const, distance: null, confidence: 0 }
      : combineFrames(judged);
  return { ...base, ...overall, threshold, frames: judged };
}

export interface FaceServiceOptions {
  /** Haar cascade + LBPH workers. */
  pool: VisionPool;
  /** The embedding recognizer's worker; null when it is switched off. */
  embedding: EmbeddingPool | null;
  images: ImageStore;
  models: ModelStore;
  remote: RemoteEngine;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts). */
  decoder: ImageDecoder;
  /** The decision rule each recognizer answers with now (calibrated defaults, settings, the site's saved thresholds). */
  rules: { ruleFor(recognizer: RecognitionModel): DecisionRule };
  /**
   * The embedding recognizer's background cohort (shared/recognition/cohort.ts) for the per-person verification
   * limit; absent or null: every person is held to the rule's strict side (decision.ts verifyLimit).
   */
  cohort?: Cohort | null;
  detectionMethod: DetectionMethod;
  recognitionModel: RecognitionModel;
  log: Logger;
  /**
   * What the training features kept per image (the image store's FeatureStore) are made with now
   * (feature-store.ts featureVersionsOf); a part made with another version is recomputed.
   */
  featureVersions?: FeatureVersions;
}

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

/** The descriptors a recognition computed, one per answer face in order (null: the nets could not describe it). */
export interface RecognitionDescriptors {
  /** The descriptor model the embedding worker computed them with (DescriptorModelId). */
  model: string;
  descriptors: (Float32Array | null)[];
}

/** Moves the pixel buffer to the worker instead of copying it (only buffers this process allocated whole). */
function transferable(gray: GrayImage): ArrayBuffer[] {
  return gray.data.byteOffset === 0 && gray.data.byteLength === gray.data.buffer.byteLength ? [gray.data.buffer as ArrayBuffer] : [];
}

/** `lbphSource`: the model training.yml holds, in memory (what the kiosk's compact segments are made from). */
function snapshotOf(
  files: TrainedFiles,
  lbph: Trained<unknown> | null,
  embedding: Trained<unknown> | null,
  lbphSource: LbphSource | null,
  written?: Promise<unknown>,
): TrainedSnapshot {
  const labels = [...(lbph?.names.values() ?? []), ...(embedding?.names.values() ?? [])];
  return makeSnapshot(files, labels, [lbph?.trainedAt, embedding?.trainedAt], lbphSource, written);
}

/** Saved models as loaded, with what their snapshot is made of. */
interface LoadedModels {
  lbph: Trained<LbphModel> | null;
  embedding: Trained<EmbeddingModel> | null;
  snapshot: TrainedSnapshot;
  files: TrainedFiles;
  lbphSource: LbphSource | null;
  /** training.lbph's identity when training.yml is still to be written from it (a crash came first). */
  yamlDue: SourceId | null;
}

export class FaceService {
  /** The models every worker holds (each worker's copy carries the names, so its answers are already named). */
  private installed: FaceModels = { lbph: null, embedding: null };
  private embeddingStatus: EmbeddingAvailability = { available: false, reason: 'still loading', loadMs: 0 };
  private training: ({ processed: number; total: number } & FeatureCounts) | null = null;
  private lastTraining: TrainResponse | undefined;
  private lastTrainingError: TrainStatusResponse['last_error'];
  private snapshot: TrainedSnapshot = EMPTY_SNAPSHOT;
  /** The model files' stat signature the installed models were read from (ModelStore.filesSignature). */
  private signature = '';
  /** Counts installs, so a reload that loaded before a training installed does not go back to older models. */
  private generation = 0;
  private watcher: NodeJS.Timeout | null = null;
  /** The training.yml write in progress (off the training's path), to give up when a newer model is published. */
  private yamlWrite: { cancel(): void } | null = null;
  private readonly publishListeners = new Set<(snapshot: TrainedSnapshot) => void>();
  detectionMethod: DetectionMethod;
  recognitionModel: RecognitionModel;

  constructor(private readonly opts: FaceServiceOptions) {
    this.detectionMethod = opts.detectionMethod;
    this.recognitionModel = opts.recognitionModel;
  }

  /**
   * Waits for the workers' recognizers to load, then loads the saved models, if any, into every worker. A broken
   * model file is logged and ignored (the next training replaces it), not fatal.
   */
  async init(): Promise<void> {
    if (this.opts.embedding) {
      const status = await this.opts.embedding.run('status', undefined);
      const { cohortFaces, cohortProblem, ...availability } = status;
      this.embeddingStatus = availability;
      // Without its cohort the embedding recognizer holds everyone to the sure bound (stricter): say why.
      if (availability.available && cohortProblem)
        this.opts.log.warn(`embedding recognizer: no background cohort, so every person is held to the sure limit (${cohortProblem})`);
      else if (availability.available) this.opts.log.info(`embedding recognizer: background cohort of ${cohortFaces ?? 0} faces`);
    } else {
      this.embeddingStatus = { available: false, reason: 'switched off (EMBEDDING_ENABLED=false)', loadMs: 0 };
    }
    if (this.embeddingStatus.available) {
      this.opts.log.info(`embedding recognizer loaded in ${Math.round(this.embeddingStatus.loadMs)} ms (${this.embeddingStatus.backend})`);
    } else {
      this.opts.log.warn(`embedding recognizer unavailable: ${this.embeddingStatus.reason}`);
    }
    if (this.recognitionModel === 'embedding' && !this.embeddingStatus.available) {
      this.opts.log.warn('RECOGNITION_MODEL=embedding but the embedding recognizer is unavailable; starting with lbph');
      this.recognitionModel = 'lbph';
    }

    const signature = await this.opts.models.filesSignature();
    const loaded = await this.loadSaved();
    const { lbph, embedding } = loaded;
    // Only files that loaded are offered for download: a browser gets what this server itself runs.
    this.publishLoaded(loaded);
    this.signature = signature;
    if (lbph || embedding) {
      await this.install(lbph, embedding);
      this.opts.log.info(
        `loaded models: lbph ${lbph ? `${lbph.names.size} labels` : 'none'}, embedding ${embedding ? `${embedding.names.size} labels` : 'none'}`,
      );
    }
  }

  /** The saved models and the snapshot of the files that loaded; a broken file is logged and left out. */
  private async loadSaved(): Promise<LoadedModels> {
    let lbph: Trained<LbphModel> | null = null;
    let embedding: Trained<EmbeddingModel> | null = null;
    const files: TrainedFiles = { lbph: null, labelMap: null, embedding: null };
    let lbphSource: LbphSource | null = null;
    let yamlDue: SourceId | null = null;
    try {
      const stored = await this.opts.models.loadLbph();
      if (stored) {
        lbph = trained(stored, stored.trainedAt);
        lbphSource = { model: stored.model, labelIds: stored.labelIds };
        files.lbph = stored.files.lbph;
        files.lbphSource = stored.source;
        files.labelMap = stored.files.labelMap;
        if (stored.source && !stored.files.lbph) yamlDue = stored.source;
      }
    } catch (err) {
      this.opts.log.error(`the saved LBPH model could not be loaded and is ignored until the next training: ${String(err)}`);
    }
    try {
      const stored = await this.opts.models.loadEmbedding();
      if (stored) {
        embedding = trained(stored, stored.trainedAt);
        files.embedding = stored.bytes;
      }
    } catch (err) {
      this.opts.log.error(`the saved embedding model could not be loaded and is ignored until the next training: ${String(err)}`);
    }
    return { lbph, embedding, snapshot: snapshotOf(files, lbph, embedding, lbphSource), files, lbphSource, yamlDue };
  }

  private publishLoaded(loaded: LoadedModels): void {
    // Expected after a person's deletion (training.yml goes at once, written again from the new model), and after a
    // stop before a training's training.yml was written: neither is a fault.
    if (loaded.yamlDue)
      this.opts.log.info('training.yml is behind the saved model (a person deleted, or a stop before it was written); writing it now');
    this.publish(loaded.files, loaded.lbph, loaded.embedding, loaded.lbphSource, loaded.yamlDue);
  }

  /**
   * Makes `files` the snapshot devices download. When training.yml is still to be written from training.lbph
   * (`yamlDue`), it is written now in the background and the snapshot says so (`written`: downloads of this
   * version wait for it), then published again with it; a later publish gives that write up.
   */
  private publish(
    files: TrainedFiles,
    lbph: Trained<unknown> | null,
    embedding: Trained<unknown> | null,
    lbphSource: LbphSource | null,
    yamlDue: SourceId | null,
  ): void {
    this.yamlWrite?.cancel();
    this.yamlWrite = null;
    if (!yamlDue || !lbphSource) {
      this.setSnapshot(snapshotOf(files, lbph, embedding, lbphSource));
      return;
    }
    let cancelled = false;
    const handle = {
      cancel() {
        cancelled = true;
      },
    };
    const started = Date.now();
    const write = this.opts.models.writeYaml(lbphSource.model, lbphSource.labelIds, yamlDue, { cancelled: () => cancelled });
    const pending = snapshotOf(files, lbph, embedding, lbphSource, write);
    this.yamlWrite = handle;
    this.setSnapshot(pending);
    write
      .then(
        (file) => {
          if (this.snapshot === pending) this.setSnapshot(snapshotOf({ ...files, lbph: file }, lbph, embedding, lbphSource));
          this.opts.log.info(`training.yml written in ${Date.now() - started} ms, after the training answered`);
        },
        (err) => {
          if (err instanceof YamlSuperseded) return;
          // The model stays in use (training.lbph has it); only the YAML download is missing until a restart writes it.
          this.opts.log.error(`writing training.yml failed; it is written again at the next start or training: ${String(err)}`);
          if (this.snapshot === pending) this.setSnapshot(snapshotOf(files, lbph, embedding, lbphSource));
        },
      )
      .finally(() => {
        if (this.yamlWrite === handle) this.yamlWrite = null;
      });
  }

  private setSnapshot(snapshot: TrainedSnapshot): void {
    this.snapshot = snapshot;
    for (const listener of this.publishListeners) {
      try {
        listener(snapshot);
      } catch (err) {
        this.opts.log.warn(`a listener of the published models failed: ${String(err)}`);
      }
    }
  }

  /**
   * Calls `listener` with every snapshot published from now on (a training, a deletion's rewrite, another replica's
   * models, and again once a version's training.yml is written): what devices get made from the models can be
   * prepared then, in the background, rather than at the first request. Returns the unsubscribe.
   */
  onPublish(listener: (snapshot: TrainedSnapshot) => void): () => void {
    this.publishListeners.add(listener);
    return () => this.publishListeners.delete(listener);
  }

  /**
   * The snapshot with its training.yml: the current one, once a training.yml write in progress for it is done
   * (a download of training.yml, or of anything versioned with it, waits for the write rather than miss it).
   */
  async writtenFiles(): Promise<TrainedSnapshot> {
    for (;;) {
      const snapshot = this.snapshot;
      if (!snapshot.written) return snapshot;
      await snapshot.written.catch(() => undefined);
      // Settled: published again with the file (or a newer training published meanwhile).
      if (this.snapshot === snapshot) return snapshot;
    }
  }

  /**
   * Follows trainings made by other API replicas on the same DATA_DIR: every `intervalMs`, a stat of the model
   * files; when they changed (and no training runs here), they are loaded with the start-up path and, when their
   * content version differs from the one in use, installed in every worker.
   */
  watchModels(intervalMs: number): void {
    this.stopWatching();
    let busy = false;
    this.watcher = setInterval(() => {
      if (busy || this.training) return;
      busy = true;
      void this.reloadIfChanged()
        .catch((err) => this.opts.log.warn(`checking the saved models for changes failed: ${String(err)}`))
        .finally(() => {
          busy = false;
        });
    }, intervalMs);
    this.watcher.unref();
  }

  stopWatching(): void {
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = null;
  }

  /** Loads and installs the saved models when the files changed on disk; true when a new version was installed. */
  async reloadIfChanged(): Promise<boolean> {
    const signature = await this.opts.models.filesSignature();
    if (signature === this.signature) return false;
    const generation = this.generation;
    const loaded = await this.loadSaved();
    const { lbph, embedding, snapshot } = loaded;
    // A training here (or another reload) got in first: its models are at least as new; look again next tick.
    if (this.training || generation !== this.generation) return false;
    this.signature = signature;
    if (snapshot.version === this.snapshot.version) return false;
    this.publishLoaded(loaded);
    await this.install(lbph, embedding);
    this.opts.log.info(
      `loaded models saved by another replica (version ${snapshot.version ?? 'none'}): lbph ${lbph ? `${lbph.names.size} labels` : 'none'}, embedding ${embedding ? `${embedding.names.size} labels` : 'none'}`,
    );
    return true;
  }

  get trained(): boolean {
    return this.installed[this.recognitionModel] !== null;
  }

  /** Labels the active recognizer knows. */
  get trainedLabels(): Set<string> {
    return new Set(this.installed[this.recognitionModel]?.names.values() ?? []);
  }

  /**
   * The trained model files for download, with their content version. Replaced as a whole when a training
   * saved new files, so one read of this property never mixes two trainings.
   */
  get trainedFiles(): TrainedSnapshot {
    return this.snapshot;
  }

  get embeddingAvailability(): EmbeddingAvailability {
    return this.embeddingStatus;
  }

  recognizerStatus(): RecognizerStatus {
    const of = (t: Trained<unknown> | null) => ({ trained: t !== null, trained_at: t?.trainedAt ?? null, labels: t?.names.size ?? 0 });
    return { lbph: of(this.installed.lbph), embedding: of(this.installed.embedding) };
  }

  /** Why a detection method cannot be selected now, or null when it can. */
  detectionUnavailable(method: DetectionMethod): string | null {
    return method === 'remote' ? this.opts.remote.unavailableReason : null;
  }

  /** Why a recognition model cannot be selected now, or null when it can. */
  recognitionUnavailable(model: RecognitionModel): string | null {
    if (model === 'embedding' && !this.embeddingStatus.available) {
      return `the embedding recognizer could not be loaded: ${this.embeddingStatus.reason ?? 'unknown reason'}`;
    }
    return null;
  }

  /** Selects the detection engine for every later recognize and train; 409 when it is not available. */
  setDetectionMethod(method: DetectionMethod): void {
    const reason = this.detectionUnavailable(method);
    if (reason) throw new ApiError('model_unavailable', `detection method "${method}" is not available: ${reason}`);
    if (method !== this.detectionMethod) this.opts.log.info(`detection method: ${this.detectionMethod} -> ${method}`);
    this.detectionMethod = method;
  }

  /** Selects the recognizer for every later recognize; 409 when it is not available. */
  setRecognitionModel(model: RecognitionModel): void {
    const reason = this.recognitionUnavailable(model);
    if (reason) throw new ApiError('model_unavailable', `recognition model "${model}" is not available: ${reason}`);
    if (model !== this.recognitionModel) this.opts.log.info(`recognition model: ${this.recognitionModel} -> ${model}`);
    this.recognitionModel = model;
  }

  /** Boxes from the remote engine, or undefined to let the worker run the local cascade. */
  private async remoteBoxes(method: DetectionMethod, rgb: RgbImage): Promise<Rect[] | undefined> {
    return method === 'remote' ? this.opts.remote.detect(rgb) : undefined;
  }

  /** Faces the embedding worker has described since it started (null when it is off): what tests and measurements count. */
  async embeddingDescribed(): Promise<number | null> {
    return this.opts.embedding ? this.opts.embedding.run('described', undefined) : null;
  }

  /** The decision rule a recognizer answers with now. */
  ruleFor(recognizer: RecognitionModel): DecisionRule {
    return this.opts.rules.ruleFor(recognizer);
  }

  /**
   * `recognizer`: this request's own choice (409 when it cannot run here); default the active one. `withPixels` is
   * given the decoded image and the answer while the image is still held (the sightings copy their crops from it),
   * and the faces' descriptors when the embedding recognizer computed them (the sightings' own, not computed twice):
   * it must be synchronous and keep no reference to the image.
   */
  async recognize(
    bytes: Uint8Array,
    recognizer?: RecognitionModel,
    withPixels?: (rgb: RgbImage, answer: RecognizeResponse, described?: RecognitionDescriptors) => void,
  ): Promise<RecognizeResponse> {
    if (recognizer) {
      const reason = this.recognitionUnavailable(recognizer);
      if (reason) throw new ApiError('model_unavailable', `recognition model "${recognizer}" is not available: ${reason}`);
    }
    return this.opts.decoder.use(bytes, async (image) => {
      const { answer, described } = await this.recognizeDescribed(image, recognizer);
      withPixels?.(image.rgb, answer, described);
      return answer;
    });
  }

  /** Recognition on an image already decoded (the chat analysis decodes once for faces and objects). */
  async recognizeDecoded(image: Pick<DecodedImage, 'gray' | 'rgb'>, requested?: RecognitionModel): Promise<RecognizeResponse> {
    return (await this.recognizeDescribed(image, requested)).answer;
  }

  /** The answer, and the descriptors the embedding worker computed on the way (never part of the answer). */
  private async recognizeDescribed(
    { gray, rgb }: Pick<DecodedImage, 'gray' | 'rgb'>,
    requested?: RecognitionModel,
  ): Promise<{ answer: RecognizeResponse; described?: RecognitionDescriptors }> {
    // Read once: a switch while this request runs applies from the next request on.
    const method = this.detectionMethod;
    const recognizer = requested ?? this.recognitionModel;
    const boxes = await this.remoteBoxes(method, rgb);
    const embedding = recognizer === 'embedding' ? this.opts.embedding : null;
    let result: Recognition;
    let described: RecognitionDescriptors | undefined;
    if (embedding) {
      const found = boxes ?? (await this.opts.pool.run('detect', { gray }, transferable(gray)));
      const { descriptorModel, descriptors, ...named } = await embedding.run('recognize', {
        rgb,
        boxes: found,
        rule: this.opts.rules.ruleFor('embedding'),
      });
      result = named;
      // One per face, in the answer's order; the worker says which descriptor model made them.
      if (descriptors && descriptors.length === named.faces.length) described = { model: descriptorModel, descriptors };
    } else {
      result = await this.opts.pool.run('recognize', { gray, boxes, rule: this.opts.rules.ruleFor('lbph') }, transferable(gray));
    }
    const { faces } = result;
    const answer: RecognizeResponse = {
      faces,
      count: faces.length,
      detection_method: method,
      recognition_model: recognizer,
      trained: result.trained,
    };
    return described ? { answer, described } : { answer };
  }

  /**
   * Verification 1:1 (POST /api/verify): each image's one face against `label`'s own samples only, a match iff
   * within the recognizer's `verifyMax`. `recognizer`: this request's own choice (409 when it cannot run here).
   * `withPixels` is given each frame's decoded image and the face boxes found in it while the image is still held
   * (the sightings copy their crops from it): it must be synchronous and keep no reference to the image.
   */
  async verify(
    label: string,
    images: Uint8Array[],
    requested?: RecognitionModel,
    withPixels?: (index: number, rgb: RgbImage, boxes: Rect[]) => void,
  ): Promise<Verification> {
    if (requested) {
      const reason = this.recognitionUnavailable(requested);
      if (reason) throw new ApiError('model_unavailable', `recognition model "${requested}" is not available: ${reason}`);
    }
    // Read once: a switch while this request runs applies from the next request on.
    const method = this.detectionMethod;
    const recognizer = requested ?? this.recognitionModel;
    const rule = this.opts.rules.ruleFor(recognizer);
    // The embedding model as installed now: its names and samples together (LBPH's are read in the worker).
    const embedding = recognizer === 'embedding' ? this.installed.embedding : null;
    const embeddingId = embedding ? labelIdOf(embedding.names, label) : null;
    const frames = await Promise.all(
      images.map((bytes, index) =>
        this.opts.decoder.use(bytes, async ({ gray, rgb }): Promise<FrameVerification> => {
          const boxes = await this.remoteBoxes(method, rgb);
          if (recognizer === 'lbph') {
            const frame = await this.opts.pool.run('verify', { gray, boxes, label }, transferable(gray));
            withPixels?.(index, rgb, frame.boxes);
            return frame;
          }
          const found = boxes ?? (await this.opts.pool.run('detect', { gray }, transferable(gray)));
          let distance: number | null = null;
          let correction: number | null = null;
          if (embedding && embeddingId !== null && found.length === 1 && this.opts.embedding) {
            const [descriptor] = await this.opts.embedding.run('describe', { rgb, boxes: found });
            // No descriptor for the box (the nets found no landmarks): nothing near, never a match.
            distance = descriptor ? labelDistanceEmbedding(embedding.model, descriptor, embeddingId) : Number.POSITIVE_INFINITY;
            // #26 corrections: a face as near to one of this person's corrections never verifies as them.
            const nearest = descriptor
              ? nearestNegative(descriptor, this.negatives.embedding.get(label), embeddingFeatureDistance)
              : Number.POSITIVE_INFINITY;
            correction = Number.isFinite(nearest) ? nearest : null;
          }
          withPixels?.(index, rgb, found);
          return { boxes: found, trained: embedding !== null, enrolled: embeddingId !== null, distance, correction };
        }),
      ),
    );
    const bound = embedding && embeddingId !== null && rule.cohortRatio != null ? this.boundIn(embedding.model, embeddingId) : undefined;
    return verdictOf(frames, rule, { label, recognition_model: recognizer, detection_method: method }, bound);
  }

  /**
   * The embedding recognizer's background cohort (shared/recognition/cohort.ts) with the site's corrections, as the
   * workers' recognitions use it; null without the shipped cohort.
   */
  get cohort(): Cohort | null {
    const shipped = this.opts.cohort ?? null;
    return shipped ? withCorrectionFaces(shipped, this.negatives.embedding) : null;
  }

  /** A person's cohort bound under the installed embedding model; undefined without the model, the person or a cohort. */
  cohortBoundOf(label: string): number | undefined {
    const embedding = this.installed.embedding;
    const id = embedding ? labelIdOf(embedding.names, label) : null;
    return embedding && id !== null ? this.boundIn(embedding.model, id) : undefined;
  }

  /** A label id's cohort bound in a model (with the site's corrections); undefined without a cohort or a bound. */
  private boundIn(model: EmbeddingModel, labelId: number): number | undefined {
    const cohort = this.cohort;
    const bound = cohort ? boundsFor(model, cohort).of(labelId) : Infinity;
    return Number.isFinite(bound) ? bound : undefined;
  }

  // #26 corrections ("not this person", server/review/corrections.ts): kept by label name in every worker.
  private negatives: FaceNegatives = EMPTY_FACE_NEGATIVES;

  /** Installs the corrections every recognition and verification applies (replayed to a worker that restarts). */
  async setNegatives(negatives: FaceNegatives): Promise<void> {
    await Promise.all([
      this.opts.pool.broadcast('setNegatives', negatives.lbph),
      this.opts.embedding?.broadcast('setNegatives', negatives.embedding),
    ]);
    this.negatives = negatives;
  }

  /**
   * What a correction keeps of a face crop: the LBPH histogram of its face (the local cascade's largest face, else
   * `fallback`, the box the crop was cut around) and, when the embedding recognizer runs, its descriptor.
   */
  async correctionSample(
    bytes: Uint8Array,
    fallback: (width: number, height: number) => Rect,
  ): Promise<{ face: Rect; histogram: Float32Array; descriptor: Float32Array | null; descriptorModel: string | null }> {
    return this.opts.decoder.use(bytes, async ({ gray, rgb }) => {
      // Copied, not transferred: the same pixels may be needed again for the fallback box.
      let sample = await this.opts.pool.run('trainSample', { gray });
      if (!sample.face || !sample.histogram)
        sample = await this.opts.pool.run('trainSample', { gray, boxes: [fallback(gray.width, gray.height)] });
      if (!sample.face || !sample.histogram) throw new ApiError('invalid_image', "no face could be taken from the sighting's crop");
      const withEmbedding = this.embeddingStatus.available && this.opts.embedding;
      const descriptor = withEmbedding ? ((await this.opts.embedding!.run('describe', { rgb, boxes: [sample.face] }))[0] ?? null) : null;
      return { face: sample.face, histogram: sample.histogram, descriptor, descriptorModel: this.embeddingStatus.descriptorModel ?? null };
    });
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
      this.signature = await this.opts.models.filesSignature().catch(() => '');
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
    const method = this.detectionMethod;
    const withEmbedding = this.embeddingStatus.available;
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
      embedding: this.snapshot.files.embedding,
    };

    let embedding = this.installed.embedding;
    if (withEmbedding && assembled.embedding) {
      const { model, labelIds: usedIds } = assembled.embedding;
      files.embedding = await this.opts.models.saveEmbedding(model, usedIds, trainedAt);
      embedding = trained({ model, labelIds: usedIds }, trainedAt);
    }
    // Published once every file of this training is on disk: downloads switch from the old set to the new whole.
    this.publish(files, lbph, embedding, { model: lbphModel, labelIds }, saved.source);
    const savedAt = Date.now();
    await this.install(lbph, embedding);
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
      recognition_model: this.recognitionModel,
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
    const { descriptorModel, versions } = this.embeddingStatus;
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
          const boxes = await this.remoteBoxes(run.method, rgb);
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

  private async install(lbph: Trained<LbphModel> | null, embedding: Trained<EmbeddingModel> | null): Promise<void> {
    this.generation++;
    // A model made with another descriptor model (EMBEDDING_DESCRIPTOR changed since its training) is never mixed
    // with this one's descriptors: the embedding recognizer answers as untrained, and the training status says why.
    const running = this.embeddingStatus.descriptorModel;
    const refusal = embedding && running ? refuseOtherDescriptorModel(embedding.model, running) : null;
    if (refusal) {
      this.opts.log.warn(`embedding model not used: ${refusal}`);
      this.lastTrainingError = {
        code: 'descriptor_model_changed',
        message: `The embedding recognizer needs training: ${refusal}.`,
        at: new Date().toISOString(),
      };
      embedding = null;
    }
    await Promise.all([this.opts.pool.broadcast('setModel', lbph), this.opts.embedding?.broadcast('setModel', embedding)]);
    this.installed = { lbph, embedding };
  }
}
