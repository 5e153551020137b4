/**
 * Geometry of the embedding pipeline, free of tfjs: where to crop a face for the nets, and the aligned face
 * box computed from the 68 landmarks. The aligned box follows face-api's descriptor pipeline
 * (`withFaceDescriptor()` aligns with its dlib-style rule), so our descriptors equal face-api's own for
 * the same face: a square whose side is the mean eye-to-mouth distance / 0.45, placed so the centre of
 * (left eye, right eye, mouth) sits at 50% across and 43% down.
 */
import type { GrayImage, Rect, RgbImage } from '../image/types.js';

/** Number of landmark points of the 68-point model; landmark arrays hold 2 * 68 interleaved x, y values. */
export const LANDMARK_POINTS = 68;

const REL_X = 0.5;
const REL_Y = 0.43;
const REL_SCALE = 0.45;

/** An RGB crop as float32 values 0..255, the layout tfjs expects for a [height, width, 3] tensor. */
export interface FloatRgbCrop {
  width: number;
  height: number;
  data: Float32Array;
}

function isRgb(image: GrayImage | RgbImage): image is RgbImage {
  return 'channels' in image;
}

/**
 * `rect` clipped to the image and floored, the way face-api clips a box before slicing it out of the image
 * tensor. Width or height is <= 0 when nothing of the box lies inside the image.
 */
export function clipBox(rect: Rect, imageWidth: number, imageHeight: number): Rect {
  const x = Math.max(rect.x, 0);
  const y = Math.max(rect.y, 0);
  const width = Math.min(rect.x + rect.width - x, imageWidth - x);
  const height = Math.min(rect.y + rect.height - y, imageHeight - y);
  return { x: Math.floor(x), y: Math.floor(y), width: Math.floor(width), height: Math.floor(height) };
}

/**
 * Copies the pixels of `rect` (already clipped, integer) as float RGB. Gray images are replicated to three
 * channels (the descriptor net was trained on colour, so prefer passing RGB); alpha is dropped.
 */
export function cropRgbFloat(image: GrayImage | RgbImage, rect: Rect): FloatRgbCrop {
  const { x: x0, y: y0, width, height } = rect;
  if (!(width > 0 && height > 0) || x0 < 0 || y0 < 0 || x0 + width > image.width || y0 + height > image.height) {
    throw new RangeError(`face crop ${JSON.stringify(rect)} is empty or outside the ${image.width}x${image.height} image`);
  }
  const out = new Float32Array(width * height * 3);
  const src = image.data;
  const ch = isRgb(image) ? image.channels : 1;
  if (src.length < image.width * image.height * ch) {
    throw new RangeError(`image data has ${src.length} bytes, need ${image.width * image.height * ch}`);
  }
  let o = 0;
  for (let y = y0; y < y0 + height; y++) {
    let i = (y * image.width + x0) * ch;
    for (let x = 0; x < width; x++, i += ch) {
      if (ch === 1) {
        const v = src[i];
        out[o++] = v;
        out[o++] = v;
        out[o++] = v;
      } else {
        out[o++] = src[i];
        out[o++] = src[i + 1];
        out[o++] = src[i + 2];
      }
    }
  }
  return { width, height, data: out };
}

/** The mean of landmarks `from` (inclusive) to `to` (exclusive) of a flat [x0, y0, x1, y1, ...] list. */
export function centre(landmarks: ArrayLike<number>, from: number, to: number): [number, number] {
  let sx = 0;
  let sy = 0;
  for (let i = from; i < to; i++) {
    sx += landmarks[2 * i];
    sy += landmarks[2 * i + 1];
  }
  return [sx / (to - from), sy / (to - from)];
}

/**
 * The aligned face box (integer, not yet clipped to the image) from 68 landmarks in image pixels,
 * interleaved x0, y0, x1, y1, ... Points 36-41 are the left eye, 42-47 the right eye, 48-67 the mouth.
 *
 * `crop` is the size of the box the landmarks were found in. face-api limits the aligned box to
 * `crop.width + x` by `crop.height + y`, which only bites when the box was clamped to the image's top or
 * left edge; kept so descriptors of faces at the edge still equal face-api's.
 */
export function alignedFaceBox(landmarks: ArrayLike<number>, crop?: { width: number; height: number }): Rect {
  if (landmarks.length !== 2 * LANDMARK_POINTS) {
    throw new RangeError(`expected ${2 * LANDMARK_POINTS} landmark values, got ${landmarks.length}`);
  }
  const leftEye = centre(landmarks, 36, 42);
  const rightEye = centre(landmarks, 42, 48);
  const mouth = centre(landmarks, 48, 68);
  const dist = (p: [number, number]) => Math.sqrt((mouth[0] - p[0]) ** 2 + (mouth[1] - p[1]) ** 2);
  const size = Math.floor((dist(leftEye) + dist(rightEye)) / 2 / REL_SCALE);
  const cx = (leftEye[0] + rightEye[0] + mouth[0]) / 3;
  const cy = (leftEye[1] + rightEye[1] + mouth[1]) / 3;
  // Clamping the corner (not the size) shifts a box that sticks out top-left back into the image, as face-api does.
  const x = Math.floor(Math.max(0, cx - REL_X * size));
  const y = Math.floor(Math.max(0, cy - REL_Y * size));
  const width = crop ? Math.min(size, crop.width + x) : size;
  const height = crop ? Math.min(size, crop.height + y) : size;
  return { x, y, width, height };
}
