/**
 * The cascade evaluated in JavaScript, as OpenCV 4.6's CPU path does it: node records laid out for one integral
 * row stride (compile), setWindow's variance normalisation (the integrals are integrals.ts'), the
 * per-tree passes over a level's windows (float feature values, double stage sums) and the level scan with
 * OpenCV's window order and stage-0 skip rule. The fallback where the generated WebAssembly (haar-wasm.ts) cannot
 * run, and the reference it is tested against. Part of haar-cascade.ts.
 */
import { resizeLinearExactInto } from '../../image/ops.js';
import type { GrayImage } from '../../image/types.js';
import { integrals, tiltedIntegral } from './integrals.js';
import type { HaarCascade } from './parse.js';

const fround = Math.fround;

/**
 * Node records laid out for one integral-image row stride (OpenCV's OptFeature::setOffsets), one cache-friendly
 * record per node: `ints` holds 12 rect-corner offsets relative to the window's top-left integral cell (tilted ones
 * shifted to the tilted plane) and the two children; `floats` holds the 3 weights and the threshold.
 */
interface Compiled {
  stride: number;
  tiltedOffset: number;
  /** INTS per node: o0..o11, left, right (trees: >= 0 next node, < 0 ~leaf index). */
  ints: Int32Array;
  /** FLOATS per node: w0, w1, w2, threshold. */
  floats: Float64Array;
  /** Per tree: its root node. */
  treeRoot: Int32Array;
  /**
   * True when every feature has integer weights and sum(|w| * 255 * rect area) < 2^24: then each float operation in
   * w0*s0 + w1*s1 (+ w2*s2) is exact, and the feature value can be computed in integers before the one rounding
   * that matters, float(value * varianceNormFactor).
   */
  integerWeights: boolean;
}

const INTS = 16;
const FLOATS = 8;
const compiledCache = new WeakMap<HaarCascade, Compiled>();

function compile(c: HaarCascade, stride: number, tiltedOffset: number): Compiled {
  const cached = compiledCache.get(c);
  if (cached && cached.stride === stride && cached.tiltedOffset === tiltedOffset) return cached;
  const n = c.nodeFeature.length;
  const ints = new Int32Array(n * INTS);
  const floats = new Float64Array(n * FLOATS);
  for (let i = 0; i < n; i++) {
    const f = c.nodeFeature[i];
    const tilted = c.featureTilted[f] !== 0;
    for (let r = 0; r < 3; r++) {
      const b = f * 12 + r * 4;
      const x = c.featureRects[b];
      const y = c.featureRects[b + 1];
      const rw = c.featureRects[b + 2];
      const rh = c.featureRects[b + 3];
      const o = i * INTS + r * 4;
      floats[i * FLOATS + r] = c.featureWeights[f * 3 + r];
      if (tilted) {
        // CV_TILTED_OFS: (x, y), (x - h, y + h), (x + w, y + w), (x + w - h, y + w + h)
        ints[o] = tiltedOffset + x + stride * y;
        ints[o + 1] = tiltedOffset + x - rh + stride * (y + rh);
        ints[o + 2] = tiltedOffset + x + rw + stride * (y + rw);
        ints[o + 3] = tiltedOffset + x + rw - rh + stride * (y + rw + rh);
      } else {
        // CV_SUM_OFS: (x, y), (x + w, y), (x, y + h), (x + w, y + h)
        ints[o] = x + stride * y;
        ints[o + 1] = x + rw + stride * y;
        ints[o + 2] = x + stride * (y + rh);
        ints[o + 3] = x + rw + stride * (y + rh);
      }
    }
    floats[i * FLOATS + 3] = c.nodeThreshold[i];
  }
  const treeRoot = new Int32Array(c.treeCount);
  for (let t = 0; t < c.treeCount; t++) {
    const root = c.treeNodeStart[t];
    const leaf = c.treeLeafStart[t];
    treeRoot[t] = root;
    for (let node = root; node < c.treeNodeStart[t + 1]; node++) {
      const link = (child: number): number => (child > 0 ? root + child : ~(leaf - child));
      ints[node * INTS + 12] = link(c.nodeLeft[node]);
      ints[node * INTS + 13] = link(c.nodeRight[node]);
    }
    if (c.maxNodesPerTree === 1) {
      // OpenCV's Stump takes the tree's first two leaves as left/right, whatever the node's links say.
      ints[root * INTS + 12] = ~leaf;
      ints[root * INTS + 13] = ~(leaf + 1);
    }
  }
  let integerWeights = true;
  for (let f = 0; f < c.featureCount; f++) {
    let bound = 0;
    for (let r = 0; r < 3; r++) {
      const w = c.featureWeights[f * 3 + r];
      if (!Number.isInteger(w)) integerWeights = false;
      // A tilted w x h rect covers about 2wh pixels; 4wh bounds it safely.
      const cover = c.featureTilted[f] ? 4 : 1;
      bound += Math.abs(w) * 255 * cover * c.featureRects[f * 12 + r * 4 + 2] * c.featureRects[f * 12 + r * 4 + 3];
    }
    if (bound >= 2 ** 24) integerWeights = false;
  }
  const out: Compiled = { stride, tiltedOffset, ints, floats, treeRoot, integerWeights };
  compiledCache.set(c, out);
  return out;
}

