/**
 * OpenCV-compatible Haar cascade face/object detector (CascadeClassifier::detectMultiScale of OpenCV 4.6, CPU path),
 * bit-exact by construction: same pyramid sizes and INTER_LINEAR_EXACT resize, the same integral images, the same
 * float/double arithmetic in feature evaluation (Math.fround where OpenCV uses float), the same window stepping and
 * the same groupRectangles. Runs unchanged in Node and browsers. Each level's resize, integrals and window scan run
 * as WebAssembly generated from the cascade (haar-wasm.ts, with SIMD where the host has it), else in the
 * JavaScript below; every path is tested against OpenCV's boxes.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { cvRound, resizeLinearExactInto } from '../image/ops.js';
import type { GrayImage, Rect } from '../image/types.js';
import { haarKernel, haarWasmUnavailable, type HaarKernel } from './haar-wasm.js';

/** Raised for malformed or unsupported cascade files. */
export class HaarCascadeParseError extends Error {
  constructor(message: string) {
    super(`Haar cascade: ${message}`);
    this.name = 'HaarCascadeParseError';
  }
}

/**
 * A parsed cascade in flat typed arrays (OpenCV's CascadeClassifierImpl::Data + HaarEvaluator features).
 * Values that OpenCV keeps as float are stored already rounded to float32 (in Float64Arrays, for exact comparisons).
 */
export interface HaarCascade {
  /** Detection window, e.g. 20x20 or 24x24. */
  readonly windowWidth: number;
  readonly windowHeight: number;
  readonly stageCount: number;
  readonly treeCount: number;
  readonly featureCount: number;
  /** 1 for stump cascades (default, alt), 2 for alt2. */
  readonly maxNodesPerTree: number;
  readonly hasTiltedFeatures: boolean;
  /** Per stage: float(stageThreshold) - 1e-5f, as OpenCV stores it. */
  readonly stageThreshold: Float64Array;
  /** Trees of stage s are [stageTreeStart[s], stageTreeStart[s + 1]). */
  readonly stageTreeStart: Int32Array;
  /** Nodes of tree t are [treeNodeStart[t], treeNodeStart[t + 1]); its leaves start at treeLeafStart[t]. */
  readonly treeNodeStart: Int32Array;
  readonly treeLeafStart: Int32Array;
  readonly nodeFeature: Int32Array;
  readonly nodeThreshold: Float64Array;
  /** Child links as in the XML: > 0 is a node index within the tree, <= 0 is minus a leaf index. */
  readonly nodeLeft: Int32Array;
  readonly nodeRight: Int32Array;
  readonly leafValues: Float64Array;
  /** Per feature 3 rects of [x, y, width, height] (unused rects are zero with weight 0). */
  readonly featureRects: Int32Array;
  readonly featureWeights: Float64Array;
  readonly featureTilted: Uint8Array;
}

export interface DetectOptions {
  /** Pyramid step, > 1. Default 1.1. */
  scaleFactor?: number;
  /** Neighbours a group needs to be kept (groupRectangles threshold); 0 returns the raw candidates. Default 5. */
  minNeighbors?: number;
  /** Smallest window. Default 30x30. */
  minSize?: { width: number; height: number };
  /** Largest window; 0 or missing means the image size. */
  maxSize?: { width: number; height: number };
}

// ------------------------------------------------------------------------------------------------ parsing

type XmlNode = Record<string, unknown>;

const fround = Math.fround;
const THRESHOLD_EPS = fround(1e-5);

function asObject(v: unknown, what: string): XmlNode {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HaarCascadeParseError(`${what} is missing or not an element`);
  return v as XmlNode;
}

function asList(v: unknown, what: string): unknown[] {
  if (v === undefined || v === '') throw new HaarCascadeParseError(`${what} is missing or empty`);
  return Array.isArray(v) ? v : [v];
}

function textOf(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (v !== null && typeof v === 'object' && typeof (v as XmlNode)['#text'] === 'string') return (v as XmlNode)['#text'] as string;
  throw new HaarCascadeParseError(`${what} is missing or not text`);
}

function numbers(v: unknown, what: string): number[] {
  const tokens = textOf(v, what).trim().split(/\s+/).filter((t) => t.length > 0);
  return tokens.map((t) => {
    const n = Number(t);
    if (!Number.isFinite(n)) throw new HaarCascadeParseError(`${what}: "${t}" is not a number`);
    return n;
  });
}

