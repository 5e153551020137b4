/**
 * Local Binary Pattern Histograms face recognition, bit-compatible with OpenCV 4.6's
 * `cv::face::LBPHFaceRecognizer` (opencv_contrib modules/face/src/lbph_faces.cpp):
 * the same circular LBP with float32 bilinear sampling, the same per-cell histograms in float32,
 * and the same HISTCMP_CHISQR_ALT nearest-neighbour prediction, in the same summation order, so
 * distances come out equal to the last bit.
 *
 * Runs unchanged in Node and browsers (no Node APIs, no DOM).
 *
 * The histogram is computed in lbp-histogram.ts, prediction is in lbph-predict.ts; this module keeps the model and
 * training, and exports all of it.
 */
import type { GrayImage } from '../image/types.js';
import { type LbphParams, lbpHistogram, resolveParams } from './lbp-histogram.js';

export { LBPH_DEFAULTS, type LbphParams, lbpHistogram } from './lbp-histogram.js';
export { chiSquareAlt, labelDistanceLbph, predictLbph, rankLbph } from './lbph-predict.js';

/** A label's free-text name, as OpenCV's `setLabelInfo` stores it (`labelsInfo` in training.yml). */
export interface LbphLabelInfo {
  label: number;
  value: string;
}

/**
 * A trained model. Plain data (numbers, typed arrays, plain objects), so it survives structured clone
 * (postMessage to a Worker) and JSON-free storage.
 *
 * `histograms[i]` is sample i's spatial histogram, `gridX * gridY * 2^neighbors` float32 values
 * (cell-major, row by row, then the pattern bins), exactly OpenCV's `getHistograms()[i]`;
 * `labels[i]` is its label. Treat a model as immutable once built: `predictLbph` caches the
 * histograms' non-zero bins per model object (replacing `histograms` or `labels` is detected,
 * writing into the arrays is not).
 */
export interface LbphModel extends LbphParams {
  histograms: Float32Array[];
  labels: Int32Array;
  /** Optional label names, sorted by label (OpenCV keeps them in a std::map). */
  labelsInfo?: LbphLabelInfo[];
  /**
   * How the faces behind the histograms were normalised before LBPH (shared/vision/eye-alignment.ts
   * FACE_ALIGNMENT), so a query is normalised the same way; absent for models made by OpenCV or before
   * alignment. Stored in training.yml as `lookout_face_alignment`, a key OpenCV's reader skips.
   */
  faceAlignment?: string;
}

export interface LbphPrediction {
  /** Nearest sample's label, or -1 when no sample is closer than the threshold. */
  label: number;
  /** Its HISTCMP_CHISQR_ALT distance; Number.MAX_VALUE (DBL_MAX) with label -1. */
  distance: number;
}

/** Trains a model the way `LBPHFaceRecognizer::train` does: one histogram per image, labels kept in order. */
export function trainLbph(images: GrayImage[], labels: ArrayLike<number>, params?: Partial<LbphParams>): LbphModel {
  const p = resolveParams(params);
  if (images.length === 0) throw new Error('LBPH: empty training data; need at least one image');
  if (labels.length !== images.length) {
    throw new Error(`LBPH: ${images.length} images but ${labels.length} labels`);
  }
  const lab = new Int32Array(labels.length);
  for (let i = 0; i < labels.length; i++) {
    const l = labels[i];
    if (!Number.isInteger(l) || l < -0x80000000 || l > 0x7fffffff) throw new Error(`LBPH: label ${l} is not an int32`);
    lab[i] = l;
  }
  return { ...p, histograms: images.map((im) => lbpHistogram(im, p)), labels: lab };
}
