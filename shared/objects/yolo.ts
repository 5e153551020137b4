/**
 * YOLO (Ultralytics YOLOv5 / YOLOv8 ONNX exports) pre- and post-processing, runtime-free so the server
 * (onnxruntime-node) and the browser (onnxruntime-web) share it. Same contract as the NanoDet detector: boxes
 * in the submitted image's integer pixels, per-class NMS, confidence strictly above the threshold kept.
 *
 * Preprocessing follows Ultralytics' `LetterBox` (ultralytics/data/augment.py) as its predictor uses it:
 * scale by r = min(inH / h, inW / w), resize to round(w·r) x round(h·r) with INTER_LINEAR, centre it with
 * top = round(dh/2 - 0.1), left = round(dw/2 - 0.1), fill with 114; then RGB, NCHW, float /255.
 * Boxes come back through `scale_boxes` (ultralytics/utils/ops.py): subtract that pad, divide by r, clip.
 *
 * Output layouts (ultralytics/ultralytics#751): YOLOv5 `[1, N, 85]`, rows of cx, cy, w, h (input pixels),
 * objectness, 80 class scores, score = objectness · class score; YOLOv8 `[1, 84, N]`, the same box then 80
 * class scores, transposed, no objectness. The class count defaults to COCO's 80; custom models (e.g. a PPE
 * detector, `[1, 4 + nc, N]`) pass theirs as `numClasses` and use `decodeYoloBoxes`, which names no class.
 */
import { resizeRgbBilinear } from '../image/resize-rgb.js';
import type { RgbImage } from '../image/types.js';
import { OBJECT_CLASSES, OBJECT_CLASS_COUNT } from './classes.js';
import { nmsPerClass } from './nms.js';
import type { DetectedObject } from './types.js';

export type YoloLayout = 'v5' | 'v8';

/** A declared tensor dimension: a size, or a symbolic name (dynamic axis). */
export type YoloDim = number | string;

/** COCO's 80 classes, in the order Ultralytics' COCO models output them. */
export const YOLO_NUM_CLASSES = OBJECT_CLASS_COUNT;
/** Ultralytics' letterbox fill, per channel, in 8-bit units. */
export const YOLO_PAD_VALUE = 114;
export const YOLO_DEFAULT_CONFIDENCE = 0.4;
export const YOLO_DEFAULT_IOU = 0.4;
/** Input size used when the model's height/width are symbolic (the project's detector contract). */
export const YOLO_DEFAULT_INPUT_SIZE = 416;
/** Ultralytics' `max_det` default. */
export const YOLO_DEFAULT_MAX_DETECTIONS = 300;

/** A model that cannot be used as a YOLO detector; the message says what was found and what is supported. */
export class YoloModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YoloModelError';
  }
}

/** The output layouts this module decodes for `numClasses` classes, in words (for error messages). */
export function yoloSupportedOutputs(numClasses: number = YOLO_NUM_CLASSES): string {
  const scores = numClasses === YOLO_NUM_CLASSES ? `${numClasses} COCO class scores` : `${numClasses} class scores`;
  return (
    `supported: [1, N, ${5 + numClasses}] (YOLOv5: cx, cy, w, h, objectness, ${scores}) or ` +
    `[1, ${4 + numClasses}, N] (YOLOv8: cx, cy, w, h, ${scores})`
  );
}

/** The output layouts this module decodes for the 80 COCO classes, in words (for error messages). */
export const YOLO_SUPPORTED_OUTPUTS = yoloSupportedOutputs();

function formatShape(shape: readonly YoloDim[]): string {
  return `[${shape.map((d) => (typeof d === 'string' ? JSON.stringify(d) : String(d))).join(', ')}]`;
}

/** A positive concrete size, or undefined for a symbolic/unknown one (ORT reports -1 or names for those). */
function known(d: YoloDim | undefined): number | undefined {
  return typeof d === 'number' && d > 0 ? d : undefined;
}

/**
 * Input width and height from the model's declared input shape, `[1, 3, H, W]`; a symbolic H or W takes
 * `fallbackSize`. Throws YoloModelError for any other shape.
 */
export function resolveYoloInputSize(
  shape: readonly YoloDim[],
  fallbackSize: number = YOLO_DEFAULT_INPUT_SIZE,
): { width: number; height: number } {
  const batch = known(shape[0]);
  const channels = known(shape[1]);
  if (shape.length !== 4 || (batch !== undefined && batch !== 1) || (channels !== undefined && channels !== 3)) {
    throw new YoloModelError(`unsupported YOLO input shape ${formatShape(shape)}: supported: [1, 3, H, W] (one RGB image, NCHW float)`);
  }
  return { height: known(shape[2]) ?? fallbackSize, width: known(shape[3]) ?? fallbackSize };
}