function oneNumber(v: unknown, what: string): number {
  const ns = numbers(v, what);
  if (ns.length !== 1) throw new HaarCascadeParseError(`${what}: expected one number, got ${ns.length}`);
  return ns[0];
}

function oneInt(v: unknown, what: string): number {
  const n = oneNumber(v, what);
  if (!Number.isInteger(n)) throw new HaarCascadeParseError(`${what}: expected an integer, got ${n}`);
  return n;
}

/**
 * Parse an OpenCV cascade XML of the current format (`<cascade type_id="opencv-cascade-classifier">`, as written by
 * opencv_traincascade and shipped in opencv-data): BOOST stages, HAAR features (upright and tilted), stumps or trees.
 * Throws HaarCascadeParseError with a clear message otherwise.
 */
export function parseHaarCascade(xml: string): HaarCascade {
  if (typeof xml !== 'string' || xml.trim() === '') throw new HaarCascadeParseError('empty input');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new HaarCascadeParseError(`malformed XML at line ${line}, column ${col}: ${msg}`);
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    isArray: (name) => name === '_',
  });
  const doc = asObject(parser.parse(xml), 'document');
  const storage = doc['opencv_storage'];
  if (storage === undefined) throw new HaarCascadeParseError('not an OpenCV FileStorage XML (no <opencv_storage> root)');
  const storageObj = asObject(storage, '<opencv_storage>');
  const topName = Object.keys(storageObj).find((k) => !k.startsWith('@') && k !== '#text');
  if (topName === undefined) throw new HaarCascadeParseError('<opencv_storage> is empty');
  const top = asObject(storageObj[topName], `<${topName}>`);
  const typeId = top['@type_id'];
  if (typeId === 'opencv-haar-classifier') {
    throw new HaarCascadeParseError(
      `<${topName}> is an old-format cascade (type_id="opencv-haar-classifier"), which is not supported; ` +
        'convert it to the new format (e.g. with OpenCV 3.x opencv_haartraining/traincascade) first',
    );
  }
  if (typeId !== undefined && typeId !== 'opencv-cascade-classifier') {
    throw new HaarCascadeParseError(`unsupported type_id "${String(typeId)}" (expected "opencv-cascade-classifier")`);
  }
  const stageType = textOf(top['stageType'], '<stageType>').trim();
  if (stageType !== 'BOOST') throw new HaarCascadeParseError(`unsupported stageType "${stageType}" (only BOOST)`);
  const featureType = textOf(top['featureType'], '<featureType>').trim();
  if (featureType !== 'HAAR') {
    throw new HaarCascadeParseError(`unsupported featureType "${featureType}" (only HAAR; LBP and HOG are not implemented)`);
  }
  const windowWidth = oneInt(top['width'], '<width>');
  const windowHeight = oneInt(top['height'], '<height>');
  if (windowWidth < 3 || windowHeight < 3) throw new HaarCascadeParseError(`window ${windowWidth}x${windowHeight} is too small`);
  const featureParams = asObject(top['featureParams'], '<featureParams>');
  const maxCat = featureParams['maxCatCount'] === undefined ? 0 : oneInt(featureParams['maxCatCount'], '<maxCatCount>');
  if (maxCat !== 0) throw new HaarCascadeParseError(`categorical features (maxCatCount=${maxCat}) are not supported for HAAR`);

  // Features first, so node feature indices can be checked.
  const featuresNode = asObject(top['features'], '<features>');
  const featureList = asList(featuresNode['_'], '<features>');
  const nFeatures = featureList.length;
  const featureRects = new Int32Array(nFeatures * 12);
  const featureWeights = new Float64Array(nFeatures * 3);
  const featureTilted = new Uint8Array(nFeatures);
  let hasTiltedFeatures = false;
  featureList.forEach((f, fi) => {
    const what = `feature ${fi}`;
    const fo = asObject(f, what);
    const rects = asList(asObject(fo['rects'], `${what} <rects>`)['_'], `${what} <rects>`);
    if (rects.length < 1 || rects.length > 3) throw new HaarCascadeParseError(`${what} has ${rects.length} rects (1 to 3 supported)`);
    const tilted = fo['tilted'] === undefined ? 0 : oneInt(fo['tilted'], `${what} <tilted>`);
    featureTilted[fi] = tilted !== 0 ? 1 : 0;
    if (tilted !== 0) hasTiltedFeatures = true;
    rects.forEach((r, ri) => {
      const v = numbers(r, `${what} rect ${ri}`);
      if (v.length !== 5) throw new HaarCascadeParseError(`${what} rect ${ri}: expected "x y width height weight"`);
      const [x, y, w, h, weight] = v;
      if (![x, y, w, h].every(Number.isInteger)) throw new HaarCascadeParseError(`${what} rect ${ri}: non-integer geometry`);
      // Every corner the evaluator reads must lie inside the window's integral image.
      const inside = tilted
        ? x - h >= 0 && x + w <= windowWidth && y >= 0 && y + w + h <= windowHeight && w >= 0 && h >= 0
        : x >= 0 && y >= 0 && w >= 0 && h >= 0 && x + w <= windowWidth && y + h <= windowHeight;
      if (!inside) throw new HaarCascadeParseError(`${what} rect ${ri} (${x} ${y} ${w} ${h}) lies outside the ${windowWidth}x${windowHeight} window`);
      featureRects.set([x, y, w, h], fi * 12 + ri * 4);
      featureWeights[fi * 3 + ri] = fround(weight);
    });
  });

  const stagesNode = asObject(top['stages'], '<stages>');
  const stageList = asList(stagesNode['_'], '<stages>');
  const stageThreshold = new Float64Array(stageList.length);
  const stageTreeStart = new Int32Array(stageList.length + 1);
  const treeNodeStart: number[] = [];
  const treeLeafStart: number[] = [];
  const nodeFeature: number[] = [];
  const nodeThreshold: number[] = [];
  const nodeLeft: number[] = [];
  const nodeRight: number[] = [];
  const leafValues: number[] = [];
  let maxNodesPerTree = 0;
  stageList.forEach((s, si) => {
    const so = asObject(s, `stage ${si}`);
    stageThreshold[si] = fround(fround(oneNumber(so['stageThreshold'], `stage ${si} <stageThreshold>`)) - THRESHOLD_EPS);
    const weak = asList(asObject(so['weakClassifiers'], `stage ${si} <weakClassifiers>`)['_'], `stage ${si} <weakClassifiers>`);
    stageTreeStart[si] = treeNodeStart.length;
    weak.forEach((w, wi) => {
      const what = `stage ${si} tree ${wi}`;
      const wo = asObject(w, what);
      const inodes = numbers(wo['internalNodes'], `${what} <internalNodes>`);
      const leaves = numbers(wo['leafValues'], `${what} <leafValues>`);
      if (inodes.length === 0 || inodes.length % 4 !== 0) {
        throw new HaarCascadeParseError(`${what}: <internalNodes> must hold "left right featureIdx threshold" groups`);
      }
      const nodeCount = inodes.length / 4;
      if (leaves.length < nodeCount + 1) throw new HaarCascadeParseError(`${what}: ${nodeCount} nodes need ${nodeCount + 1} leaf values`);
      maxNodesPerTree = Math.max(maxNodesPerTree, nodeCount);
      treeNodeStart.push(nodeFeature.length);
      treeLeafStart.push(leafValues.length);
      for (let k = 0; k < nodeCount; k++) {
        const [left, right, feat, thr] = inodes.slice(k * 4, k * 4 + 4);
        if (!Number.isInteger(left) || !Number.isInteger(right) || !Number.isInteger(feat)) {
          throw new HaarCascadeParseError(`${what} node ${k}: left, right and featureIdx must be integers`);
        }
        if (feat < 0 || feat >= nFeatures) throw new HaarCascadeParseError(`${what} node ${k}: feature ${feat} out of range (0..${nFeatures - 1})`);
        for (const child of [left, right]) {
          // Children after their parent guarantee the tree walk ends.
          const ok = child > 0 ? child > k && child < nodeCount : -child < leaves.length;
          if (!ok) throw new HaarCascadeParseError(`${what} node ${k}: child ${child} is not a valid node or leaf`);
        }
        nodeLeft.push(left);
        nodeRight.push(right);
        nodeFeature.push(feat);
        nodeThreshold.push(fround(thr));
      }
      for (const v of leaves) leafValues.push(fround(v));
    });
  });
  stageTreeStart[stageList.length] = treeNodeStart.length;
  treeNodeStart.push(nodeFeature.length);

  return {
    windowWidth,
    windowHeight,
    stageCount: stageList.length,
    treeCount: treeLeafStart.length,
    featureCount: nFeatures,
    maxNodesPerTree,
    hasTiltedFeatures,
    stageThreshold,
    stageTreeStart,
    treeNodeStart: Int32Array.from(treeNodeStart),
    treeLeafStart: Int32Array.from(treeLeafStart),
    nodeFeature: Int32Array.from(nodeFeature),
    nodeThreshold: Float64Array.from(nodeThreshold),
    nodeLeft: Int32Array.from(nodeLeft),
    nodeRight: Int32Array.from(nodeRight),
    leafValues: Float64Array.from(leafValues),
    featureRects,
    featureWeights,
    featureTilted,
  };
}