// Buffers reused across levels and calls (detection is synchronous, so one set per module is enough).
let levelImage = new Uint8Array(0);
let ii = new Int32Array(0); // sum plane, then (tilted cascades) the tilted plane
let sq = new Int32Array(0);

/** Geometry of one pyramid level for the window scan. */
export interface Level {
  workW: number;
  workH: number;
  ystep: number;
}

/**
 * setWindow's variance normalisation on the inner rect (1, 1, w - 2, h - 2): returns float(1 / sqrt(nf)), or 0 when
 * setWindow rejects the window (nf <= 0, or a near-flat window with area * factor >= 0.1).
 */
function windowNorm(S: Int32Array, Q: Int32Array, p: number, n0: number, n1: number, n2: number, n3: number, area: number): number {
  const valsum = (S[p + n0] - S[p + n1] - S[p + n2] + S[p + n3]) | 0;
  const valsq = ((Q[p + n0] - Q[p + n1] - Q[p + n2] + Q[p + n3]) | 0) >>> 0;
  const nf = area * valsq - valsum * valsum;
  if (!(nf > 0)) return 0;
  const vnf = fround(1 / Math.sqrt(nf));
  return area * vnf < 0.1 ? vnf : 0;
}

function isStumpNode(I: Int32Array, node: number): boolean {
  return I[node * INTS + 12] < 0 && I[node * INTS + 13] < 0;
}

/** Leaf reached from `node` for the window at `p` (generic path for nodes below a tree's root). */
function walk(I: Int32Array, F: Float64Array, S: Int32Array, node: number, p: number, vnf: number): number {
  for (;;) {
    const o = node * INTS;
    const fo = node * FLOATS;
    let v = fround(
      fround(F[fo] * ((S[p + I[o]] - S[p + I[o + 1]] - S[p + I[o + 2]] + S[p + I[o + 3]]) | 0)) +
        fround(F[fo + 1] * ((S[p + I[o + 4]] - S[p + I[o + 5]] - S[p + I[o + 6]] + S[p + I[o + 7]]) | 0)),
    );
    const w2 = F[fo + 2];
    if (w2 !== 0) v = fround(v + fround(w2 * ((S[p + I[o + 8]] - S[p + I[o + 9]] - S[p + I[o + 10]] + S[p + I[o + 11]]) | 0)));
    const next = fround(v * vnf) < F[fo + 3] ? I[o + 12] : I[o + 13];
    if (next < 0) return ~next;
    node = next;
  }
}

