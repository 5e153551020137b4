/**
 * The recognition pipeline, one implementation for the server's workers and the browser's engine worker:
 *
 *   detect (Haar cascade, or boxes from elsewhere) -> normalise (crop to 100x100, upright by the eyes for LBPH
 *   models marked aligned: shared/vision/eye-alignment.ts) -> predict (LBPH or
 *   embedding) -> face results (names, known/unknown window, percent score)
 *
 * and the training side (largest face -> histogram [+ descriptor] -> assembleModels). Browser-safe: no Node,
 * no DOM. The hosts only supply how faces are detected (single thread, split across helpers) and how
 * descriptors are computed (tfjs in Node or in a browser worker); pixels arrive already decoded.
 */
import type { FaceResult, RecognitionModel } from '../api/index.js';
import { rankEmbedding, type EmbeddingModel } from '../embedding/matcher.js';
import type { GrayImage, Rect, RgbImage } from '../image/types.js';
import { lbpHistogram, rankLbph, type LbphModel } from '../lbph/lbph.js';
import type { DetectOptions } from '../vision/haar-cascade.js';
import { alignedFace, FACE_ALIGNMENT } from '../vision/eye-alignment.js';
import { largestBox } from '../vision/face-region.js';
import type { HaarCascade } from '../vision/haar-cascade.js';
import {
  type CorrectionContext,
  EMPTY_FACE_NEGATIVES,
  embeddingFeatureDistance,
  type FaceNegatives,
  lbphFeatureDistance,
  withCorrections,
} from './corrections.js';
import type { DecisionRule } from './decision.js';
import { faceResults as decideFaces, type LabelNames, type RecognizedBox } from './face-results.js';
import type { PersonDistance } from './ranking.js';
import { defaultRule } from './rules.js';

export type { RecognizedBox } from './face-results.js';

/** The cascade's parameters as the settings and the engine options give them (minSize: a square side). */
export interface CascadeParams {
  scaleFactor: number;
  minNeighbors: number;
  minSize: number;
}

/** The defaults of the server's CASCADE_* settings and of the browser engine: OpenCV's usual face set-up. */
export const CASCADE_DEFAULTS: Readonly<CascadeParams> = Object.freeze({ scaleFactor: 1.1, minNeighbors: 5, minSize: 30 });

/** The parameters in detectMultiScale's terms. */
export function detectOptionsOf(params: CascadeParams): DetectOptions {
  return {
    scaleFactor: params.scaleFactor,
    minNeighbors: params.minNeighbors,
    minSize: { width: params.minSize, height: params.minSize },
  };
}

/** A trained model with its label names (id -> name); `trainedAt` where the host knows it. */
export interface Trained<M> {
  model: M;
  names: LabelNames;
  trainedAt?: string;
}

export interface FaceModels {
  lbph: Trained<LbphModel> | null;
  embedding: Trained<EmbeddingModel> | null;
}

/** Descriptors of the given faces, in order (the embedding recognizer's nets). */
export type Describe = (rgb: RgbImage, boxes: Rect[]) => Promise<Float32Array[]>;

/** The rule a recognizer decides with: the one given, else its calibrated default (rules.ts). */
export function ruleFor(
  recognizer: RecognitionModel,
  rules: { lbph?: DecisionRule; embedding?: DecisionRule } = {},
  descriptorModel?: string,
): DecisionRule {
  return rules[recognizer] ?? defaultRule(recognizer, descriptorModel);
}

function recognized(box: Rect, ranked: PersonDistance[] | null): RecognizedBox {
  return { box, ranked };
}

/**
 * LBPH on each normalised face; every face unmatched without a model. A face is turned upright by its eyes only
 * for a model whose histograms were made that way (`faceAlignment`): models made by OpenCV, by the original
 * service or before alignment get the plain crop they were trained on.
 */
