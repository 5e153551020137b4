/**
 * Local Binary Pattern Histograms face recognition, bit-compatible with OpenCV 4.6's
 * `cv::face::LBPHFaceRecognizer` (opencv_contrib modules/face/src/lbph_faces.cpp):
 * the same circular LBP with float32 bilinear sampling, the same per-cell histograms in float32,
 * and the same HISTCMP_CHISQR_ALT nearest-neighbour prediction, in the same summation order, so
 * distances come out equal to the last bit.
 *
 * Runs unchanged in Node and browsers (no Node APIs, no DOM).
 */
import type { GrayImage } from '../image/types.js';
import { kthPersonScore, nearestPeople, type PersonDistance, SCREEN_MAX_DEPTH } from '../recognition/ranking.js';

/** LBPH parameters, with OpenCV's `LBPHFaceRecognizer_create()` defaults in {@link LBPH_DEFAULTS}. */
export interface LbphParams {
  radius: number;
  neighbors: number;
  gridX: number;
  gridY: number;
  /** Predictions at or above this distance give label -1. OpenCV's default is DBL_MAX. */
  threshold: number;
}

export const LBPH_DEFAULTS: Readonly<LbphParams> = Object.freeze({
  radius: 1,
  neighbors: 8,
  gridX: 8,
  gridY: 8,
  threshold: Number.MAX_VALUE,
});

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

const FLT_EPSILON = 1.1920928955078125e-7; // 2^-23
const DBL_EPSILON = 2.220446049250313e-16;
const fround = Math.fround;

function resolveParams(params?: Partial<LbphParams>): LbphParams {
  const p: LbphParams = { ...LBPH_DEFAULTS, ...params };
  for (const k of ['radius', 'neighbors', 'gridX', 'gridY'] as const) {
    if (!Number.isInteger(p[k]) || p[k] < 1) throw new Error(`LBPH: ${k} must be a positive integer, got ${p[k]}`);
  }
  // 2^neighbors bins per cell; OpenCV shifts an int, so 31 is its hard limit. 16 keeps memory sane.
  if (p.neighbors > 16) throw new Error(`LBPH: neighbors must be <= 16, got ${p.neighbors}`);
  // NaN is allowed, as in OpenCV: nothing is ever below it, so every prediction is -1.
  if (typeof p.threshold !== 'number') throw new Error('LBPH: threshold must be a number');
  return p;
}

// ---------------------------------------------------------------- sampling pattern

/**
 * Per neighbour: the four corner offsets (relative to the centre, in rows/cols) and float32 tables
 * of weight * value for value 0..255, so the C++ `w * src` float products become lookups.
 */
interface Sampler {
  radius: number;
  neighbors: number;
  dy: Int32Array; // 4 per neighbour: fy, fy, cy, cy
  dx: Int32Array; // 4 per neighbour: fx, cx, fx, cx
  products: Float32Array; // [n][corner][value]
  /**
   * Per neighbour, the corner (0..3) whose weight is exactly 1 while the other three together
   * weigh < 2^-40 (the axis-aligned samples, whose cos/sin leftovers are ~1e-16), else -1.
   * For those the float sum is the corner's value when it is >= 1, and a tiny non-negative number
   * when it is 0, so the OpenCV test `t > c || |t - c| < FLT_EPSILON` is exactly `value >= c`.
   */
  exactCorner: Int8Array;
}

const samplerCache = new Map<string, Sampler>();

function getSampler(radius: number, neighbors: number): Sampler {
  const key = `${radius},${neighbors}`;
  let s = samplerCache.get(key);
  if (s) return s;
  const dy = new Int32Array(neighbors * 4);
  const dx = new Int32Array(neighbors * 4);
  const products = new Float32Array(neighbors * 4 * 256);
  const exactCorner = new Int8Array(neighbors).fill(-1);
  for (let n = 0; n < neighbors; n++) {
    // Same expression order as lbph_faces.cpp: double trig, then cast to float.
    const angle = (2.0 * Math.PI * n) / fround(neighbors);
    const x = fround(radius * Math.cos(angle));
    const y = fround(-radius * Math.sin(angle));
    const fx = Math.floor(x);
    const fy = Math.floor(y);
    const cx = Math.ceil(x);
    const cy = Math.ceil(y);
    const ty = fround(y - fy);
    const tx = fround(x - fx);
    const w = [fround(fround(1 - tx) * fround(1 - ty)), fround(tx * fround(1 - ty)), fround(fround(1 - tx) * ty), fround(tx * ty)];
    const corners = [
      [fy, fx],
      [fy, cx],
      [cy, fx],
      [cy, cx],
    ];
    for (let k = 0; k < 4; k++) {
      dy[n * 4 + k] = corners[k][0];
      dx[n * 4 + k] = corners[k][1];
      const base = (n * 4 + k) * 256;
      // float * small int is exact in double, so one fround gives the C++ float product.
      for (let v = 0; v < 256; v++) products[base + v] = fround(w[k] * v);
    }
    const main = w.indexOf(1);
    if (main >= 0 && w.reduce((sum, wk, k) => (k === main ? sum : sum + wk), 0) < 2 ** -40) exactCorner[n] = main;
  }
  s = { radius, neighbors, dy, dx, products, exactCorner };
  samplerCache.set(key, s);
  return s;
}