// Per-tree passes over a list of windows (P: integral offsets, V: norm factors, T: stage sums). Each is a small
// monomorphic loop with the tree's nodes in locals; feature value = float(w0*s0 + w1*s1 [+ w2*s2]) * norm, in float.

function passStump2(
  S: Int32Array,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
  I: Int32Array,
  F: Float64Array,
  o: number,
  fo: number,
  lv: number,
  rv: number,
): void {
  const a0 = I[o],
    a1 = I[o + 1],
    a2 = I[o + 2],
    a3 = I[o + 3];
  const b0 = I[o + 4],
    b1 = I[o + 5],
    b2 = I[o + 6],
    b3 = I[o + 7];
  const w0 = F[fo],
    w1 = F[fo + 1],
    thr = F[fo + 3];
  for (let i = 0; i < n; i++) {
    const p = P[i];
    const v = fround(
      fround(w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0)) +
        fround(w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0)),
    );
    T[i] += fround(v * V[i]) < thr ? lv : rv;
  }
}

function passStump3(
  S: Int32Array,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
  I: Int32Array,
  F: Float64Array,
  o: number,
  fo: number,
  lv: number,
  rv: number,
): void {
  const a0 = I[o],
    a1 = I[o + 1],
    a2 = I[o + 2],
    a3 = I[o + 3];
  const b0 = I[o + 4],
    b1 = I[o + 5],
    b2 = I[o + 6],
    b3 = I[o + 7];
  const c0 = I[o + 8],
    c1 = I[o + 9],
    c2 = I[o + 10],
    c3 = I[o + 11];
  const w0 = F[fo],
    w1 = F[fo + 1],
    w2 = F[fo + 2],
    thr = F[fo + 3];
  for (let i = 0; i < n; i++) {
    const p = P[i];
    let v = fround(
      fround(w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0)) +
        fround(w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0)),
    );
    v = fround(v + fround(w2 * ((S[p + c0] - S[p + c1] - S[p + c2] + S[p + c3]) | 0)));
    T[i] += fround(v * V[i]) < thr ? lv : rv;
  }
}

/** Root with one leaf and one stump child (every tree of frontalface_alt2). */
function passChain(
  S: Int32Array,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
  I: Int32Array,
  F: Float64Array,
  o: number,
  fo: number,
  q: number,
  fq: number,
  leafOnLeft: boolean,
  rootLeaf: number,
  cl: number,
  cr: number,
): void {
  const a0 = I[o],
    a1 = I[o + 1],
    a2 = I[o + 2],
    a3 = I[o + 3];
  const b0 = I[o + 4],
    b1 = I[o + 5],
    b2 = I[o + 6],
    b3 = I[o + 7];
  const c0 = I[o + 8],
    c1 = I[o + 9],
    c2 = I[o + 10],
    c3 = I[o + 11];
  const w0 = F[fo],
    w1 = F[fo + 1],
    w2 = F[fo + 2],
    thr = F[fo + 3];
  const d0 = I[q],
    d1 = I[q + 1],
    d2 = I[q + 2],
    d3 = I[q + 3];
  const e0 = I[q + 4],
    e1 = I[q + 5],
    e2 = I[q + 6],
    e3 = I[q + 7];
  const f0 = I[q + 8],
    f1 = I[q + 9],
    f2 = I[q + 10],
    f3 = I[q + 11];
  const u0 = F[fq],
    u1 = F[fq + 1],
    u2 = F[fq + 2],
    cthr = F[fq + 3];
  for (let i = 0; i < n; i++) {
    const p = P[i];
    const vnf = V[i];
    let v = fround(
      fround(w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0)) +
        fround(w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0)),
    );
    if (w2 !== 0) v = fround(v + fround(w2 * ((S[p + c0] - S[p + c1] - S[p + c2] + S[p + c3]) | 0)));
    if (fround(v * vnf) < thr === leafOnLeft) {
      T[i] += rootLeaf;
    } else {
      let u = fround(
        fround(u0 * ((S[p + d0] - S[p + d1] - S[p + d2] + S[p + d3]) | 0)) +
          fround(u1 * ((S[p + e0] - S[p + e1] - S[p + e2] + S[p + e3]) | 0)),
      );
      if (u2 !== 0) u = fround(u + fround(u2 * ((S[p + f0] - S[p + f1] - S[p + f2] + S[p + f3]) | 0)));
      T[i] += fround(u * vnf) < cthr ? cl : cr;
    }
  }
}

