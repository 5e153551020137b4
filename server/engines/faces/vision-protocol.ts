/**
 * The vision workers' operations (Haar cascade + LBPH, shared/recognition/pipeline.ts). Pixels travel as
 * transferred ArrayBuffers (no copy); models, with their label names, travel as structured clones once per
 * training run, so a worker's answer is already named by the model it used.
 */
import type { GrayImage, Rect } from '../../../shared/image/types.js';
import type { LbphModel } from '../../../shared/lbph/lbph.js';
import type { FacialFeatures, FeatureCascadeTexts } from '../../../shared/vision/facial-features.js';
import type { DetectOptions } from '../../../shared/vision/haar-cascade.js';
import type { Negatives } from '../../../shared/recognition/corrections.js';
import type { DecisionRule } from '../../../shared/recognition/decision.js';
// #26 enrollment
import type { PhotoCheck } from '../../../shared/recognition/photo-check.js';
import type { CascadeParams, FaceSample, Recognition, Trained } from '../../../shared/recognition/pipeline.js';
import type { WorkerPool } from '../workers/worker-pool.js';

/** Moves the pixel buffer to the worker instead of copying it (only buffers this process allocated whole). */
export function transferable(gray: GrayImage): ArrayBuffer[] {
  return gray.data.byteOffset === 0 && gray.data.byteLength === gray.data.buffer.byteLength ? [gray.data.buffer as ArrayBuffer] : [];
}

export interface VisionWorkerData {
  cascadeXml: string;
  cascade: CascadeParams;
  /**
   * The eye, eyeglasses and smile cascades' XML: the chat's facial features (parsed on first use) and the eye
   * cascade's tilt correction before LBPH (parsed at start).
   */
  featureCascadeXml?: FeatureCascadeTexts;
  /** The profile-face cascade's XML: the facial analysis' `profile_face` (parsed on first use). */
  profileCascadeXml?: string;
}

/** A face's features, with `profile_face` when the worker has the profile cascade and the crop its surroundings. */
export type ServerFacialFeatures = FacialFeatures & { profile_face?: boolean };

/** One face for the facial features: its gray pixels and where they lie in the image. */
export interface FaceCrop {
  gray: GrayImage;
  origin: { x: number; y: number };
  /** The region around the face the profile cascade searches (shared/vision/profile-face.ts profileRegion). */
  around?: GrayImage;
}

export interface VisionOps {
  detect: { args: { gray: GrayImage }; result: Rect[] };
  /** The raw windows of the pyramid levels `options` selects (a part of another worker's detect, cascade-split.ts). */
  detectPart: { args: { gray: GrayImage; options: DetectOptions }; result: Rect[] };
  /** Detects (or takes the given boxes) and names each face with the worker's LBPH model. */
  recognize: { args: { gray: GrayImage; boxes?: Rect[]; rule: DecisionRule }; result: Recognition };
  /** Detects (or takes the given boxes), keeps the largest face, and returns it with its LBPH histogram. */
  trainSample: { args: { gray: GrayImage; boxes?: Rect[] }; result: FaceSample };
  setModel: { args: Trained<LbphModel> | null; result: void };
  /** The LBPH corrections ("not this person" histograms by label name), applied by recognize and verify. */
  setNegatives: { args: Negatives; result: void };
  /** Verification 1:1: detects (or takes the given boxes); with exactly one face, its distance to `label`'s samples. */
  verify: { args: { gray: GrayImage; boxes?: Rect[]; label: string }; result: FrameVerification };
  // #26 enrollment
  /** The photo check of a training image (shared/recognition/photo-check.ts): detects, measures the picked or largest face. */
  checkPhoto: { args: { gray: GrayImage; pick?: Rect; boxes?: Rect[] }; result: { boxes: Rect[]; check: PhotoCheck } };
  /** Eyes, smile and eyeglasses of each face (shared/vision/facial-features.ts), in order. */
  features: { args: { faces: FaceCrop[] }; result: ServerFacialFeatures[] };
}

/** The worker's model at the time of the job: whether it had one, knew the label, and the one face's distance. */
export interface FrameVerification {
  boxes: Rect[];
  trained: boolean;
  enrolled: boolean;
  /** Null unless exactly one face was found and the label is known. */
  distance: number | null;
  /** The same face's distance to the nearest of the label's corrections; null or absent without any. */
  correction?: number | null;
}

export type VisionPool = WorkerPool<VisionOps>;
