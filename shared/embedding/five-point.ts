/**
 * Five-point similarity alignment for descriptor nets that take a fixed-size, aligned face (faceres): five
 * points from the 68 landmarks (eye centres, nose tip, mouth corners), the least-squares similarity transform
 * (rotation, uniform scale, shift) onto a reference layout, and the warped crop sampled bilinearly.
 * Plain arithmetic on typed arrays, so Node and the browser feed the net the very same values.
 */
import type { GrayImage, RgbImage } from '../image/types.js';
import { centre, LANDMARK_POINTS } from './face-align.js';

/** x, y pairs. */
export type Point = readonly [number, number];

/**
 * The usual five-point layout of a 112 px aligned face (InsightFace/ArcFace): left eye, right eye, nose tip,
 * left and right mouth corner, as seen in the image.
 */
const REFERENCE_112: readonly Point[] = [
  [38.2946, 51.6963],
  [73.5318, 51.5014],
  [56.0252, 71.7366],
  [41.5493, 92.3655],
  [70.7299, 92.2041],
];

/**
 * The reference points for a `size` px crop, shrunk by `zoom` about the centre (zoom < 1 leaves more margin
 * around the face than the tight 112 px layout does).
 */
export function referencePoints(size: number, zoom = 1): Point[] {
  const s = size / 112;
  const c = size / 2;
  return REFERENCE_112.map(([x, y]) => [c + (x * s - c) * zoom, c + (y * s - c) * zoom]);
}

/** Eye centres (points 36-41, 42-47), nose tip (30), mouth corners (48, 54) of 68 interleaved landmarks. */
export function fivePoints(landmarks: ArrayLike<number>): Point[] {
  if (landmarks.length !== 2 * LANDMARK_POINTS) {
    throw new RangeError(`expected ${2 * LANDMARK_POINTS} landmark values, got ${landmarks.length}`);
  }
  const at = (i: number): Point => [landmarks[2 * i], landmarks[2 * i + 1]];
  return [centre(landmarks, 36, 42), centre(landmarks, 42, 48), at(30), at(48), at(54)];
}

/**
 * A similarity transform `[a, -b, tx; b, a, ty]`: x' = a x - b y + tx, y' = b x + a y + ty.
 * Stored as [a, b, tx, ty].
 */
export type Similarity = readonly [number, number, number, number];

/** The similarity that maps `from` onto `to` with the least squared error (closed form; no reflection). */
export function fitSimilarity(from: readonly Point[], to: readonly Point[]): Similarity {
  if (from.length !== to.length || from.length < 2) throw new RangeError('fitSimilarity needs two equal lists of at least 2 points');
  const n = from.length;
  let fx = 0;
  let fy = 0;
  let tx = 0;
  let ty = 0;
  for (let i = 0; i < n; i++) {
    fx += from[i][0] / n;
    fy += from[i][1] / n;
    tx += to[i][0] / n;
    ty += to[i][1] / n;
  }
  let dot = 0;
  let cross = 0;
  let norm = 0;
  for (let i = 0; i < n; i++) {
    const px = from[i][0] - fx;
    const py = from[i][1] - fy;
    const qx = to[i][0] - tx;
    const qy = to[i][1] - ty;
    dot += px * qx + py * qy;
    cross += px * qy - py * qx;
    norm += px * px + py * py;
  }
  if (!(norm > 0)) throw new RangeError('fitSimilarity: the source points coincide');
  const a = dot / norm;
  const b = cross / norm;
  return [a, b, tx - (a * fx - b * fy), ty - (b * fx + a * fy)];
}

/** Applies a similarity to a point. */
export function applySimilarity(m: Similarity, [x, y]: Point): Point {
  const [a, b, tx, ty] = m;
  return [a * x - b * y + tx, b * x + a * y + ty];
}

/**
 * The `size` x `size` crop that `m` (image -> crop coordinates) maps the image onto, as float RGB 0..255
 * interleaved (a [size, size, 3] tensor's layout). Pixel centres sit at +0.5; bilinear sampling; outside the
 * image is black; a face larger than the crop is box-filtered (up to 4 x 4 samples per pixel). `mirror` flips the crop left-right (for flip-averaged descriptors). Gray is replicated.
 */
export function warpSimilarity(image: GrayImage | RgbImage, m: Similarity, size: number, mirror = false): Float32Array {
  const [a, b, tx, ty] = m;
  const det = a * a + b * b;
  if (!(det > 0)) throw new RangeError('warpSimilarity: the transform is singular');
  // Inverse of [a -b; b a] is [a b; -b a] / det.
  const ia = a / det;
  const ib = b / det;
  const { width, height, data } = image;
  const ch = 'channels' in image ? image.channels : 1;
  if (data.length < width * height * ch) throw new RangeError(`image data has ${data.length} bytes, need ${width * height * ch}`);
  const out = new Float32Array(size * size * 3);
  // A face much larger than the crop would alias under plain bilinear sampling: average k x k samples per pixel.
  const k = Math.min(4, Math.max(1, Math.ceil(1 / Math.sqrt(det) - 1e-9)));
  const weight = 1 / (k * k);
  const px = [0, 0, 0];
  for (let v = 0; v < size; v++) {
    for (let u = 0; u < size; u++) {
      px[0] = px[1] = px[2] = 0;
      for (let sv = 0; sv < k; sv++) {
        for (let su = 0; su < k; su++) {
          const cu = (mirror ? size - 1 - u : u) + (su + 0.5) / k - tx;
          const cv = v + (sv + 0.5) / k - ty;
          // Source position in pixel-index space (centres at integers).
          const sx = ia * cu + ib * cv - 0.5;
          const sy = -ib * cu + ia * cv - 0.5;
          const x0 = Math.floor(sx);
          const y0 = Math.floor(sy);
          const wx = sx - x0;
          const wy = sy - y0;
          for (let c = 0; c < 4; c++) {
            const x = x0 + (c & 1);
            const y = y0 + (c >> 1);
            if (x < 0 || y < 0 || x >= width || y >= height) continue;
            const w = weight * (c & 1 ? wx : 1 - wx) * (c >> 1 ? wy : 1 - wy);
            const i = (y * width + x) * ch;
            if (ch === 1) {
              px[0] += w * data[i];
              px[1] += w * data[i];
              px[2] += w * data[i];
            } else {
              px[0] += w * data[i];
              px[1] += w * data[i + 1];
              px[2] += w * data[i + 2];
            }
          }
        }
      }
      const o = (v * size + u) * 3;
      out[o] = px[0];
      out[o + 1] = px[1];
      out[o + 2] = px[2];
    }
  }
  return out;
}