// Integer-weight variants (Compiled.integerWeights): exact integer feature sums, branch-free leaf selection.
const pick2 = new Float64Array(2);
const pick4 = new Float64Array(4);

function passStumpInt(
  S: Int32Array,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
  I: Int32Array,
  F: Float64Array,
  o: number,
  fo: number,
  lv: number,
  rv: number,
): void {
  const a0 = I[o],
    a1 = I[o + 1],
    a2 = I[o + 2],
    a3 = I[o + 3];
  const b0 = I[o + 4],
    b1 = I[o + 5],
    b2 = I[o + 6],
    b3 = I[o + 7];
  const c0 = I[o + 8],
    c1 = I[o + 9],
    c2 = I[o + 10],
    c3 = I[o + 11];
  const w0 = F[fo],
    w1 = F[fo + 1],
    w2 = F[fo + 2],
    thr = F[fo + 3];
  const pick = pick2;
  pick[1] = lv; // value < threshold
  pick[0] = rv;
  for (let i = 0; i < n; i++) {
    const p = P[i];
    let v = w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0) + w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0);
    if (w2 !== 0) v += w2 * ((S[p + c0] - S[p + c1] - S[p + c2] + S[p + c3]) | 0);
    T[i] += pick[+(fround(v * V[i]) < thr)];
  }
}

/** Root with one leaf and one stump child, both evaluated for every window so the leaf choice needs no branch. */
function passChainInt(
  S: Int32Array,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
  I: Int32Array,
  F: Float64Array,
  o: number,
  fo: number,
  q: number,
  fq: number,
  leafOnLeft: boolean,
  rootLeaf: number,
  cl: number,
  cr: number,
): void {
  const a0 = I[o],
    a1 = I[o + 1],
    a2 = I[o + 2],
    a3 = I[o + 3];
  const b0 = I[o + 4],
    b1 = I[o + 5],
    b2 = I[o + 6],
    b3 = I[o + 7];
  const c0 = I[o + 8],
    c1 = I[o + 9],
    c2 = I[o + 10],
    c3 = I[o + 11];
  const w0 = F[fo],
    w1 = F[fo + 1],
    w2 = F[fo + 2],
    thr = F[fo + 3];
  const d0 = I[q],
    d1 = I[q + 1],
    d2 = I[q + 2],
    d3 = I[q + 3];
  const e0 = I[q + 4],
    e1 = I[q + 5],
    e2 = I[q + 6],
    e3 = I[q + 7];
  const f0 = I[q + 8],
    f1 = I[q + 9],
    f2 = I[q + 10],
    f3 = I[q + 11];
  const u0 = F[fq],
    u1 = F[fq + 1],
    u2 = F[fq + 2],
    cthr = F[fq + 3];
  // Index: (root value < threshold) * 2 + (child value < threshold).
  const pick = pick4;
  pick[leafOnLeft ? 2 : 0] = rootLeaf;
  pick[leafOnLeft ? 3 : 1] = rootLeaf;
  pick[leafOnLeft ? 0 : 2] = cr;
  pick[leafOnLeft ? 1 : 3] = cl;
  for (let i = 0; i < n; i++) {
    const p = P[i];
    const vnf = V[i];
    let v = w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0) + w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0);
    if (w2 !== 0) v += w2 * ((S[p + c0] - S[p + c1] - S[p + c2] + S[p + c3]) | 0);
    let u = u0 * ((S[p + d0] - S[p + d1] - S[p + d2] + S[p + d3]) | 0) + u1 * ((S[p + e0] - S[p + e1] - S[p + e2] + S[p + e3]) | 0);
    if (u2 !== 0) u += u2 * ((S[p + f0] - S[p + f1] - S[p + f2] + S[p + f3]) | 0);
    T[i] += pick[(+(fround(v * vnf) < thr) << 1) | +(fround(u * vnf) < cthr)];
  }
}