/**
 * Which layout an output shape is, for a model of `numClasses` classes (default COCO's 80). Symbolic
 * dimensions are allowed where they do not decide the layout; returns undefined when they do (checked again
 * on the real output). Throws YoloModelError when no supported layout can match.
 */
export function yoloLayoutOf(shape: readonly YoloDim[], numClasses: number = YOLO_NUM_CLASSES): YoloLayout | undefined {
  if (shape.length === 0) return undefined; // shape not declared
  const batch = known(shape[0]);
  const bad = () => new YoloModelError(`unsupported YOLO output shape ${formatShape(shape)}; ${yoloSupportedOutputs(numClasses)}`);
  if (shape.length !== 3 || (batch !== undefined && batch !== 1)) throw bad();
  const rows = known(shape[1]);
  const cols = known(shape[2]);
  // [1, 84, 85] would fit both; real exports have thousands of candidates, so prefer the current (v8) layout.
  if (rows === 4 + numClasses) return 'v8';
  if (cols === 5 + numClasses) return 'v5';
  if (rows !== undefined && cols !== undefined) throw bad();
  return undefined;
}

/** Python's round(): half to even, which Ultralytics' letterbox arithmetic uses. */
function pyRound(v: number): number {
  const f = Math.floor(v);
  const diff = v - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Where the image sits inside the model input. */
export interface Letterbox {
  /** The submitted image's size. */
  srcWidth: number;
  srcHeight: number;
  /** The model input's size. */
  inputWidth: number;
  inputHeight: number;
  /** Input pixels per image pixel. */
  scale: number;
  /** The resized image's size inside the input. */
  resizedWidth: number;
  resizedHeight: number;
  /** Left and top padding, input pixels. */
  padX: number;
  padY: number;
}

export function letterbox(srcWidth: number, srcHeight: number, inputWidth: number, inputHeight: number): Letterbox {
  if (!(srcWidth > 0 && srcHeight > 0)) throw new RangeError(`cannot letterbox an empty image (${srcWidth}x${srcHeight})`);
  const scale = Math.min(inputHeight / srcHeight, inputWidth / srcWidth);
  const resizedWidth = Math.max(1, pyRound(srcWidth * scale));
  const resizedHeight = Math.max(1, pyRound(srcHeight * scale));
  const padX = pyRound((inputWidth - resizedWidth) / 2 - 0.1);
  const padY = pyRound((inputHeight - resizedHeight) / 2 - 0.1);
  return { srcWidth, srcHeight, inputWidth, inputHeight, scale, resizedWidth, resizedHeight, padX, padY };
}

/**
 * The model input for `img`: letterboxed to `inputWidth` x `inputHeight`, RGB planes (NCHW, batch 1),
 * values 0..1. Alpha, if any, is dropped.
 */
export function yoloPreprocess(
  img: RgbImage,
  inputWidth: number,
  inputHeight: number,
): { data: Float32Array; dims: [1, 3, number, number]; letterbox: Letterbox } {
  const box = letterbox(img.width, img.height, inputWidth, inputHeight);
  const resized =
    box.resizedWidth === img.width && box.resizedHeight === img.height && img.channels === 3
      ? img
      : resizeRgbBilinear(img, box.resizedWidth, box.resizedHeight);
  const plane = inputWidth * inputHeight;
  const data = new Float32Array(3 * plane).fill(YOLO_PAD_VALUE / 255);
  const px = resized.data;
  for (let y = 0; y < box.resizedHeight; y++) {
    let o = (y + box.padY) * inputWidth + box.padX;
    let p = y * box.resizedWidth * 3;
    for (let x = 0; x < box.resizedWidth; x++, o++, p += 3) {
      data[o] = px[p] / 255;
      data[plane + o] = px[p + 1] / 255;
      data[2 * plane + o] = px[p + 2] / 255;
    }
  }
  return { data, dims: [1, 3, inputHeight, inputWidth], letterbox: box };
}

export interface YoloDecodeOptions {
  /** Keep detections scoring strictly above this (0..1); default 0.4. */
  confidence?: number;
  /** Per-class NMS IoU threshold; default 0.4. */
  iou?: number;
  /** At most this many detections, best first; default 300. */
  maxDetections?: number;
}

export interface YoloBoxDecodeOptions extends YoloDecodeOptions {
  /** Classes the model scores (the output has 4 + numClasses rows for YOLOv8); default COCO's 80. */
  numClasses?: number;
}

/** A decoded detection without a class name: integer box in the submitted image's pixels, clipped to it. */
export interface YoloBox {
  /** Index of the model's class. */
  class_id: number;
  /** Score, 0..1. */
  confidence: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Decodes a YOLOv5/v8 output (layout detected from `dims`) of a model with `numClasses` classes into
 * detections in the submitted image's pixels: best class per candidate, confidence threshold, box mapped back
 * through the letterbox and clipped, per-class NMS, rounded to whole pixels. Sorted by confidence, best first.
 */
export function decodeYoloBoxes(
  output: ArrayLike<number>,
  dims: readonly number[],
  box: Letterbox,
  options: YoloBoxDecodeOptions = {},
): YoloBox[] {
  const numClasses = options.numClasses ?? YOLO_NUM_CLASSES;
  const layout = yoloLayoutOf(dims, numClasses);
  const n = layout === 'v8' ? dims[2] : layout === 'v5' ? dims[1] : -1;
  if (layout === undefined || !(n >= 0) || output.length !== dims.reduce((a, b) => a * b, 1)) {
    throw new YoloModelError(
      `unsupported YOLO output: shape ${formatShape(dims)} with ${output.length} values; ${yoloSupportedOutputs(numClasses)}`,
    );
  }
  const confidence = options.confidence ?? YOLO_DEFAULT_CONFIDENCE;
  const iou = options.iou ?? YOLO_DEFAULT_IOU;
  const maxDetections = options.maxDetections ?? YOLO_DEFAULT_MAX_DETECTIONS;
  // v5 rows are contiguous (stride 5 + numClasses per candidate); v8 attributes are planes of n values.
  const attrStride = layout === 'v8' ? n : 1;
  const candStride = layout === 'v8' ? 1 : 5 + numClasses;
  const firstClass = layout === 'v8' ? 4 : 5;

  const candidates: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const base = i * candStride;
    const objectness = layout === 'v5' ? output[base + 4 * attrStride] : 1;
    // Class scores are at most 1, so no class can pass when objectness alone does not (YOLOv5 does the same).
    if (!(objectness > confidence)) continue;
    let best = -1;
    let bestScore = -Infinity;
    for (let c = 0; c < numClasses; c++) {
      const s = output[base + (firstClass + c) * attrStride];
      if (s > bestScore) {
        bestScore = s;
        best = c;
      }
    }
    const score = objectness * bestScore;
    if (!(score > confidence)) continue;
    const cx = output[base];
    const cy = output[base + attrStride];
    const w = output[base + 2 * attrStride];
    const h = output[base + 3 * attrStride];
    const rect = toImagePixels(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, box);
    if (rect) candidates.push({ class_id: best, confidence: Math.min(1, score), ...rect });
  }
  // NMS on the unrounded boxes, as Ultralytics does (its IoU is the same in input or image pixels).
  return nmsPerClass(candidates, iou, maxDetections).map((c) => {
    const x = Math.round(c.x);
    const y = Math.round(c.y);
    return { class_id: c.class_id, confidence: c.confidence, x, y, w: Math.round(c.x + c.w) - x, h: Math.round(c.y + c.h) - y };
  });
}

/** `decodeYoloBoxes` for a COCO model (80 classes), each detection named from OBJECT_CLASSES. */
export function decodeYolo(
  output: ArrayLike<number>,
  dims: readonly number[],
  box: Letterbox,
  options: YoloDecodeOptions = {},
): DetectedObject[] {
  return decodeYoloBoxes(output, dims, box, { ...options, numClasses: YOLO_NUM_CLASSES }).map((b) => ({
    class_id: b.class_id,
    class_name: OBJECT_CLASSES[b.class_id],
    confidence: b.confidence,
    x: b.x,
    y: b.y,
    w: b.w,
    h: b.h,
  }));
}

interface Candidate {
  class_id: number;
  confidence: number;
  /** Image pixels, clipped, not rounded. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Input-pixel corners → a clipped box in image pixels; null when nothing of it would be left after rounding
 * to whole pixels, or when values are not finite.
 */
function toImagePixels(
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  box: Letterbox,
): { x: number; y: number; w: number; h: number } | null {
  const clip = (v: number, hi: number) => (v < 0 ? 0 : Math.min(v, hi));
  const left = clip((x1 - box.padX) / box.scale, box.srcWidth);
  const top = clip((y1 - box.padY) / box.scale, box.srcHeight);
  const right = clip((x2 - box.padX) / box.scale, box.srcWidth);
  const bottom = clip((y2 - box.padY) / box.scale, box.srcHeight);
  // Also false for NaN.
  if (!(Math.round(right) > Math.round(left) && Math.round(bottom) > Math.round(top))) return null;
  return { x: left, y: top, w: right - left, h: bottom - top };
}
