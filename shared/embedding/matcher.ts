/**
 * The embedding recognizer's matcher: euclidean distances between a face's descriptor and the enrolled ones. It
 * ranks people (rankEmbedding, each at their nearest sample) and measures one person (labelDistanceEmbedding);
 * whether a face is named is the decision rule's (shared/recognition/decision.ts). Every sample is kept, not a
 * per-label mean: a person enrolled under different lighting or poses keeps each of them.
 */

/**
 * A trained model as plain data (typed arrays only), so it survives structured clone to a worker.
 * Sample i is `descriptors[i * dim .. (i + 1) * dim)` with label `labels[i]`; label names live with the
 * caller (and in the model file, see model-file.ts). Treat a model as immutable once built: rankEmbedding keeps
 * each sample's squared length and a SIMD copy of the templates per model object (replacing `descriptors` or
 * `labels` is detected, writing into them is not).
 */
import { simdDots } from './simd-dots.js';
import { kthPersonScore, type PersonDistance, RANK_DEPTH, SCREEN_MAX_DEPTH } from '../recognition/ranking.js';

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
 * A model's templates as the ranking reads them: the descriptors as they are (one contiguous Float32Array, so a
 * query is one pass of dot products over them) and each sample's squared length. Built once per model object.
 */
interface PreparedEmbedding {
  descriptors: Float32Array;
  labels: Int32Array;
  /** |x_i|^2 per sample, in double. */
  norms: Float64Array;
  maxNorm: number;
  /** False when a value or a squared length is not finite (a hand-made file): such a model is ranked sample by sample. */
  finite: boolean;
}

const preparedCache = new WeakMap<EmbeddingModel, PreparedEmbedding>();

/** Below this many samples the sample-by-sample search is as fast, and needs no per-model state. */
const ONE_PASS_MIN_SAMPLES = 64;

function prepareEmbedding(model: EmbeddingModel): PreparedEmbedding {
  const cached = preparedCache.get(model);
  if (cached && cached.descriptors === model.descriptors && cached.labels === model.labels) return cached;
  const { dim, descriptors, labels } = model;
  const norms = new Float64Array(labels.length);
  let maxNorm = 0;
  let finite = descriptors.length === labels.length * dim;
  for (let i = 0, o = 0; finite && i < labels.length; i++, o += dim) {
    let sum = 0;
    for (let k = 0; k < dim; k++) sum += descriptors[o + k] * descriptors[o + k];
    if (!Number.isFinite(sum)) finite = false;
    norms[i] = sum;
    if (sum > maxNorm) maxNorm = sum;
  }
  const prepared = { descriptors, labels, norms, maxNorm, finite };
  preparedCache.set(model, prepared);
  return prepared;
}

// Scratch for one query (calls are synchronous): the query in double and each sample's estimated squared distance.
let scratchQuery = new Float64Array(0);
let scratchScores = new Float64Array(0);

/** Below this size float32 products are not all normal numbers; beyond it they may overflow. */
const SIMD_MAX_NORM = 1e30;

/**
 * Each sample's squared distance to `query`, estimated in one pass as |q|^2 + |x|^2 - 2 q.x (a matrix-vector product
 * over the contiguous templates: WebAssembly SIMD in float32 where the host has it, else four running sums in
 * double). Returns the bound on how far an estimate can be from the distance the exact loop computes.
 */