/** Any tree shape. */
function passGeneric(
  S: Int32Array,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
  I: Int32Array,
  F: Float64Array,
  root: number,
  leaves: Float64Array,
): void {
  for (let i = 0; i < n; i++) T[i] += leaves[walk(I, F, S, root, P[i], V[i])];
}

/**
 * Stage sums of stage `si` for windows P[0..n) into T. Windows go breadth-first, tree by tree; each window still adds
 * its trees in OpenCV's order, so the double sums are identical to the depth-first evaluation.
 */
function stageSums(
  c: HaarCascade,
  k: Compiled,
  S: Int32Array,
  si: number,
  n: number,
  P: Int32Array,
  V: Float64Array,
  T: Float64Array,
): void {
  const I = k.ints;
  const F = k.floats;
  const leaves = c.leafValues;
  T.fill(0, 0, n);
  const tEnd = c.stageTreeStart[si + 1];
  for (let t = c.stageTreeStart[si]; t < tEnd; t++) {
    const root = k.treeRoot[t];
    const o = root * INTS;
    const fo = root * FLOATS;
    const left = I[o + 12];
    const right = I[o + 13];
    if (left < 0 && right < 0) {
      if (k.integerWeights) passStumpInt(S, n, P, V, T, I, F, o, fo, leaves[~left], leaves[~right]);
      else if (F[fo + 2] === 0) passStump2(S, n, P, V, T, I, F, o, fo, leaves[~left], leaves[~right]);
      else passStump3(S, n, P, V, T, I, F, o, fo, leaves[~left], leaves[~right]);
    } else if (left < 0 !== right < 0 && isStumpNode(I, left < 0 ? right : left)) {
      const leafOnLeft = left < 0;
      const ch = leafOnLeft ? right : left;
      const chain = k.integerWeights ? passChainInt : passChain;
      chain(
        S,
        n,
        P,
        V,
        T,
        I,
        F,
        o,
        fo,
        ch * INTS,
        ch * FLOATS,
        leafOnLeft,
        leaves[~(leafOnLeft ? left : right)],
        leaves[~I[ch * INTS + 12]],
        leaves[~I[ch * INTS + 13]],
      );
    } else {
      passGeneric(S, n, P, V, T, I, F, root, leaves);
    }
  }
}

// Window lists reused across levels and calls.
let rowP = new Int32Array(0);
let rowV = new Float64Array(0);
let rowT = new Float64Array(0);
let lvlP = new Int32Array(0);
let lvlV = new Float64Array(0);
let lvlT = new Float64Array(0);

/**
 * All windows of one pyramid level (CascadeClassifierInvoker::operator() + runAt): rows top to bottom, x step
 * `ystep`, and after a window rejected by stage 0 the next position is skipped. Accepted windows' integral offsets
 * are appended to `out` in OpenCV's order.
 */