// ---------------------------------------------------------------- LBP + spatial histogram counts

interface Geometry {
  cellW: number;
  cellH: number;
  bins: number;
  size: number; // gridX * gridY * bins
}

function geometry(img: GrayImage, p: LbphParams): Geometry {
  const { width, height, data } = img;
  if (!Number.isInteger(width) || !Number.isInteger(height) || data.length !== width * height) {
    throw new Error(`LBPH: image data length ${data.length} does not match ${width}x${height}`);
  }
  const lbpW = width - 2 * p.radius;
  const lbpH = height - 2 * p.radius;
  const cellW = Math.floor(lbpW / p.gridX);
  const cellH = Math.floor(lbpH / p.gridY);
  if (lbpW <= 0 || lbpH <= 0 || cellW < 1 || cellH < 1) {
    throw new Error(`LBPH: image ${width}x${height} is too small for radius ${p.radius} and a ${p.gridX}x${p.gridY} grid`);
  }
  const bins = 1 << p.neighbors;
  return { cellW, cellH, bins, size: p.gridX * p.gridY * bins };
}

/**
 * Adds each covered pixel's LBP code to `counts[cell * bins + code]`. Only the pixels inside the
 * grid are computed: OpenCV's integer cell sizes drop the right/bottom remainder of the LBP image.
 */
function accumulateCodes(img: GrayImage, p: LbphParams, g: Geometry, counts: Int32Array): void {
  const { width, data } = img;
  const r = p.radius;
  const nb = p.neighbors;
  const s = getSampler(r, nb);
  const { products } = s;
  // Exact (axis-aligned) neighbours: one offset and bit each; the others: four offsets + table base.
  const exOff: number[] = [];
  const exBit: number[] = [];
  const inOff: number[] = [];
  const inBit: number[] = [];
  const inTab: number[] = [];
  for (let n = 0; n < nb; n++) {
    const k = s.exactCorner[n];
    if (k >= 0) {
      exOff.push(s.dy[n * 4 + k] * width + s.dx[n * 4 + k]);
      exBit.push(1 << n);
    } else {
      for (let c = 0; c < 4; c++) inOff.push(s.dy[n * 4 + c] * width + s.dx[n * 4 + c]);
      inBit.push(1 << n);
      inTab.push(n * 1024);
    }
  }
  const eOff = Int32Array.from(exOff);
  const eBit = Int32Array.from(exBit);
  const iOff = Int32Array.from(inOff);
  const iBit = Int32Array.from(inBit);
  const iTab = Int32Array.from(inTab);
  const ne = eOff.length;
  const ni = iBit.length;

  const coveredW = g.cellW * p.gridX;
  const coveredH = g.cellH * p.gridY;
  const colCell = new Int32Array(coveredW);
  for (let x = 0; x < coveredW; x++) colCell[x] = Math.floor(x / g.cellW) * g.bins;
  const rowStride = p.gridX * g.bins;

  if (ne === 4 && ni === 4) {
    unrolled4x4(data, width, r, coveredW, coveredH, g.cellH, rowStride, colCell, counts, eOff, eBit, iOff, iBit, iTab, products);
    return;
  }
  for (let y = 0; y < coveredH; y++) {
    const rowBase = Math.floor(y / g.cellH) * rowStride;
    let pos = (y + r) * width + r;
    for (let x = 0; x < coveredW; x++, pos++) {
      const c = data[pos];
      let code = 0;
      for (let e = 0; e < ne; e++) if (data[pos + eOff[e]] >= c) code |= eBit[e];
      for (let i = 0, o = 0; i < ni; i++, o += 4) {
        const t0 = iTab[i];
        const p0 = products[t0 + data[pos + iOff[o]]];
        const p1 = products[t0 + 256 + data[pos + iOff[o + 1]]];
        const p2 = products[t0 + 512 + data[pos + iOff[o + 2]]];
        const p3 = products[t0 + 768 + data[pos + iOff[o + 3]]];
        // The double sum is within 1e-4 of the float32 one (t <= 255), so only near-ties need
        // the exact ((w1*a + w2*b) + w3*c) + w4*d in float32 that the C++ computes.
        const d = p0 + p1 + p2 + p3 - c;
        if (d > 1e-3) code |= iBit[i];
        else if (d > -1e-3) {
          const t = fround(fround(fround(p0 + p1) + p2) + p3);
          if (t > c || Math.abs(fround(t - c)) < FLT_EPSILON) code |= iBit[i];
        }
      }
      counts[rowBase + colCell[x] + code]++;
    }
  }
}