export function predictLbphFaces(
  gray: GrayImage,
  boxes: readonly Rect[],
  model: LbphModel | null,
  eyeCascade: HaarCascade | null = null,
  corrections: CorrectionContext | null = null,
): RecognizedBox[] {
  if (!model) return boxes.map((box) => recognized(box, null));
  const eyes = model.faceAlignment === FACE_ALIGNMENT ? eyeCascade : null;
  return boxes.map((box) => {
    const histogram = lbpHistogram(alignedFace(gray, box, eyes));
    return recognized(box, withCorrections(rankLbph(model, histogram), histogram, corrections));
  });
}

/** The embedding recognizer on each face. Without a model no descriptor is computed: none would be used. */
export async function predictEmbeddingFaces(
  rgb: RgbImage,
  boxes: readonly Rect[],
  model: EmbeddingModel | null,
  describe: Describe,
  corrections: CorrectionContext | null = null,
): Promise<RecognizedBox[]> {
  const descriptors = model && boxes.length ? await describe(rgb, [...boxes]) : [];
  // A face the nets could not describe is compared with nobody: it stays unknown (no_match).
  return boxes.map((box, i) => {
    if (!model) return recognized(box, null);
    const descriptor = descriptors[i];
    return recognized(box, descriptor ? withCorrections(rankEmbedding(model, descriptor), descriptor, corrections) : []);
  });
}

/** The faces of one picture, named by the model used (null: no model, every face unknown) under `rule`. */
export function faceResults(faces: readonly RecognizedBox[], trained: Trained<unknown> | null, rule: DecisionRule): FaceResult[] {
  return decideFaces(faces, trained?.names ?? null, rule);
}

/** What a recognition gives before the host adds how it detected: the faces and whether a model was used. */
export interface Recognition {
  faces: FaceResult[];
  trained: boolean;
  /** Time to find the boxes (about 0 when they were given), and to name them. */
  detectMs: number;
  recognizeMs: number;
  /**
   * With `RecognizeStep.descriptors`: each face's embedding descriptor, in the order of `faces` (null where the nets
   * could not describe it); absent when none was computed (LBPH, or no embedding model). The server's sightings reuse
   * them instead of describing the same faces again.
   */
  descriptors?: (Float32Array | null)[];
}

export interface RecognizeStep {
  recognizer: RecognitionModel;
  /** The decision rule (decision.ts): limits, margin, certainty. */
  rule: DecisionRule;
  /** Boxes found elsewhere (the remote detector, the server's cascade worker): the cascade is skipped. */
  boxes?: Rect[];
  /** Also give back the descriptors the embedding recognizer computed (Recognition.descriptors). */
  descriptors?: boolean;
}

/** One face of a training image: the largest face (the person nearest the camera) and its LBPH histogram. */
export interface FaceSample {
  boxes: Rect[];
  face: Rect | null;
  histogram: Float32Array | null;
  /** The embedding descriptor of the same face, when asked for and the host can describe. */
  descriptor: Float32Array | null;
  /** FACE_ALIGNMENT when the histogram's face was turned upright by its eyes (the host has the eye cascade). */
  faceAlignment?: string;
}

export interface PipelineHost {
  /** detectMultiScale's boxes, however the host runs it; absent where boxes always come with the job. */
  detect?: (gray: GrayImage) => Rect[] | Promise<Rect[]>;
  /** Absent where the embedding recognizer does not run in this host. */
  describe?: Describe;
  /**
   * OpenCV's eye cascade, to turn tilted faces upright before LBPH (eye-alignment.ts). Absent: faces are cropped
   * plainly, models trained here are not marked aligned, and aligned models are queried with plain crops.
   */
  eyeCascade?: HaarCascade;
}

const now = () => performance.now();

/**
 * The pipeline with the models it recognises with. Each host owns one per worker; a model swap is one
 * assignment, so a recognition sees either the old models or the new ones, never half of each.
 */
export class FacePipeline {
  private current: FaceModels = { lbph: null, embedding: null };
  /** The corrections ("not this person", corrections.ts) by label name, applied with whichever model is current. */
  private negatives: FaceNegatives = EMPTY_FACE_NEGATIVES;

  constructor(private readonly host: PipelineHost) {}

  get models(): FaceModels {
    return this.current;
  }

