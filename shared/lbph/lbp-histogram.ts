/**
 * The LBP histogram of a face, as OpenCV 4.6's `cv::face::LBPHFaceRecognizer` computes it (lbph.ts): the circular
 * LBP with float32 bilinear sampling and the per-cell histograms in float32, bit for bit.
 *
 * Runs unchanged in Node and browsers (no Node APIs, no DOM).
 */
import type { GrayImage } from '../image/types.js';

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

const FLT_EPSILON = 1.1920928955078125e-7; // 2^-23
const fround = Math.fround;

export function resolveParams(params?: Partial<LbphParams>): LbphParams {
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

export interface Geometry {
  cellW: number;
  cellH: number;
  bins: number;
  size: number; // gridX * gridY * bins
}

export function geometry(img: GrayImage, p: LbphParams): Geometry {
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
export function accumulateCodes(img: GrayImage, p: LbphParams, g: Geometry, counts: Int32Array): void {
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
export function cellScale(g: Geometry): number {
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
