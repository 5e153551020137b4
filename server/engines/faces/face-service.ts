/**
 * Face detection, recognition and training, as the spec's flows describe them: the active detection engine
 * finds faces, the active recognizer names them, training runs the detector over every stored image and
 * trains every available recognizer (LBPH always, the embedding recognizer when its model loaded), so a
 * switch of recognizer needs no retraining. The heavy work runs in the vision worker pool; this facade and the
 * three modules behind it own the state (active engines, trained models) and the rules (one training at a time,
 * the previous models stay until new ones are saved): which models are current (face-model-state.ts), training
 * (face-trainer.ts), and recognition and verification (face-recognizer.ts).
 */
import type {
  DetectionMethod,
  RecognitionModel,
  RecognizeResponse,
  RecognizerStatus,
  TrainResponse,
  TrainStatusResponse,
} from '../../../shared/api/index.js';
import { DEFAULT_DESCRIPTOR_MODEL, GROUPING_DESCRIPTOR_MODEL } from '../../../shared/embedding/descriptor-models.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import type { Cohort } from '../../../shared/recognition/cohort.js';
import type { FaceNegatives } from '../../../shared/recognition/corrections.js';
import type { DecisionRule } from '../../../shared/recognition/decision.js';
import { defaultRule } from '../../../shared/recognition/rules.js';
import type { DecodedImage, ImageDecoder } from '../../imaging/decode.js';
import type { Logger } from '../../logger.js';
import type { FeatureVersions } from '../../storage/feature-store.js';
import type { ImageStore } from '../../storage/image-store.js';
import type { ModelStore } from '../../storage/model-store.js';
import type { TrainedSnapshot } from '../../storage/trained-files.js';
import type { RemoteEngine } from '../remote/remote-engine.js';
import type { EmbeddingAvailability } from './embedding-node.js';
import type { EmbeddingPool } from './embedding-protocol.js';
import { FaceModelState } from './face-model-state.js';
import { FaceRecognizer, type RecognitionDescriptors, type Verification } from './face-recognizer.js';
import { FaceTrainer } from './face-trainer.js';
import type { VisionPool } from './vision-protocol.js';

export type { EmbeddingPool } from './embedding-protocol.js';
export type { RecognitionDescriptors, Verification } from './face-recognizer.js';

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

export class FaceService {
  private readonly state: FaceModelState;
  private readonly trainer: FaceTrainer;
  private readonly recognizer: FaceRecognizer;

  constructor(opts: FaceServiceOptions) {
    this.state = new FaceModelState(opts, {
      running: () => this.trainer.running,
      failed: (error) => this.trainer.failed(error),
    });
    this.trainer = new FaceTrainer(opts, this.state);
    this.recognizer = new FaceRecognizer(opts, this.state);
  }

  // Which models are current (face-model-state.ts).

  /** The detection engine every later recognize and train uses. */
  get detectionMethod(): DetectionMethod {
    return this.state.detectionMethod;
  }

  set detectionMethod(method: DetectionMethod) {
    this.state.detectionMethod = method;
  }

  /** The recognizer every later recognize uses. */
  get recognitionModel(): RecognitionModel {
    return this.state.recognitionModel;
  }

  set recognitionModel(model: RecognitionModel) {
    this.state.recognitionModel = model;
  }

  /** Waits for the workers' recognizers to load, then loads the saved models into every worker (FaceModelState.init). */
  init(): Promise<void> {
    return this.state.init();
  }

  /** Calls `listener` with every snapshot published from now on; returns the unsubscribe (FaceModelState.onPublish). */
  onPublish(listener: (snapshot: TrainedSnapshot) => void): () => void {
    return this.state.onPublish(listener);
  }

  /** The snapshot with its training.yml, once a write in progress for it is done (FaceModelState.writtenFiles). */
  writtenFiles(): Promise<TrainedSnapshot> {
    return this.state.writtenFiles();
  }

  /** Follows trainings made by other API replicas (FaceModelState.watchModels). */
  watchModels(intervalMs: number): void {
    this.state.watchModels(intervalMs);
  }

  stopWatching(): void {
    this.state.stopWatching();
  }

  /** Loads and installs the saved models when the files changed on disk; true when a new version was installed. */
  reloadIfChanged(): Promise<boolean> {
    return this.state.reloadIfChanged();
  }

