/**
 * The embedding recognizer's matcher: euclidean distances between a face's descriptor and the enrolled ones. It
 * ranks people (rankEmbedding, each at their nearest sample) and measures one person (labelDistanceEmbedding);
 * whether a face is named is the decision rule's (shared/recognition/decision.ts). Every sample is kept, not a
 * per-label mean: a person enrolled under different lighting or poses keeps each of them.
 */

/**
 * A trained model as plain data (typed arrays only), so it survives structured clone to a worker.
 * Sample i is `descriptors[i * dim .. (i + 1) * dim)` with label `labels[i]`; label names live with the
 * caller (and in the model file, see model-file.ts).
 */
import { type PersonDistance, RANK_DEPTH } from '../recognition/ranking.js';

/** Length of a face-api face descriptor. */
export const DESCRIPTOR_SIZE = 128;

export interface EmbeddingModel {
  dim: number;
  descriptors: Float32Array;
  labels: Int32Array;
}

export interface EmbeddingSample {
  label: number;
  descriptor: ArrayLike<number>;
}

export interface EmbeddingPrediction {
  /** Nearest sample's label, or -1 for an empty model. */
  label: number;
  /** Its euclidean distance; Infinity with label -1. */
  distance: number;
}

/** Builds a model from labelled descriptors (an empty list gives an empty model that predicts -1). */
export function trainEmbedding(samples: readonly EmbeddingSample[], dim: number = DESCRIPTOR_SIZE): EmbeddingModel {
  if (!Number.isInteger(dim) || dim < 1) throw new Error(`embedding: dim must be a positive integer, got ${dim}`);
  const descriptors = new Float32Array(samples.length * dim);
  const labels = new Int32Array(samples.length);
  samples.forEach((s, i) => {
    if (!Number.isInteger(s.label) || s.label < 0 || s.label > 0x7fffffff) {
      throw new Error(`embedding: sample ${i} has label ${s.label}; labels are non-negative 32-bit integers`);
    }
    if (s.descriptor.length !== dim) {
      throw new Error(`embedding: sample ${i} has ${s.descriptor.length} values, expected ${dim}`);
    }
    for (let k = 0; k < dim; k++) {
      const v = s.descriptor[k];
      if (!Number.isFinite(v)) throw new Error(`embedding: sample ${i} has a non-finite value at ${k}`);
      descriptors[i * dim + k] = v;
    }
    labels[i] = s.label;
  });
  return { dim, descriptors, labels };
}

/** Number of samples in a model. */
export function embeddingSampleCount(model: EmbeddingModel): number {
  return model.labels.length;
}

/** Euclidean distance between two descriptors of equal length (double precision accumulation). */
export function euclideanDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`euclideanDistance: lengths differ (${a.length} vs ${b.length})`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  return Math.sqrt(sum);
}

/** Nearest enrolled sample to `descriptor` (ties: the first). */
export function predictEmbedding(model: EmbeddingModel, descriptor: ArrayLike<number>): EmbeddingPrediction {
  const { dim, descriptors, labels } = model;
  if (descriptor.length !== dim) throw new Error(`embedding: descriptor has ${descriptor.length} values, model expects ${dim}`);
  let best = -1;
  let bestSq = Infinity;
  for (let i = 0, o = 0; i < labels.length; i++, o += dim) {
    let sum = 0;
    // Early exit once this sample cannot win: most impostor samples stop well before the end.
    for (let k = 0; k < dim && sum < bestSq; k++) {
      const d = descriptors[o + k] - descriptor[k];
      sum += d * d;
    }
    if (sum < bestSq) {
      bestSq = sum;
      best = i;
    }
  }
  return best < 0 ? { label: -1, distance: Infinity } : { label: labels[best], distance: Math.sqrt(bestSq) };
}

/**
 * The `k` nearest people (each at their nearest sample), nearest first: the decision rule's input
 * (shared/recognition/decision.ts), where one person's photos count as one template set.
 */
export function rankEmbedding(model: EmbeddingModel, descriptor: ArrayLike<number>, k: number = RANK_DEPTH): PersonDistance[] {
  const { dim, descriptors, labels } = model;
  if (descriptor.length !== dim) throw new Error(`embedding: descriptor has ${descriptor.length} values, model expects ${dim}`);
  if (k < 1) return [];
  // The k nearest distinct people so far (squared distances, nearest first). A sample only matters if it beats
  // the k-th of them, or its own person's entry: that bound lets most samples stop early, as in predictEmbedding,
  // so ranking costs about what the nearest-neighbour search does at any gallery size.
  const topLabels: number[] = [];
  const topSq: number[] = [];
  for (let i = 0, o = 0; i < labels.length; i++, o += dim) {
    const label = labels[i];
    const at = topLabels.indexOf(label);
    const bound = at >= 0 ? topSq[at] : topLabels.length < k ? Infinity : topSq[k - 1];
    let sum = 0;
    for (let j = 0; j < dim && sum <= bound; j++) {
      const d = descriptors[o + j] - descriptor[j];
      sum += d * d;
    }
    // A tie with the k-th person goes to the smaller label, as nearestPeople orders them.
    const enters = sum < bound || (at < 0 && sum === bound && label < topLabels[k - 1]);
    if (!enters) continue;
    if (at >= 0) {
      topLabels.splice(at, 1);
      topSq.splice(at, 1);
    } else if (topLabels.length === k) {
      topLabels.pop();
      topSq.pop();
    }
    let pos = topSq.length;
    // Ties keep the smaller label first, as nearestPeople orders them.
    while (pos > 0 && (topSq[pos - 1] > sum || (topSq[pos - 1] === sum && topLabels[pos - 1] > label))) pos--;
    topLabels.splice(pos, 0, label);
    topSq.splice(pos, 0, sum);
  }
  return topLabels.map((labelId, i) => ({ labelId, distance: Math.sqrt(topSq[i]) }));
}

/** The distance from `descriptor` to the nearest sample of one person (Infinity when the model has none). */
export function labelDistanceEmbedding(model: EmbeddingModel, descriptor: ArrayLike<number>, labelId: number): number {
  const { dim, descriptors, labels } = model;
  if (descriptor.length !== dim) throw new Error(`embedding: descriptor has ${descriptor.length} values, model expects ${dim}`);
  let bestSq = Infinity;
  for (let i = 0, o = 0; i < labels.length; i++, o += dim) {
    if (labels[i] !== labelId) continue;
    let sum = 0;
    for (let k = 0; k < dim; k++) {
      const d = descriptors[o + k] - descriptor[k];
      sum += d * d;
    }
    if (sum < bestSq) bestSq = sum;
  }
  return Math.sqrt(bestSq);
}
