/**
 * The rankings as they were before #27 section 3, frozen: the embedding ranking's per-sample early exit and LBPH's
 * scan of every sample through the non-zero masks (commit af317bb, shared/embedding/matcher.ts and
 * shared/lbph/lbph.ts). The reference of the equivalence tests (the new rankings must give the same people in the
 * same order at the same distances, bit for bit) and the "before" column of bench/ranking-scale.bench.ts, measured
 * in the same run. Not used by the product.
 */
import type { EmbeddingModel } from '../shared/embedding/matcher.js';
import type { LbphModel, LbphPrediction } from '../shared/lbph/lbph.js';
import { nearestPeople, type PersonDistance, RANK_DEPTH } from '../shared/recognition/ranking.js';

/** rankEmbedding before #27: one sample at a time, each cut short at the k-th person's bound. */
export function rankEmbeddingBefore(model: EmbeddingModel, descriptor: ArrayLike<number>, k: number = RANK_DEPTH): PersonDistance[] {
  const { dim, descriptors, labels } = model;
  if (k < 1) return [];
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
  return topLabels.map((labelId, i) => ({ labelId, distance: Math.sqrt(topSq[i]) }));
}

const DBL_EPSILON = 2.220446049250313e-16;
const fround = Math.fround;

function chiSquareAlt(h1: Float32Array, h2: Float32Array): number {
  let s = 0;
  for (let j = 0; j < h1.length; j++) {
    const b = fround(h1[j] + h2[j]);
    if (Math.abs(b) > DBL_EPSILON) {
      const a = fround(h1[j] - h2[j]);
      s += (a * a) / b;
    }
  }
  return s * 2;
}

function nonZeroMask(h: Float32Array, out: Int32Array, offset: number): boolean {
  let plain = true;
  for (let j = 0; j < h.length; j++) {
    const v = h[j];
    if (v !== 0) {
      out[offset + (j >> 5)] |= 1 << (j & 31);
      if (!(v > DBL_EPSILON && v < Infinity)) plain = false;
    }
  }
  return plain;
}

function chiSquareUnion(h1: Float32Array, m1: Int32Array, m1Offset: number, h2: Float32Array, m2: Int32Array, words: number): number {
  let s = 0;
  for (let w = 0; w < words; w++) {
    let u = m1[m1Offset + w] | m2[w];
    const base = w << 5;
    while (u !== 0) {
      const low = u & -u;
      u ^= low;
      const j = base + 31 - Math.clz32(low);
      const x = h1[j];
      const y = h2[j];
      const a = fround(x - y);
      s += (a * a) / fround(x + y);
    }
  }
  return s * 2;
}

interface Masks {
  words: number;
  masks: Int32Array;
  plain: boolean;
}
const masksCache = new WeakMap<LbphModel, Masks>();

function masksOf(model: LbphModel): Masks {
  const cached = masksCache.get(model);
  if (cached) return cached;
  const words = (model.histograms[0].length + 31) >> 5;
  const masks = new Int32Array(words * model.histograms.length);
  let plain = true;
  model.histograms.forEach((h, i) => {
    if (!nonZeroMask(h, masks, i * words)) plain = false;
  });
  const m = { words, masks, plain };
  masksCache.set(model, m);
  return m;
}

/** Every sample's label and distance to a query histogram, in model order, as scanLbph did before #27. */
function scanLbphBefore(model: LbphModel, query: Float32Array, visit: (label: number, distance: number) => void): void {
  const { words, masks, plain: modelPlain } = masksOf(model);
  const mask = new Int32Array(words);
  const plain = nonZeroMask(query, mask, 0) && modelPlain;
  const { histograms, labels } = model;
  for (let i = 0; i < labels.length; i++) {
    visit(labels[i], plain ? chiSquareUnion(histograms[i], masks, i * words, query, mask, words) : chiSquareAlt(histograms[i], query));
  }
}

/** rankLbph before #27 (histogram queries). */
export function rankLbphBefore(model: LbphModel, query: Float32Array, k = RANK_DEPTH): PersonDistance[] {
  const nearest = new Map<number, number>();
  scanLbphBefore(model, query, (label, d) => {
    const seen = nearest.get(label);
    if (seen === undefined || d < seen) nearest.set(label, d);
  });
  return nearestPeople(nearest, k);
}

/** predictLbph before #27 (histogram queries). */
export function predictLbphBefore(model: LbphModel, query: Float32Array): LbphPrediction {
  let label = -1;
  let distance = Number.MAX_VALUE;
  scanLbphBefore(model, query, (l, d) => {
    if (d < model.threshold && d < distance) {
      distance = d;
      label = l;
    }
  });
  return { label, distance };
}