  /**
   * After this server rewrote the saved models (a deletion, a merge and its undo): loads them now rather than at the
   * model watch's next tick, waiting while the watch itself is loading them, until the models know `label` or not
   * (`known`), for at most 10 s. False when they still do not: the watch loads them later.
   */
  async reloadUntil(label: string, known: boolean): Promise<boolean> {
    const knows = () => this.trainedFiles.labels.includes(label) || this.trainedLabels.has(label);
    const until = Date.now() + 10_000;
    for (;;) {
      await this.reloadIfChanged();
      if (knows() === known) return true;
      if (Date.now() > until) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  get trained(): boolean {
    return this.state.trained;
  }

  /** Labels the active recognizer knows. */
  get trainedLabels(): Set<string> {
    return this.state.trainedLabels;
  }

  /** The trained model files for download, with their content version (replaced as a whole by a training). */
  get trainedFiles(): TrainedSnapshot {
    return this.state.trainedFiles;
  }

  get embeddingAvailability(): EmbeddingAvailability {
    return this.state.embeddingAvailability;
  }

  recognizerStatus(): RecognizerStatus {
    return this.state.recognizerStatus();
  }

  /** Why a detection method cannot be selected now, or null when it can. */
  detectionUnavailable(method: DetectionMethod): string | null {
    return this.state.detectionUnavailable(method);
  }

  /** Why a recognition model cannot be selected now, or null when it can. */
  recognitionUnavailable(model: RecognitionModel): string | null {
    return this.state.recognitionUnavailable(model);
  }

  /** Selects the detection engine for every later recognize and train; 409 when it is not available. */
  setDetectionMethod(method: DetectionMethod): void {
    this.state.setDetectionMethod(method);
  }

  /** Selects the recognizer for every later recognize; 409 when it is not available. */
  setRecognitionModel(model: RecognitionModel): void {
    this.state.setRecognitionModel(model);
  }

  // Recognition and verification (face-recognizer.ts).

  /** Faces the embedding worker has described since it started (null when it is off). */
  embeddingDescribed(): Promise<number | null> {
    return this.recognizer.embeddingDescribed();
  }

  /** The decision rule a recognizer answers with now. */
  ruleFor(recognizer: RecognitionModel): DecisionRule {
    return this.recognizer.ruleFor(recognizer);
  }

  /**
   * #36 1: how alike two unknown faces must be to be grouped, in GROUPING_DESCRIPTOR_MODEL's distances (what
   * grouping compares): the embedding rule's limit when that model recognises, else its calibrated default limit
   * (a faceres-1024 site's limits are in other units).
   */
  groupingMax(): number {
    const running = this.embeddingAvailability.descriptorModel ?? DEFAULT_DESCRIPTOR_MODEL;
    return running === GROUPING_DESCRIPTOR_MODEL ? this.ruleFor('embedding').max : defaultRule('embedding', GROUPING_DESCRIPTOR_MODEL).max;
  }

  /** Detects and names the faces of an image (FaceRecognizer.recognize: `recognizer`, `withPixels`). */
  recognize(
    bytes: Uint8Array,
    recognizer?: RecognitionModel,
    withPixels?: (rgb: RgbImage, answer: RecognizeResponse, described?: RecognitionDescriptors) => void,
  ): Promise<RecognizeResponse> {
    return this.recognizer.recognize(bytes, recognizer, withPixels);
  }

  /** Recognition on an image already decoded (the chat analysis decodes once for faces and objects). */
  recognizeDecoded(image: Pick<DecodedImage, 'gray' | 'rgb'>, requested?: RecognitionModel): Promise<RecognizeResponse> {
    return this.recognizer.recognizeDecoded(image, requested);
  }

  /** Verification 1:1 (POST /api/verify) of each image's one face against `label` (FaceRecognizer.verify). */
  verify(
    label: string,
    images: Uint8Array[],
    requested?: RecognitionModel,
    withPixels?: (index: number, rgb: RgbImage, boxes: Rect[]) => void,
  ): Promise<Verification> {
    return this.recognizer.verify(label, images, requested, withPixels);
  }

  /** The embedding recognizer's background cohort with the site's corrections; null without the shipped cohort. */
  get cohort(): Cohort | null {
    return this.recognizer.cohort;
  }

  /** A person's cohort bound under the installed embedding model; undefined without the model, the person or a cohort. */
  cohortBoundOf(label: string): number | undefined {
    return this.recognizer.cohortBoundOf(label);
  }

  /** Installs the corrections every recognition and verification applies (replayed to a worker that restarts). */
  setNegatives(negatives: FaceNegatives): Promise<void> {
    return this.recognizer.setNegatives(negatives);
  }

  /** What a correction keeps of a face crop (FaceRecognizer.correctionSample). */
  correctionSample(
    bytes: Uint8Array,
    fallback: (width: number, height: number) => Rect,
  ): Promise<{ face: Rect; histogram: Float32Array; descriptor: Float32Array | null; descriptorModel: string | null }> {
    return this.recognizer.correctionSample(bytes, fallback);
  }

  // Training (face-trainer.ts).

  trainStatus(): TrainStatusResponse {
    return this.trainer.trainStatus();
  }

  /** Trains on every stored image; one run at a time (409 otherwise), the previous models stay until it saves. */
  train(): Promise<TrainResponse> {
    return this.trainer.train();
  }
}