  /** Replaces the models given (undefined: keeps that one, null: clears it). */
  setModels(models: Partial<FaceModels>): void {
    this.current = { ...this.current, ...models };
  }

  /** Replaces the corrections of the recognizers given (by label name, so they outlive a retraining). */
  setNegatives(negatives: Partial<FaceNegatives>): void {
    this.negatives = { ...this.negatives, ...negatives };
  }

  get corrections(): FaceNegatives {
    return this.negatives;
  }

  /** The corrections of a recognizer in terms of a model's label ids, or null when there are none. */
  private correctionsFor(recognizer: RecognitionModel, trained: Trained<unknown> | null): CorrectionContext | null {
    const negatives = this.negatives[recognizer];
    if (!trained || negatives.size === 0) return null;
    return { names: trained.names, negatives, distance: recognizer === 'lbph' ? lbphFeatureDistance : embeddingFeatureDistance };
  }

  /** The given boxes, or the cascade's. */
  async detect(gray: GrayImage | undefined, boxes?: Rect[]): Promise<Rect[]> {
    if (boxes) return boxes;
    if (!this.host.detect) throw new Error('this worker has no face detector: the boxes must come with the job');
    if (!gray) throw new Error('the gray image is needed to detect faces');
    return this.host.detect(gray);
  }

  /** detect -> normalise -> predict -> face results, with the active recognizer's model. */
  async recognize(image: { gray?: GrayImage; rgb?: RgbImage }, step: RecognizeStep): Promise<Recognition> {
    const t0 = now();
    const boxes = await this.detect(image.gray, step.boxes);
    const t1 = now();
    // Read once: a model installed meanwhile applies from the next recognition on.
    const trained = this.current[step.recognizer];
    const corrections = this.correctionsFor(step.recognizer, trained);
    let faces: RecognizedBox[];
    let described: (Float32Array | null)[] | undefined;
    if (step.recognizer === 'embedding') {
      const model = this.current.embedding?.model ?? null;
      const { describe } = this.host;
      if (model && boxes.length && (!describe || !image.rgb))
        throw new Error('the embedding recognizer needs the colour image and its nets');
      // The descriptors predictEmbeddingFaces computes, kept when the step asks for them.
      const keeping: Describe | undefined =
        describe && step.descriptors
          ? async (rgb, asked) => {
              const found = await describe(rgb, asked);
              described = asked.map((_, i) => found[i] ?? null);
              return found;
            }
          : describe;
      // Without a model (or faces) nothing is described, so the missing parts are never used.
      faces =
        model && keeping && image.rgb
          ? await predictEmbeddingFaces(image.rgb, boxes, model, keeping, corrections)
          : boxes.map((box) => recognized(box, null));
    } else {
      if (!image.gray) throw new Error('LBPH needs the gray image');
      faces = predictLbphFaces(image.gray, boxes, this.current.lbph?.model ?? null, this.host.eyeCascade ?? null, corrections);
    }
    return {
      faces: faceResults(faces, trained, step.rule),
      trained: trained !== null,
      detectMs: t1 - t0,
      recognizeMs: now() - t1,
      ...(described ? { descriptors: described } : {}),
    };
  }

  /** A training image's sample; `describe`: also the embedding descriptor (where the host can compute it). */
  async sample(image: { gray: GrayImage; rgb?: RgbImage }, options: { boxes?: Rect[]; describe?: boolean } = {}): Promise<FaceSample> {
    const boxes = await this.detect(image.gray, options.boxes);
    const face = largestBox(boxes) ?? null;
    if (!face) return { boxes, face: null, histogram: null, descriptor: null };
    const eyeCascade = this.host.eyeCascade ?? null;
    const histogram = lbpHistogram(alignedFace(image.gray, face, eyeCascade));
    const describe = options.describe && image.rgb ? this.host.describe : undefined;
    const descriptor = describe ? ((await describe(image.rgb!, [face]))[0] ?? null) : null;
    return { boxes, face, histogram, descriptor, ...(eyeCascade ? { faceAlignment: FACE_ALIGNMENT } : {}) };
  }
}