// ------------------------------------------------------------------------------------------------ evaluation

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
let tiltWork = new Int32Array(0);

/** Integral and squared integral (int32, wrapping like OpenCV's CV_32S sqsum) of a w x h image into stride-wide planes. */
function integrals(img: Uint8Array, w: number, h: number, stride: number, sum: Int32Array, sqsum: Int32Array): void {
  for (let x = 0; x <= w; x++) {
    sum[x] = 0;
    sqsum[x] = 0;
  }
  for (let y = 0; y < h; y++) {
    const prev = y * stride;
    const row = prev + stride;
    const src = y * w;
    sum[row] = 0;
    sqsum[row] = 0;
    let s = 0;
    let q = 0;
    for (let x = 0; x < w; x++) {
      const v = img[src + x];
      s = (s + v) | 0;
      q = (q + v * v) | 0;
      sum[row + x + 1] = (sum[prev + x + 1] + s) | 0;
      sqsum[row + x + 1] = (sqsum[prev + x + 1] + q) | 0;
    }
  }
}

/**
 * OpenCV's tilted (45 degree) integral (cv::integral's third output) of a w x h image, written at `offset` into
 * `out` with row stride `stride`. Computed with the recurrence T(X,Y) = T(X-1,Y-1) + T(X+1,Y-1) - T(X,Y-2)
 * + I(X-1,Y-1) + I(X-1,Y-2) on a copy padded by h + 2 columns each side, so triangles reaching past the
 * image edges are summed correctly.
 */