/** {@link accumulateCodes} for 4 exact + 4 interpolated neighbours (radius 1, 8 neighbours), unrolled. */
function unrolled4x4(
  data: Uint8Array,
  width: number,
  r: number,
  coveredW: number,
  coveredH: number,
  cellH: number,
  rowStride: number,
  colCell: Int32Array,
  counts: Int32Array,
  eOff: Int32Array,
  eBit: Int32Array,
  iOff: Int32Array,
  iBit: Int32Array,
  iTab: Int32Array,
  products: Float32Array,
): void {
  const [e0, e1, e2, e3] = eOff;
  const [b0, b1, b2, b3] = eBit;
  const [c0, c1, c2, c3] = iBit;
  const t = (i: number, k: number) => products.subarray(iTab[i] + k * 256, iTab[i] + k * 256 + 256);
  const [A0, A1, A2, A3] = [t(0, 0), t(0, 1), t(0, 2), t(0, 3)];
  const [B0, B1, B2, B3] = [t(1, 0), t(1, 1), t(1, 2), t(1, 3)];
  const [C0, C1, C2, C3] = [t(2, 0), t(2, 1), t(2, 2), t(2, 3)];
  const [D0, D1, D2, D3] = [t(3, 0), t(3, 1), t(3, 2), t(3, 3)];
  const [a0, a1, a2, a3, bb0, bb1, bb2, bb3, cc0, cc1, cc2, cc3, d0, d1, d2, d3] = iOff;
  for (let y = 0; y < coveredH; y++) {
    const rowBase = Math.floor(y / cellH) * rowStride;
    let pos = (y + r) * width + r;
    for (let x = 0; x < coveredW; x++, pos++) {
      const c = data[pos];
      let code = 0;
      if (data[pos + e0] >= c) code |= b0;
      if (data[pos + e1] >= c) code |= b1;
      if (data[pos + e2] >= c) code |= b2;
      if (data[pos + e3] >= c) code |= b3;
      code |= interpBit(A0[data[pos + a0]], A1[data[pos + a1]], A2[data[pos + a2]], A3[data[pos + a3]], c, c0);
      code |= interpBit(B0[data[pos + bb0]], B1[data[pos + bb1]], B2[data[pos + bb2]], B3[data[pos + bb3]], c, c1);
      code |= interpBit(C0[data[pos + cc0]], C1[data[pos + cc1]], C2[data[pos + cc2]], C3[data[pos + cc3]], c, c2);
      code |= interpBit(D0[data[pos + d0]], D1[data[pos + d1]], D2[data[pos + d2]], D3[data[pos + d3]], c, c3);
      counts[rowBase + colCell[x] + code]++;
    }
  }
}

/** `bit` when OpenCV's interpolated sample counts as >= the centre (see accumulateCodes), else 0. */
function interpBit(p0: number, p1: number, p2: number, p3: number, c: number, bit: number): number {
  const d = p0 + p1 + p2 + p3 - c;
  if (d > 1e-3) return bit;
  if (d < -1e-3) return 0;
  const t = fround(fround(fround(p0 + p1) + p2) + p3);
  return t > c || Math.abs(fround(t - c)) < FLT_EPSILON ? bit : 0;
}

/** OpenCV's histc normalisation: `hist /= total` runs as convertTo with a float32 scale 1/total. */
function cellScale(g: Geometry): number {
  return fround(1 / (g.cellW * g.cellH));
}

/**
 * The spatial LBP histogram OpenCV's LBPH computes for an image (`elbp` then `spatial_histogram`):
 * `gridX * gridY * 2^neighbors` float32 values, identical to `getHistograms()` entries.
 */
export function lbpHistogram(img: GrayImage, params?: Partial<LbphParams>): Float32Array {
  const p = resolveParams(params);
  const g = geometry(img, p);
  const counts = new Int32Array(g.size);
  accumulateCodes(img, p, g, counts);
  const scale = cellScale(g);
  const out = new Float32Array(g.size);
  for (let i = 0; i < g.size; i++) if (counts[i]) out[i] = counts[i] * scale; // Float32Array store rounds
  return out;
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
