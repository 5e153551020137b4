/**
 * LBPH prediction (lbph.ts): the nearest stored histograms by HISTCMP_CHISQR_ALT, in OpenCV 4.6's summation order, so
 * distances come out equal to the last bit; the sparse one-pass screen only picks which samples are measured exactly.
 *
 * Runs unchanged in Node and browsers (no Node APIs, no DOM).
 */
import type { GrayImage } from '../image/types.js';
import { kthPersonScore, nearestPeople, type PersonDistance, SCREEN_MAX_DEPTH } from '../recognition/ranking.js';
import { accumulateCodes, cellScale, geometry, resolveParams } from './lbp-histogram.js';
import type { LbphModel, LbphPrediction } from './lbph.js';

const DBL_EPSILON = 2.220446049250313e-16;
const fround = Math.fround;

// ---------------------------------------------------------------- chi-square (HISTCMP_CHISQR_ALT)

/**
 * `cv::compareHist(h1, h2, HISTCMP_CHISQR_ALT)` as OpenCV 4.6 computes it: per bin a = h1 - h2 and
 * b = h1 + h2 in float32, `a*a/b` summed in double in bin order over bins with |b| > DBL_EPSILON,
 * times 2. LBPH calls it with the stored histogram first and the query second.
 */
export function chiSquareAlt(h1: Float32Array, h2: Float32Array): number {
  if (h1.length !== h2.length) throw new Error(`chiSquareAlt: histogram sizes differ (${h1.length} vs ${h2.length})`);
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

/** A non-zero value the sparse paths take: positive and finite, so every visited bin has |h1 + h2| > DBL_EPSILON. */
function plainValue(v: number): boolean {
  return v > DBL_EPSILON && v < Infinity;
}

// ---------------------------------------------------------------- prediction

/**
 * A model's histograms as the ranking reads them, built once per model object: every sample's non-zero bins, in
 * bin order, in one contiguous array (a face crop sets about 3,000 of 16,384 bins, so this is about a third of the
 * dense histograms' bytes), with the sum of each sample's values.
 */
interface Prepared {
  histograms: Float32Array[];
  labels: Int32Array;
  size: number;
  /** Every stored non-zero value is plainValue; otherwise (only a hand-made file) every sample takes chiSquareAlt. */
  plain: boolean;
  /** Sample i's non-zero bins are bins[start[i] .. start[i + 1]), ascending, with their values. Empty unless plain. */
  start: Int32Array;
  bins: Uint16Array | Uint32Array;
  values: Float32Array;
  /** Each sample's sum of values, in double. */
  totals: Float64Array;
  maxTotal: number;
}

const preparedCache = new WeakMap<LbphModel, Prepared>();

function prepare(model: LbphModel): Prepared {
  const cached = preparedCache.get(model);
  if (cached && cached.histograms === model.histograms && cached.labels === model.labels) return cached;
  const hs = model.histograms;
  if (hs.length === 0) throw new Error('LBPH: the model has no histograms; train it first');
  if (model.labels.length !== hs.length) {
    throw new Error(`LBPH: model has ${hs.length} histograms but ${model.labels.length} labels`);
  }
  const size = hs[0].length;
  const start = new Int32Array(hs.length + 1);
  const totals = new Float64Array(hs.length);
  // One pass over the dense histograms (the cost at 10,000 people is reading them): the lists grow as they fill,
  // sized from the counts so far, so they are reallocated a few times at most.
  let capacity = 0;
  let bins: Uint16Array | Uint32Array = size <= 0x10000 ? new Uint16Array(0) : new Uint32Array(0);
  let values = new Float32Array(0);
  let plain = true;
  let at = 0;
  let maxTotal = 0;
  hs.forEach((h, i) => {
    if (!(h instanceof Float32Array)) throw new Error(`LBPH: histogram ${i} is not a Float32Array`);
    if (h.length !== size) throw new Error(`LBPH: histogram ${i} has ${h.length} bins, histogram 0 has ${size}`);
    if (!plain) return;
    if (capacity - at < size) {
      capacity = Math.max(at + size, Math.ceil(capacity * 1.25), i === 0 ? 0 : Math.ceil((at / i) * hs.length * 1.05) + size);
      const grown = size <= 0x10000 ? new Uint16Array(capacity) : new Uint32Array(capacity);
      grown.set(bins.subarray(0, at));
      bins = grown;
      const grownValues = new Float32Array(capacity);
      grownValues.set(values.subarray(0, at));
      values = grownValues;
    }
    let total = 0;
    for (let j = 0; j < size; j++) {
      const v = h[j];
      if (v !== 0) {
        if (!plainValue(v)) plain = false;
        bins[at] = j;
        values[at++] = v;
        total += v;
      }
    }
    start[i + 1] = at;
    totals[i] = total;
    if (total > maxTotal) maxTotal = total;
  });
  if (plain) {
    // A copy only when much is unused (the copy briefly holds both).
    bins = at < capacity * 0.9 ? bins.slice(0, at) : bins.subarray(0, at);
    values = at < capacity * 0.9 ? values.slice(0, at) : values.subarray(0, at);
  } else {
    bins = bins.subarray(0, 0);
    values = new Float32Array(0);
  }
  const p: Prepared = { histograms: hs, labels: model.labels, size, plain, start, bins, values, totals, maxTotal };
  preparedCache.set(model, p);
  return p;
}

/** A query: its dense histogram and, when plain, its non-zero bins in order (in reused buffers). */
interface Query {
  dense: Float32Array;
  plain: boolean;
  bins: Int32Array;
  values: Float32Array;
  count: number;
  total: number;
  /** The dense histogram is the image scratch and must be cleared after use. */
  scratch: boolean;
}

// Scratch buffers for queries, reused across calls (calls are synchronous).
let scratchCounts = new Int32Array(0);
let scratchHist = new Float32Array(0);
let scratchBins = new Int32Array(0);
let scratchValues = new Float32Array(0);
let scratchScores = new Float64Array(0);

function sparseScratch(size: number): void {
  if (scratchBins.length < size) {
    scratchBins = new Int32Array(size);
    scratchValues = new Float32Array(size);
  }
}

/** The query's histogram and its non-zero bins in reused buffers (the histogram is cleared by releaseQuery). */
function queryFromImage(img: GrayImage, model: LbphModel, size: number): Query {
  const p = resolveParams(model);
  const g = geometry(img, p);
  if (g.size !== size) throw new Error(`LBPH: query histogram has ${g.size} bins, the model's have ${size}`);
  if (scratchCounts.length !== g.size) {
    scratchCounts = new Int32Array(g.size);
    scratchHist = new Float32Array(g.size);
  }
  sparseScratch(g.size);
  const counts = scratchCounts;
  const hist = scratchHist;
  accumulateCodes(img, p, g, counts);
  const scale = cellScale(g);
  let count = 0;
  let total = 0;
  for (let i = 0; i < g.size; i++) {
    const c = counts[i];
    if (c !== 0) {
      const v = Math.fround(c * scale); // as the Float32Array store rounds the C++ float product
      hist[i] = v;
      scratchBins[count] = i;
      scratchValues[count++] = v;
      total += v;
      counts[i] = 0;
    }
  }
  return { dense: hist, plain: true, bins: scratchBins, values: scratchValues, count, total, scratch: true };
}

function queryFromHistogram(h: Float32Array): Query {
  sparseScratch(h.length);
  let count = 0;
  let total = 0;
  let plain = true;
  for (let j = 0; j < h.length; j++) {
    const v = h[j];
    if (v !== 0) {
      if (!plainValue(v)) plain = false;
      scratchBins[count] = j;
      scratchValues[count++] = v;
      total += v;
    }
  }
  return { dense: h, plain, bins: scratchBins, values: scratchValues, count, total, scratch: false };
}

function isGrayImage(x: unknown): x is GrayImage {
  return typeof x === 'object' && x !== null && 'width' in x && 'height' in x && 'data' in x;
}

function makeQuery(model: LbphModel, prep: Prepared, query: GrayImage | Float32Array): Query {
  if (query instanceof Float32Array) {
    if (query.length !== prep.size) {
      throw new Error(`LBPH: query histogram has ${query.length} bins, the model's have ${prep.size}`);
    }
    return queryFromHistogram(query);
  }
  if (isGrayImage(query)) return queryFromImage(query, model, prep.size);
  throw new Error('LBPH: query must be a GrayImage or a Float32Array histogram');
}

function releaseQuery(q: Query): void {
  if (q.scratch) for (let r = 0; r < q.count; r++) q.dense[q.bins[r]] = 0;
}

/**
 * Sample i's HISTCMP_CHISQR_ALT distance to the query, bit for bit {@link chiSquareAlt}: with both sides plain, a
 * merge of the two sorted non-zero lists visits exactly the bins non-zero in either, in bin order, with OpenCV's
 * formula (the bins it skips are zero in both, which OpenCV skips too); otherwise the literal formula.
 */
function exactDistance(prep: Prepared, i: number, q: Query): number {
  if (!prep.plain || !q.plain) return chiSquareAlt(prep.histograms[i], q.dense);
  const { bins, values } = prep;
  const { bins: qBins, values: qValues, count } = q;
  let p = prep.start[i];
  const end = prep.start[i + 1];
  let r = 0;
  let s = 0;
  while (p < end && r < count) {
    const jb = bins[p];
    const jq = qBins[r];
    let x = 0;
    let y = 0;
    if (jb <= jq) x = values[p++];
    if (jq <= jb) y = qValues[r++];
    const a = fround(x - y);
    s += (a * a) / fround(x + y);
  }
  // One side is done: the other's bins alone, where a = b = the value (exactly, in float32 and in the division).
  for (; p < end; p++) {
    const x = values[p];
    s += (x * x) / x;
  }
  for (; r < count; r++) {
    const y = qValues[r];
    s += (y * y) / y;
  }
  return s * 2;
}

/** Below this many samples scanning each exactly is as fast, and skips the estimate pass. */
const ONE_PASS_MIN_SAMPLES = 32;

/**
 * Every sample's distance to the query, estimated in one pass over the contiguous non-zero lists. The same sum
 * rearranged: over bins set in both, (x-y)^2/(x+y) = x + y - 4xy/(x+y), and a bin set in one side adds its value,
 * so the distance is 2 (X + Y - 4 sum over the sample's bins of xy/(x+y)) with X, Y the two totals; a bin the
 * query lacks adds 0, so no branch. Returns the bound on how far an estimate can be from what exactDistance gives:
 * OpenCV's float32 a and b err by 2^-24 each (under 2^-22 per term, every term at most x + y), the double sums by
 * at most bins x 2^-53; both doubled for safety.
 */
function estimateAll(prep: Prepared, q: Query, out: Float64Array): number {
  const { start, bins, values, totals } = prep;
  const y = q.dense;
  const n = totals.length;
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let p = start[i], end = start[i + 1]; p < end; p++) {
      const x = values[p];
      const v = y[bins[p]];
      s += (x * v) / (x + v);
    }
    out[i] = 2 * (totals[i] + q.total - 4 * s);
  }
  return 2 * (prep.maxTotal + q.total) * (2 ** -21 + (4 * prep.size + 16) * 2 ** -52);
}