export function tiltedIntegral(img: Uint8Array, w: number, h: number, out: Int32Array, offset: number, stride: number): void {
  const pad = h + 2;
  const pw = w + 1 + 2 * pad;
  const need = (h + 1) * pw;
  if (tiltWork.length < need) tiltWork = new Int32Array(need);
  const T = tiltWork;
  T.fill(0, 0, need);
  // Padded column p corresponds to tilted column X = p - pad; pixel column of I(X-1) is p - pad - 1.
  for (let Y = 1; Y <= h; Y++) {
    const r = Y * pw;
    const r1 = r - pw;
    const r2 = r1 - pw;
    const src1 = (Y - 1) * w; // row Y-1
    const src2 = (Y - 2) * w; // row Y-2
    for (let p = 1; p < pw - 1; p++) {
      const xi = p - pad - 1;
      const inside = xi >= 0 && xi < w;
      let v = T[r1 + p - 1] + T[r1 + p + 1];
      if (inside) v += img[src1 + xi];
      if (Y >= 2) {
        v -= T[r2 + p];
        if (inside) v += img[src2 + xi];
      }
      T[r + p] = v | 0;
    }
  }
  for (let Y = 0; Y <= h; Y++) {
    const src = Y * pw + pad;
    const dst = offset + Y * stride;
    for (let X = 0; X <= w; X++) out[dst + X] = T[src + X];
  }
}

