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
import { cropGray, rgbToGray } from '../image/ops.js';
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
import { boundsFor, type Cohort, nearestCohortDistance, withCohortBounds, withCorrectionFaces } from './cohort.js';
import type { DecisionRule, FaceQuality } from './decision.js';
import { measureFace } from './photo-check.js';
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

/**
 * The embedding recognizer on each face. Without a model no descriptor is computed: none would be used. With a
 * cohort of the model's descriptor model, each ranked person carries their cohort bound (cohort.ts).
 */
export async function predictEmbeddingFaces(
  rgb: RgbImage,
  boxes: readonly Rect[],
  model: EmbeddingModel | null,
  describe: Describe,
  corrections: CorrectionContext | null = null,
  cohort: Cohort | null = null,
): Promise<RecognizedBox[]> {
  const descriptors = model && boxes.length ? await describe(rgb, [...boxes]) : [];
  const bounds = model && cohort && cohort.dim === model.dim ? boundsFor(model, cohort) : null;
  // A face the nets could not describe is compared with nobody: it stays unknown (no_match).
  return boxes.map((box, i) => {
    if (!model) return recognized(box, null);
    const descriptor = descriptors[i];
    if (!descriptor) return recognized(box, []);
    const ranked = withCohortBounds(withCorrections(rankEmbedding(model, descriptor), descriptor, corrections), bounds);
    return bounds && cohort
      ? { box, ranked, evidence: { cohortDistance: nearestCohortDistance(descriptor, cohort) } }
      : recognized(box, ranked);
  });
}

/**
 * A query face's quality (#34), measured as the enrollment check measures a photo (photo-check.ts): size, sharpness
 * and exposure of the face crop. From the gray picture where the host has it, else from the colour one's face
 * region alone (the same pixels: gray is per pixel, so crop-then-convert equals convert-then-crop). The pose needs
 * the eye cascade, which not every host runs per face, so it is not part of it (it never caps certainty here).
 */
export function faceQuality(image: { gray?: GrayImage; rgb?: RgbImage }, box: Rect): FaceQuality | undefined {
  let gray = image.gray;
  let at = box;
  if (!gray) {
    if (!image.rgb) return undefined;
    const x0 = Math.max(0, Math.floor(box.x));
    const y0 = Math.max(0, Math.floor(box.y));
    const x1 = Math.min(image.rgb.width, Math.floor(box.x + box.width));
    const y1 = Math.min(image.rgb.height, Math.floor(box.y + box.height));
    if (x1 <= x0 || y1 <= y0) return undefined;
    const { width, channels, data } = image.rgb;
    const w = x1 - x0;
    const h = y1 - y0;
    const region = new Uint8Array(w * h * channels);
    for (let y = 0; y < h; y++) {
      const s = ((y0 + y) * width + x0) * channels;
      region.set(data.subarray(s, s + w * channels), y * w * channels);
    }
    gray = rgbToGray({ width: w, height: h, channels, data: region });
    at = { x: box.x - x0, y: box.y - y0, width: box.width, height: box.height };
  }
  if (cropGray(gray, at).width === 0) return undefined;
  const m = measureFace(gray, at);
  return { facePx: m.face_px, sharpness: m.sharpness, highlights: m.highlights, clipped: m.clipped };
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

/** Faces with their quality measured, where the rule has quality floors (nothing is measured otherwise). */
function withQuality(faces: RecognizedBox[], image: { gray?: GrayImage; rgb?: RgbImage }, rule: DecisionRule): RecognizedBox[] {
  if (!rule.quality) return faces;
  return faces.map((f) => {
    if (!f.ranked?.length) return f;
    const quality = faceQuality(image, f.box);
    return quality ? { ...f, evidence: { ...f.evidence, quality } } : f;
  });
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
  /**
   * The background cohort (cohort.ts) of the descriptor model with descriptors of `dim` values (128: faceapi-128,
   * 1024: faceres-1024), for the embedding recognizer's per-person limits; absent or null: the rule's `max` alone.
   */
  cohort?: (dim: number) => Cohort | null | Promise<Cohort | null>;
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
      const shipped = model && step.rule.cohortRatio != null ? ((await this.host.cohort?.(model.dim)) ?? null) : null;
      // The site's corrections are strangers to the people they were taken for: part of the cohort (cohort.ts).
      const cohort = shipped ? withCorrectionFaces(shipped, this.negatives.embedding) : null;
      // Without a model (or faces) nothing is described, so the missing parts are never used.
      faces =
        model && keeping && image.rgb
          ? await predictEmbeddingFaces(image.rgb, boxes, model, keeping, corrections, cohort)
          : boxes.map((box) => recognized(box, null));
    } else {
      if (!image.gray) throw new Error('LBPH needs the gray image');
      faces = predictLbphFaces(image.gray, boxes, this.current.lbph?.model ?? null, this.host.eyeCascade ?? null, corrections);
    }
    return {
      faces: faceResults(withQuality(faces, image, step.rule), trained, step.rule),
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