/**
 * Calls `visit` for the samples that may matter, in model order, with their exact distance. With `k` set, only the
 * samples whose estimate is within the k-th person's estimate plus twice the error bound can be among the k nearest
 * people (some k people are within that estimate, so the k-th exact distance is at most it plus one bound); with k
 * = 0 the same for the nearest sample. Small models, odd values, or fewer than k people: every sample.
 */
function scanCandidates(prep: Prepared, q: Query, k: number, visit: (label: number, distance: number) => void): void {
  const { labels } = prep;
  const n = labels.length;
  let limit = Infinity;
  let scores: Float64Array | null = null;
  if (prep.plain && q.plain && n >= ONE_PASS_MIN_SAMPLES && k <= SCREEN_MAX_DEPTH) {
    if (scratchScores.length < n) scratchScores = new Float64Array(n);
    scores = scratchScores;
    const error = estimateAll(prep, q, scores);
    let best = Infinity;
    if (k === 0) for (let i = 0; i < n; i++) best = scores[i] < best ? scores[i] : best;
    else best = kthPersonScore(scores, labels, k);
    limit = best + 2 * error;
  }
  for (let i = 0; i < n; i++) {
    if (scores && !(scores[i] <= limit)) continue;
    visit(labels[i], exactDistance(prep, i, q));
  }
}

