/**
 * Face recognition and verification (face-service.ts): the active detection engine finds the faces, the active
 * recognizer (or the request's own choice) names them against the installed models, with the site's corrections
 * and the embedding recognizer's background cohort, and verification decides each frame against one person.
 */
import type { RecognitionModel, RecognizeResponse } from '../../../shared/api/index.js';
import type { VerifyFrame, VerifyResponse } from '../../../shared/api/verify.js';
import { type EmbeddingModel, labelDistanceEmbedding } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { boundsFor, type Cohort, withCorrectionFaces } from '../../../shared/recognition/cohort.js';
import { type DecisionRule, scoreOf, verifyLimit } from '../../../shared/recognition/decision.js';
import {
  EMPTY_FACE_NEGATIVES,
  embeddingFeatureDistance,
  type FaceNegatives,
  nearestNegative,
} from '../../../shared/recognition/corrections.js';
import { combineFrames, decideVerify, labelIdOf } from '../../../shared/recognition/verify.js';
import type { Recognition } from '../../../shared/recognition/pipeline.js';
import { ApiError } from '../../http/errors.js';
import type { DecodedImage } from '../../imaging/decode.js';
import type { FaceModelState } from './face-model-state.js';
import type { FaceServiceOptions } from './face-service.js';
import { type FrameVerification, transferable } from './vision-protocol.js';

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

/** The descriptors a recognition computed, one per answer face in order (null: the nets could not describe it). */
export interface RecognitionDescriptors {
  /** The descriptor model the embedding worker computed them with (DescriptorModelId). */
  model: string;
  descriptors: (Float32Array | null)[];
}

export class FaceRecognizer {
  constructor(
    private readonly opts: FaceServiceOptions,
    private readonly state: FaceModelState,
  ) {}

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
      const reason = this.state.recognitionUnavailable(recognizer);
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
    const method = this.state.detectionMethod;
    const recognizer = requested ?? this.state.recognitionModel;
    const boxes = await this.state.remoteBoxes(method, rgb);
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
      const reason = this.state.recognitionUnavailable(requested);
      if (reason) throw new ApiError('model_unavailable', `recognition model "${requested}" is not available: ${reason}`);
    }
    // Read once: a switch while this request runs applies from the next request on.
    const method = this.state.detectionMethod;
    const recognizer = requested ?? this.state.recognitionModel;
    const rule = this.opts.rules.ruleFor(recognizer);
    // The embedding model as installed now: its names and samples together (LBPH's are read in the worker).
    const embedding = recognizer === 'embedding' ? this.state.current.embedding : null;
    const embeddingId = embedding ? labelIdOf(embedding.names, label) : null;
    const frames = await Promise.all(
      images.map((bytes, index) =>
        this.opts.decoder.use(bytes, async ({ gray, rgb }): Promise<FrameVerification> => {
          const boxes = await this.state.remoteBoxes(method, rgb);
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
    const embedding = this.state.current.embedding;
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
      const withEmbedding = this.state.embeddingAvailability.available && this.opts.embedding;
      const descriptor = withEmbedding ? ((await this.opts.embedding!.run('describe', { rgb, boxes: [sample.face] }))[0] ?? null) : null;
      return {
        face: sample.face,
        histogram: sample.histogram,
        descriptor,
        descriptorModel: this.state.embeddingAvailability.descriptorModel ?? null,
      };
    });
  }
}