/** Geometry of one pyramid level for the window scan. */
interface Level {
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

function passStump2(S: Int32Array, n: number, P: Int32Array, V: Float64Array, T: Float64Array, I: Int32Array, F: Float64Array, o: number, fo: number, lv: number, rv: number): void {
  const a0 = I[o], a1 = I[o + 1], a2 = I[o + 2], a3 = I[o + 3];
  const b0 = I[o + 4], b1 = I[o + 5], b2 = I[o + 6], b3 = I[o + 7];
  const w0 = F[fo], w1 = F[fo + 1], thr = F[fo + 3];
  for (let i = 0; i < n; i++) {
    const p = P[i];
    const v = fround(fround(w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0)) + fround(w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0)));
    T[i] += fround(v * V[i]) < thr ? lv : rv;
  }
}

function passStump3(S: Int32Array, n: number, P: Int32Array, V: Float64Array, T: Float64Array, I: Int32Array, F: Float64Array, o: number, fo: number, lv: number, rv: number): void {
  const a0 = I[o], a1 = I[o + 1], a2 = I[o + 2], a3 = I[o + 3];
  const b0 = I[o + 4], b1 = I[o + 5], b2 = I[o + 6], b3 = I[o + 7];
  const c0 = I[o + 8], c1 = I[o + 9], c2 = I[o + 10], c3 = I[o + 11];
  const w0 = F[fo], w1 = F[fo + 1], w2 = F[fo + 2], thr = F[fo + 3];
  for (let i = 0; i < n; i++) {
    const p = P[i];
    let v = fround(fround(w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0)) + fround(w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0)));
    v = fround(v + fround(w2 * ((S[p + c0] - S[p + c1] - S[p + c2] + S[p + c3]) | 0)));
    T[i] += fround(v * V[i]) < thr ? lv : rv;
  }
}

/** Root with one leaf and one stump child (every tree of frontalface_alt2). */
function passChain(
  S: Int32Array, n: number, P: Int32Array, V: Float64Array, T: Float64Array, I: Int32Array, F: Float64Array,
  o: number, fo: number, q: number, fq: number, leafOnLeft: boolean, rootLeaf: number, cl: number, cr: number,
): void {
  const a0 = I[o], a1 = I[o + 1], a2 = I[o + 2], a3 = I[o + 3];
  const b0 = I[o + 4], b1 = I[o + 5], b2 = I[o + 6], b3 = I[o + 7];
  const c0 = I[o + 8], c1 = I[o + 9], c2 = I[o + 10], c3 = I[o + 11];
  const w0 = F[fo], w1 = F[fo + 1], w2 = F[fo + 2], thr = F[fo + 3];
  const d0 = I[q], d1 = I[q + 1], d2 = I[q + 2], d3 = I[q + 3];
  const e0 = I[q + 4], e1 = I[q + 5], e2 = I[q + 6], e3 = I[q + 7];
  const f0 = I[q + 8], f1 = I[q + 9], f2 = I[q + 10], f3 = I[q + 11];
  const u0 = F[fq], u1 = F[fq + 1], u2 = F[fq + 2], cthr = F[fq + 3];
  for (let i = 0; i < n; i++) {
    const p = P[i];
    const vnf = V[i];
    let v = fround(fround(w0 * ((S[p + a0] - S[p + a1] - S[p + a2] + S[p + a3]) | 0)) + fround(w1 * ((S[p + b0] - S[p + b1] - S[p + b2] + S[p + b3]) | 0)));
    if (w2 !== 0) v = fround(v + fround(w2 * ((S[p + c0] - S[p + c1] - S[p + c2] + S[p + c3]) | 0)));
    if (fround(v * vnf) < thr === leafOnLeft) {
      T[i] += rootLeaf;
    } else {
      let u = fround(fround(u0 * ((S[p + d0] - S[p + d1] - S[p + d2] + S[p + d3]) | 0)) + fround(u1 * ((S[p + e0] - S[p + e1] - S[p + e2] + S[p + e3]) | 0)));
      if (u2 !== 0) u = fround(u + fround(u2 * ((S[p + f0] - S[p + f1] - S[p + f2] + S[p + f3]) | 0)));
      T[i] += fround(u * vnf) < cthr ? cl : cr;
    }
  }
}

// Integer-weight variants (Compiled.integerWeights): exact integer feature sums, branch-free leaf selection.
const pick2 = new Float64Array(2);
const pick4 = new Float64Array(4);