/**
 * Predicts like `LBPHFaceRecognizer::predict(src, label, confidence)`: the nearest stored histogram
 * by HISTCMP_CHISQR_ALT; the first one wins ties; samples at or above `model.threshold` are ignored,
 * and if none is left the answer is label -1 with distance DBL_MAX.
 * `query` is a face image or a histogram from {@link lbpHistogram} with the model's parameters.
 */
export function predictLbph(model: LbphModel, query: GrayImage | Float32Array): LbphPrediction {
  const threshold = model.threshold;
  let bestLabel = -1;
  let bestDist = Number.MAX_VALUE;
  const prep = prepare(model);
  const q = makeQuery(model, prep, query);
  try {
    // Every sample at the nearest exact distance is a candidate, in model order, so the first of ties still wins.
    scanCandidates(prep, q, 0, (label, d) => {
      // StandardCollector::collect: strict comparisons, so the first of equal distances stays.
      if (d < threshold && d < bestDist) {
        bestDist = d;
        bestLabel = label;
      }
    });
  } finally {
    releaseQuery(q);
  }
  return { label: bestLabel, distance: bestDist };
}

/**
 * The `k` nearest people (each at its nearest sample), nearest first, for the decision rule's margin test
 * (shared/recognition/decision.ts). Unlike predictLbph, OpenCV's threshold is not applied here: the rule decides.
 * Exact distances, as every sample scanned with chiSquareAlt would give; only the samples that can be among the
 * k nearest people are measured exactly (see scanCandidates).
 */
export function rankLbph(model: LbphModel, query: GrayImage | Float32Array, k = 3): PersonDistance[] {
  const nearest = new Map<number, number>();
  const prep = prepare(model);
  const q = makeQuery(model, prep, query);
  try {
    if (k >= 1) {
      scanCandidates(prep, q, Math.min(k, prep.labels.length), (label, d) => {
        const seen = nearest.get(label);
        if (seen === undefined || d < seen) nearest.set(label, d);
      });
    }
  } finally {
    releaseQuery(q);
  }
  return nearestPeople(nearest, k);
}

/** The distance from `query` to the nearest sample of one person (Infinity when the model has none). */
export function labelDistanceLbph(model: LbphModel, query: GrayImage | Float32Array, labelId: number): number {
  let best = Infinity;
  const prep = prepare(model);
  const q = makeQuery(model, prep, query);
  try {
    // Only that person's samples are measured.
    for (let i = 0; i < prep.labels.length; i++) {
      if (prep.labels[i] !== labelId) continue;
      const d = exactDistance(prep, i, q);
      if (d < best) best = d;
    }
  } finally {
    releaseQuery(q);
  }
  return best;
}