function scanLevel(c: HaarCascade, k: Compiled, S: Int32Array, Q: Int32Array, lv: Level, out: number[]): void {
  const stride = k.stride;
  const nw = c.windowWidth - 2;
  const nh = c.windowHeight - 2;
  const n0 = 1 + stride;
  const n1 = 1 + nw + stride;
  const n2 = 1 + stride * (1 + nh);
  const n3 = 1 + nw + stride * (1 + nh);
  const area = nw * nh;
  const { workW, workH, ystep } = lv;
  const perRow = Math.ceil(workW / ystep);
  const perLevel = perRow * Math.ceil(workH / ystep);
  if (rowP.length < perRow) {
    rowP = new Int32Array(perRow);
    rowV = new Float64Array(perRow);
    rowT = new Float64Array(perRow);
  }
  if (lvlP.length < perLevel) {
    lvlP = new Int32Array(perLevel);
    lvlV = new Float64Array(perLevel);
    lvlT = new Float64Array(perLevel);
  }
  const thr0 = c.stageThreshold[0];
  let m = 0; // windows that passed stage 0
  for (let y = 0; y < workH; y += ystep) {
    const rowStart = y * stride;
    // Stage 0 for every window that passes setWindow, including ones the skip rule drops below.
    let n = 0;
    for (let x = 0; x < workW; x += ystep) {
      const vnf = windowNorm(S, Q, rowStart + x, n0, n1, n2, n3, area);
      if (vnf !== 0) {
        rowP[n] = rowStart + x;
        rowV[n] = vnf;
        n++;
      }
    }
    if (n === 0) continue;
    stageSums(c, k, S, 0, n, rowP, rowV, rowT);
    // Replay OpenCV's walk: a stage-0 rejection (result 0) skips the next position; setWindow failures do not.
    let j = 0;
    for (let x = 0; x < workW && j < n; x += ystep) {
      const p = rowStart + x;
      while (j < n && rowP[j] < p) j++;
      if (j === n || rowP[j] !== p) continue;
      if (rowT[j] < thr0) {
        x += ystep;
      } else {
        lvlP[m] = p;
        lvlV[m] = rowV[j];
        m++;
      }
      j++;
    }
  }
  // Remaining stages breadth-first over the level's survivors, keeping their order.
  for (let si = 1; si < c.stageCount && m > 0; si++) {
    stageSums(c, k, S, si, m, lvlP, lvlV, lvlT);
    const thr = c.stageThreshold[si];
    let kept = 0;
    for (let i = 0; i < m; i++) {
      if (!(lvlT[i] < thr)) {
        lvlP[kept] = lvlP[i];
        lvlV[kept] = lvlV[i];
        kept++;
      }
    }
    m = kept;
  }
  for (let i = 0; i < m; i++) out.push(lvlP[i]);
}

/** One pyramid level of `lw` x `lh`, in a pyramid whose first level is w0 x h0. */
export interface LevelScan extends Level {
  w0: number;
  h0: number;
  lw: number;
  lh: number;
}

/**
 * The level in JavaScript: resized into `levelImage`, its integrals, the window scan; accepted windows' cells go to
 * `out`. Returns the integral row stride.
 */
export function scanLevelJs(cascade: HaarCascade, gray: GrayImage, lv: LevelScan, out: number[]): number {
  const stride = lv.w0 + 1;
  const plane = stride * (lv.h0 + 1);
  const tiltedOffset = cascade.hasTiltedFeatures ? plane : 0;
  if (levelImage.length < lv.w0 * lv.h0) levelImage = new Uint8Array(lv.w0 * lv.h0);
  if (ii.length < plane * (cascade.hasTiltedFeatures ? 2 : 1)) ii = new Int32Array(plane * (cascade.hasTiltedFeatures ? 2 : 1));
  if (sq.length < plane) sq = new Int32Array(plane);
  const k = compile(cascade, stride, tiltedOffset);
  resizeLinearExactInto(gray.data, gray.width, gray.height, levelImage, lv.lw, lv.lh);
  integrals(levelImage, lv.lw, lv.lh, stride, ii, sq);
  if (cascade.hasTiltedFeatures) tiltedIntegral(levelImage, lv.lw, lv.lh, ii, tiltedOffset, stride);
  scanLevel(cascade, k, ii, sq, lv, out);
  return stride;
}