function passStumpInt(S: Int32Array, n: number, P: Int32Array, V: Float64Array, T: Float64Array, I: Int32Array, F: Float64Array, o: number, fo: number, lv: number, rv: number): void {
  const a0 = I[o], a1 = I[o + 1], a2 = I[o + 2], a3 = I[o + 3];
  const b0 = I[o + 4], b1 = I[o + 5], b2 = I[o + 6], b3 = I[o + 7];
  const c0 = I[o + 8], c1 = I[o + 9], c2 = I[o + 10], c3 = I[o + 11];
  const w0 = F[fo], w1 = F[fo + 1], w2 = F[fo + 2], thr = F[fo + 3];
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
  S: Int32Array, n: number, P: Int32Array, V: Float64Array, T: Float64Array, I: Int32Array, F: Float64Array,
  o: number, fo: number, q: number, fq: number, leafOnLeft: boolean, rootLeaf: number, cl: number, cr: number,
): void {
  const a0 = I[o], a1 = I[o + 1], a2 = I[o + 2], a3 = I[o + 3];
  const b0 = I[o + 4], b1 = I[o + 5], b2 = I[o + 6], b3 = I[o + 7];
  const c0 = I[o + 8], c1 = I[o + 9], c2 = I[o + 10], c3 = I[o + 11];
  const w0 = F[fo], w1 = F[fo + 1], w2 = F[fo + 2], thr = F[fo + 3];
  const d0 = I[q], d1 = I[q + 1], d2 = I[q + 2], d3 = I[q + 3];
  const e0 = I[q + 4], e1 = I[q + 5], e2 = I[q + 6], e3 = I[q + 7];
  const f0 = I[q + 8], f1 = I[q + 9], f2 = I[q + 10], f3 = I[q + 11];
  const u0 = F[fq], u1 = F[fq + 1], u2 = F[fq + 2], cthr = F[fq + 3];
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
function passGeneric(S: Int32Array, n: number, P: Int32Array, V: Float64Array, T: Float64Array, I: Int32Array, F: Float64Array, root: number, leaves: Float64Array): void {
  for (let i = 0; i < n; i++) T[i] += leaves[walk(I, F, S, root, P[i], V[i])];
}

/**
 * Stage sums of stage `si` for windows P[0..n) into T. Windows go breadth-first, tree by tree; each window still adds
 * its trees in OpenCV's order, so the double sums are identical to the depth-first evaluation.
 */
function stageSums(c: HaarCascade, k: Compiled, S: Int32Array, si: number, n: number, P: Int32Array, V: Float64Array, T: Float64Array): void {
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
    } else if ((left < 0) !== (right < 0) && isStumpNode(I, left < 0 ? right : left)) {
      const leafOnLeft = left < 0;
      const ch = leafOnLeft ? right : left;
      const chain = k.integerWeights ? passChainInt : passChain;
      chain(S, n, P, V, T, I, F, o, fo, ch * INTS, ch * FLOATS, leafOnLeft, leaves[~(leafOnLeft ? left : right)],
        leaves[~I[ch * INTS + 12]], leaves[~I[ch * INTS + 13]]);
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
interface LevelScan extends Level {
  w0: number;
  h0: number;
  lw: number;
  lh: number;
}

/**
 * The level in JavaScript: resized into `levelImage`, its integrals, the window scan; accepted windows' cells go to
 * `out`. Returns the integral row stride.
 */
function scanLevelJs(cascade: HaarCascade, gray: GrayImage, lv: LevelScan, out: number[]): number {
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

/** The same in the generated WebAssembly (haar-wasm.ts; `kernel.begin` was called for this image). Returns its row pitch. */
function scanLevelWasm(cascade: HaarCascade, kernel: HaarKernel, lv: LevelScan, out: number[]): number {
  kernel.level(lv.lw, lv.lh);
  if (cascade.hasTiltedFeatures) {
    const { pixels, cells } = kernel.views(lv.lw, lv.lh);
    tiltedIntegral(pixels, lv.lw, lv.lh, cells, kernel.tiltedOffset, kernel.pitch);
  }
  const found = kernel.scan(lv.workW, lv.workH, lv.ystep);
  for (let i = 0; i < found.length; i++) out.push(found[i]);
  return kernel.pitch;
}

function checkSize(s: { width: number; height: number } | undefined, what: string): void {
  if (s === undefined) return;
  if (!Number.isFinite(s.width) || !Number.isFinite(s.height) || s.width < 0 || s.height < 0) {
    throw new Error(`detectMultiScale: ${what} must be non-negative numbers`);
  }
}

/**
 * Which window scan runs: `auto` the generated WebAssembly one (haar-wasm.ts) with SIMD where the host can
 * compile it, else without, else the JavaScript one; `simd`, `wasm` (no SIMD) or `js` force one (tests compare
 * them). All give identical results.
 */
export type CascadeScan = 'auto' | 'simd' | 'wasm' | 'js';

/**
 * Multi-scale detection with OpenCV 4.6 `CascadeClassifier::detectMultiScale(gray, objects, scaleFactor,
 * minNeighbors, 0, minSize, maxSize)` semantics, on an 8-bit gray image. Returns boxes in OpenCV's order.
 */
export function detectMultiScale(cascade: HaarCascade, gray: GrayImage, options: DetectOptions = {}, scan: CascadeScan = 'auto'): Rect[] {
  const scaleFactor = options.scaleFactor ?? 1.1;
  const minNeighbors = options.minNeighbors ?? 5;
  const minSize = options.minSize ?? { width: 30, height: 30 };
  checkSize(options.minSize, 'minSize');
  checkSize(options.maxSize, 'maxSize');
  if (!(scaleFactor > 1) || !Number.isFinite(scaleFactor)) throw new Error(`detectMultiScale: scaleFactor must be > 1, got ${scaleFactor}`);
  if (!Number.isInteger(minNeighbors) || minNeighbors < 0) throw new Error(`detectMultiScale: minNeighbors must be an integer >= 0`);
  const imgW = gray.width;
  const imgH = gray.height;
  if (gray.data.length < imgW * imgH) throw new Error('detectMultiScale: image data is shorter than width * height');
  let maxW = options.maxSize?.width ?? 0;
  let maxH = options.maxSize?.height ?? 0;
  if (maxW === 0 || maxH === 0) {
    maxW = imgW;
    maxH = imgH;
  }
  const W0 = cascade.windowWidth;
  const H0 = cascade.windowHeight;

  // Scale list: the factor stays double while stepping, each level keeps it as float.
  const scales: number[] = [];
  if (imgW > 0 && imgH > 0) {
    for (let factor = 1; ; factor *= scaleFactor) {
      const ww = cvRound(W0 * factor);
      const wh = cvRound(H0 * factor);
      if (ww > maxW || wh > maxH || ww > imgW || wh > imgH) break;
      if (ww < minSize.width || wh < minSize.height) continue;
      scales.push(fround(factor));
    }
  }
  const candidates: Rect[] = [];
  if (scales.length > 0) {
    // One row stride for all levels (the first level is the largest), as OpenCV's shared buffer does.
    const w0 = cvRound(fround(imgW / scales[0]));
    const h0 = cvRound(fround(imgH / scales[0]));
    const kernel = scan === 'js' ? null : haarKernel(cascade, w0 + 1, scan !== 'wasm');
    if ((scan === 'wasm' || scan === 'simd') && !kernel) throw new Error(`detectMultiScale: ${haarWasmUnavailable()}`);
    if (scan === 'simd' && !kernel!.simd) throw new Error('detectMultiScale: this host has no WebAssembly SIMD');
    kernel?.begin(gray.data, imgW, imgH, w0, h0);
    const pts: number[] = [];
    for (const sc of scales) {
      const lw = cvRound(fround(imgW / sc));
      const lh = cvRound(fround(imgH / sc));
      const workW = Math.max(lw + 1 - W0, 0);
      const workH = Math.max(lh + 1 - H0, 0);
      if (workW === 0 || workH === 0) continue;
      pts.length = 0;
      const lv = { w0, h0, lw, lh, workW, workH, ystep: sc >= 2 ? 1 : 2 };
      const pitch = kernel ? scanLevelWasm(cascade, kernel, lv, pts) : scanLevelJs(cascade, gray, lv, pts);
      const winW = cvRound(fround(W0 * sc));
      const winH = cvRound(fround(H0 * sc));
      for (const p of pts) {
        const y = Math.floor(p / pitch);
        const x = p - y * pitch;
        // Window position back in image coordinates: int * float in float, then cvRound.
        candidates.push({ x: cvRound(fround(x * sc)), y: cvRound(fround(y * sc)), width: winW, height: winH });
      }
    }
  }
  const grouped = groupRectangles(candidates, minNeighbors, 0.2);
  // clipObjects: intersect with the image, drop empty results.
  const out: Rect[] = [];
  for (const r of grouped) {
    const x1 = Math.max(r.x, 0);
    const y1 = Math.max(r.y, 0);
    const w = Math.min(r.x + r.width, imgW) - x1;
    const h = Math.min(r.y + r.height, imgH) - y1;
    if (r.width > 0 && r.height > 0 && w > 0 && h > 0) out.push({ x: x1, y: y1, width: w, height: h });
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ grouping

/**
 * cv::groupRectangles(rectList, groupThreshold, eps): cluster with SimilarRects(eps) (cv::partition), average each
 * cluster, drop clusters with <= groupThreshold members and small clusters inside bigger ones.
 * groupThreshold <= 0 returns the input unchanged (a copy).
 */
export function groupRectangles(rects: readonly Rect[], groupThreshold: number, eps = 0.2): Rect[] {
  if (groupThreshold <= 0 || rects.length === 0) return rects.map((r) => ({ ...r }));
  const n = rects.length;
  // cv::partition: connected components of the similarity graph, classes numbered by first member.
  const parent = new Int32Array(n).map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]];
      i = parent[i];
    }
    return i;
  };
  for (let i = 0; i < n; i++) {
    const a = rects[i];
    for (let j = i + 1; j < n; j++) {
      const b = rects[j];
      const delta = eps * (Math.min(a.width, b.width) + Math.min(a.height, b.height)) * 0.5;
      if (
        Math.abs(a.x - b.x) <= delta &&
        Math.abs(a.y - b.y) <= delta &&
        Math.abs(a.x + a.width - b.x - b.width) <= delta &&
        Math.abs(a.y + a.height - b.y - b.height) <= delta
      ) {
        const ra = find(i);
        const rb = find(j);
        if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
      }
    }
  }
  const classOfRoot = new Int32Array(n).fill(-1);
  const labels = new Int32Array(n);
  let nclasses = 0;
  for (let i = 0; i < n; i++) {
    const r = find(i);
    if (classOfRoot[r] < 0) classOfRoot[r] = nclasses++;
    labels[i] = classOfRoot[r];
  }
  const sx = new Float64Array(nclasses);
  const sy = new Float64Array(nclasses);
  const sw = new Float64Array(nclasses);
  const sh = new Float64Array(nclasses);
  const count = new Int32Array(nclasses);
  for (let i = 0; i < n; i++) {
    const c = labels[i];
    sx[c] += rects[i].x;
    sy[c] += rects[i].y;
    sw[c] += rects[i].width;
    sh[c] += rects[i].height;
    count[c]++;
  }
  // Average: int sum times float(1/n) in float, then saturate_cast<int> (round half to even).
  const avg: Rect[] = [];
  for (let c = 0; c < nclasses; c++) {
    const s = fround(1 / count[c]);
    avg.push({
      x: cvRound(fround(fround(sx[c]) * s)),
      y: cvRound(fround(fround(sy[c]) * s)),
      width: cvRound(fround(fround(sw[c]) * s)),
      height: cvRound(fround(fround(sh[c]) * s)),
    });
  }
  const out: Rect[] = [];
  for (let i = 0; i < nclasses; i++) {
    const r1 = avg[i];
    const n1 = count[i];
    if (n1 <= groupThreshold) continue;
    let inside = false;
    for (let j = 0; j < nclasses; j++) {
      const n2 = count[j];
      if (j === i || n2 <= groupThreshold) continue;
      const r2 = avg[j];
      const dx = cvRound(r2.width * eps);
      const dy = cvRound(r2.height * eps);
      if (
        r1.x >= r2.x - dx &&
        r1.y >= r2.y - dy &&
        r1.x + r1.width <= r2.x + r2.width + dx &&
        r1.y + r1.height <= r2.y + r2.height + dy &&
        (n2 > Math.max(3, n1) || n1 < 3)
      ) {
        inside = true;
        break;
      }
    }
    if (!inside) out.push(r1);
  }
  return out;
}
