/**
 * The pure half of the `remote` face engine, shared by the server and the browser: what an SSD face detector
 * served over KServe V2 expects (face-detection-retail-0005: input N x 3 x H x W, BGR, 0..255; output
 * 1 x 1 x N x 7 rows `[image_id, label, conf, x_min, y_min, x_max, y_max]`, coordinates normalised to 0..1),
 * read from the model's descriptor rather than assumed, and the conversions either side of the wire.
 */
import { resizeRgbBilinear } from '../image/resize-rgb.js';
import type { Rect, RgbImage } from '../image/types.js';
import type { ModelMetadata } from '../kserve/protocol.js';

/** Input side used when the descriptor leaves H or W dynamic (-1): the size the model was trained at. */
export const SSD_DEFAULT_SIZE = 300;
/** Values per detection row. */
export const SSD_ROW = 7;

/** What the client needs to know about a served SSD model, taken from its descriptor. */
export interface SsdContract {
  inputName: string;
  inputDatatype: 'FP32';
  /** Concrete request shape `[1, 3, height, width]`. */
  inputShape: [1, 3, number, number];
  width: number;
  height: number;
  outputName: string;
}

/** A descriptor that does not describe an SSD detector this engine can drive. */
export class SsdContractError extends Error {}

/**
 * Checks a model descriptor and derives the request layout: first input 4-d NCHW with 3 channels, FP32; first
 * output with 7 values per row. Dynamic dims (-1) become batch 1 and H = W = 300.
 */
export function ssdContract(meta: ModelMetadata): SsdContract {
  const input = meta.inputs[0];
  const output = meta.outputs[0];
  if (!input || !output) throw new SsdContractError(`model "${meta.name}" declares no input or no output`);
  if (input.shape.length !== 4) {
    throw new SsdContractError(`input "${input.name}" has shape [${input.shape}], expected 4 dimensions (N, C, H, W)`);
  }
  const [n, c, h, w] = input.shape;
  if (c !== 3 && c !== -1) {
    throw new SsdContractError(`input "${input.name}" has shape [${input.shape}], expected 3 channels in dimension 1 (NCHW)`);
  }
  if (n !== 1 && n !== -1) throw new SsdContractError(`input "${input.name}" has batch ${n}, expected 1`);
  if (input.datatype !== 'FP32') {
    throw new SsdContractError(`input "${input.name}" has datatype ${input.datatype}, expected FP32`);
  }
  if (output.shape.length < 2 || output.shape[output.shape.length - 1] !== SSD_ROW) {
    throw new SsdContractError(`output "${output.name}" has shape [${output.shape}], expected the last dimension to be 7`);
  }
  const height = h === -1 ? SSD_DEFAULT_SIZE : h;
  const width = w === -1 ? SSD_DEFAULT_SIZE : w;
  if (height <= 0 || width <= 0) throw new SsdContractError(`input "${input.name}" has an empty spatial size [${input.shape}]`);
  return { inputName: input.name, inputDatatype: 'FP32', inputShape: [1, 3, height, width], width, height, outputName: output.name };
}

/** Interleaved 8-bit RGB(A) of exactly width x height to planar BGR floats 0..255, NCHW with N = 1. */
export function rgbToNchwBgr(img: RgbImage): Float32Array {
  const plane = img.width * img.height;
  const out = new Float32Array(plane * 3);
  const cin = img.channels;
  const d = img.data;
  for (let i = 0, p = 0; i < plane; i++, p += cin) {
    out[i] = d[p + 2];
    out[plane + i] = d[p + 1];
    out[2 * plane + i] = d[p];
  }
  return out;
}

/** Resizes any RGB(A) image to the model's input size and lays it out as the request tensor. */
export function ssdInput(img: RgbImage, contract: Pick<SsdContract, 'width' | 'height'>): Float32Array {
  const sized =
    img.width === contract.width && img.height === contract.height && img.channels === 3
      ? img
      : resizeRgbBilinear(img, contract.width, contract.height);
  return rgbToNchwBgr(sized);
}

/** One detection in pixels of the submitted image. */
export interface SsdDetection extends Rect {
  confidence: number;
  label: number;
}

/**
 * Detection rows to boxes in pixels of an image of `imageWidth` x `imageHeight`: stops at the first row with
 * image_id -1 (the end marker of OpenVINO's DetectionOutput), keeps conf >= threshold, clips to the image and
 * drops boxes left empty. Sorted by confidence, highest first.
 */
export function parseSsdDetections(data: ArrayLike<number>, imageWidth: number, imageHeight: number, threshold: number): SsdDetection[] {
  if (data.length % SSD_ROW !== 0) throw new RangeError(`detection output holds ${data.length} values, not a multiple of 7`);
  const out: SsdDetection[] = [];
  for (let r = 0; r < data.length; r += SSD_ROW) {
    const imageId = data[r];
    if (imageId === -1) break;
    const confidence = data[r + 2];
    if (!(confidence >= threshold)) continue;
    const clampX = (v: number) => Math.min(imageWidth, Math.max(0, Math.round(v * imageWidth)));
    const clampY = (v: number) => Math.min(imageHeight, Math.max(0, Math.round(v * imageHeight)));
    const x0 = clampX(data[r + 3]);
    const y0 = clampY(data[r + 4]);
    const x1 = clampX(data[r + 5]);
    const y1 = clampY(data[r + 6]);
    if (![x0, y0, x1, y1].every(Number.isFinite) || x1 <= x0 || y1 <= y0) continue;
    out.push({ x: x0, y: y0, width: x1 - x0, height: y1 - y0, confidence, label: data[r + 1] });
  }
  return out.sort((a, b) => b.confidence - a.confidence);
}

/** Intersection over union of two rectangles (0 when either is empty). */
export function iou(a: Rect, b: Rect): number {
  const ix = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = ix * iy;
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}