function estimateAll(prep: PreparedEmbedding, dim: number, descriptor: ArrayLike<number>, out: Float64Array): number {
  if (scratchQuery.length !== dim) scratchQuery = new Float64Array(dim);
  const q = scratchQuery;
  let qq = 0;
  for (let k = 0; k < dim; k++) {
    q[k] = descriptor[k];
    qq += q[k] * q[k];
  }
  const { descriptors: d, norms } = prep;
  const n = norms.length;
  const scale = qq + prep.maxNorm;
  const simd = dim % 8 === 0 && scale < SIMD_MAX_NORM ? simdDots() : null;
  if (simd?.dots(d, dim, q, out)) {
    for (let i = 0; i < n; i++) out[i] = qq + norms[i] - 2 * out[i];
    // float32: the query's rounding (2^-24) and each lane's dim/8 products and sums (dim/8 x 2^-24), relative to
    // sum |x q| <= (|x|^2 + |q|^2) / 2, doubled in the distance; the exact loop's double rounding; an absolute
    // term for float32 underflow; all times 2.
    return 2 * (scale * ((dim / 8 + 3) * 2 ** -24 + (dim + 16) * 2 ** -52) + dim * 2 ** -140);
  }
  const tail = dim & ~3;
  for (let i = 0, o = 0; i < n; i++, o += dim) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let k = 0;
    for (; k < tail; k += 4) {
      s0 += d[o + k] * q[k];
      s1 += d[o + k + 1] * q[k + 1];
      s2 += d[o + k + 2] * q[k + 2];
      s3 += d[o + k + 3] * q[k + 3];
    }
    for (; k < dim; k++) s0 += d[o + k] * q[k];
    out[i] = qq + norms[i] - 2 * (s0 + s1 + (s2 + s3));
  }
  // Both sides err by at most about (2 dim + 5) 2^-53 (|q|^2 + |x|^2); 2^-48 leaves a factor of 16.
  return (dim + 8) * 2 ** -48 * scale;
}

/**
 * The old sample-by-sample search over the samples `take` accepts (all when absent), with exact distances: the
 * k nearest distinct people by their nearest sample's squared distance, ties to the smaller label. A sample only
 * matters if it beats the k-th person or its own person's entry, so most stop early.
 */
function exactTop(
  model: EmbeddingModel,
  descriptor: ArrayLike<number>,
  k: number,
  take?: (i: number) => boolean,
): { labels: number[]; sq: number[] } {
  const { dim, descriptors, labels } = model;
  const topLabels: number[] = [];
  const topSq: number[] = [];
  for (let i = 0, o = 0; i < labels.length; i++, o += dim) {
    if (take && !take(i)) continue;
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
    while (pos > 0 && (topSq[pos - 1] > sum || (topSq[pos - 1] === sum && topLabels[pos - 1] > label))) pos--;
    topLabels.splice(pos, 0, label);
    topSq.splice(pos, 0, sum);
  }
  return { labels: topLabels, sq: topSq };
}

/**
 * The `k` nearest people (each at their nearest sample), nearest first: the decision rule's input
 * (shared/recognition/decision.ts), where one person's photos count as one template set.
 *
 * One pass estimates every sample's distance from dot products over the contiguous templates; only the samples
 * that can still be among the k nearest people (estimate within the k-th person's estimate plus twice the error
 * bound) are measured again with the exact loop. The k people and their distances are therefore the exact loop's,
 * bit for bit, while the cost is one streaming pass (no per-sample branching) plus a handful of exact distances.
 */
export function rankEmbedding(model: EmbeddingModel, descriptor: ArrayLike<number>, k: number = RANK_DEPTH): PersonDistance[] {
  const { dim, labels } = model;
  if (descriptor.length !== dim) throw new Error(`embedding: descriptor has ${descriptor.length} values, model expects ${dim}`);
  if (k < 1) return [];
  const top = labels.length < ONE_PASS_MIN_SAMPLES ? exactTop(model, descriptor, k) : rankOnePass(model, descriptor, k);
  return top.labels.map((labelId, i) => ({ labelId, distance: Math.sqrt(top.sq[i]) }));
}

function rankOnePass(model: EmbeddingModel, descriptor: ArrayLike<number>, k: number): { labels: number[]; sq: number[] } {
  const prep = prepareEmbedding(model);
  let finiteQuery = true;
  for (let j = 0; j < model.dim; j++) if (!Number.isFinite(descriptor[j])) finiteQuery = false;
  // A non-finite value anywhere: the exact loop, which defines what such a query gives.
  if (!prep.finite || !finiteQuery || k > SCREEN_MAX_DEPTH) return exactTop(model, descriptor, k);
  if (scratchScores.length < prep.labels.length) scratchScores = new Float64Array(prep.labels.length);
  const scores = scratchScores;
  const error = estimateAll(prep, model.dim, descriptor, scores);
  // Some k people are within this estimate, so the k-th exact distance is at most it plus one error bound, and a
  // sample at that exact distance estimates at most one more above it.
  const limit = kthPersonScore(scores, prep.labels, k) + 2 * error;
  if (!Number.isFinite(limit)) return exactTop(model, descriptor, k);
  return exactTop(model, descriptor, k, (i) => scores[i] <= limit);
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
