/**
 * OpenCV's `warpAffine(src, dst, M, dsize, INTER_LINEAR, BORDER_REPLICATE)` on 8-bit gray images, bit-exact with
 * OpenCV 4.6's CPU path (imgwarp.cpp): the matrix is inverted in double as `invertAffineTransform` does, each
 * destination pixel's source position is computed in 10-bit fixed point (AB_BITS) and rounded to 1/32 pixel
 * (INTER_BITS), and the four neighbours are blended with OpenCV's 15-bit integer weights. warp.test.ts checks the
 * output against images warped by OpenCV. Browser-safe.
 */
import { cvRound } from './ops.js';
import type { GrayImage } from './types.js';

/** A 2x3 affine matrix, row-major: [a, b, c, d, e, f] maps (x, y) to (a x + b y + c, d x + e y + f). */
export type Affine = readonly [number, number, number, number, number, number];

const INTER_BITS = 5;
const INTER_TAB_SIZE = 1 << INTER_BITS;
const AB_BITS = 10;
const AB_SCALE = 1 << AB_BITS;
const ROUND_DELTA = AB_SCALE / INTER_TAB_SIZE / 2;
const COEF_BITS = 15;
const COEF_ROUND = 1 << (COEF_BITS - 1);
// OpenCV's bilinear weights: (1 - f) and f at 1/32 steps, multiplied in float and scaled by 2^15, are whole
// numbers, so its table is exactly (32 - fy or fy) * (32 - fx or fx) * 32.
const WEIGHT_UNIT = (1 << COEF_BITS) / (INTER_TAB_SIZE * INTER_TAB_SIZE);

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const saturateInt = (v: number): number => Math.min(INT_MAX, Math.max(INT_MIN, cvRound(v)));
const saturateShort = (v: number): number => Math.min(32767, Math.max(-32768, v));

/** OpenCV's invertAffineTransform (double precision; a singular matrix gives zeros, as OpenCV's does). */
export function invertAffine(m: Affine): Affine {
  let det = m[0] * m[4] - m[1] * m[3];
  det = det !== 0 ? 1 / det : 0;
  const a11 = m[4] * det;
  const a22 = m[0] * det;
  const a12 = -m[1] * det;
  const a21 = -m[3] * det;
  const b1 = -a11 * m[2] - a12 * m[5];
  const b2 = -a21 * m[2] - a22 * m[5];
  return [a11, a12, b1, a21, a22, b2];
}

/** Edge pixels repeat beyond the image (OpenCV's clip() for BORDER_REPLICATE in remapBilinear). */
const clip = (v: number, size: number): number => (v >= 0 ? (v < size ? v : size - 1) : 0);

/** `forward` maps source pixels to destination pixels (OpenCV's M without WARP_INVERSE_MAP). */
export function warpAffineGray(src: GrayImage, forward: Affine, width: number, height: number): GrayImage {
  const { width: sw, height: sh, data: s } = src;
  if (sw < 1 || sh < 1) throw new Error('warpAffineGray: the source image is empty');
  const m = invertAffine(forward);
  const adelta = new Int32Array(width);
  const bdelta = new Int32Array(width);
  for (let x = 0; x < width; x++) {
    adelta[x] = saturateInt(m[0] * x * AB_SCALE);
    bdelta[x] = saturateInt(m[3] * x * AB_SCALE);
  }
  const out = new Uint8Array(width * height);
  const w1 = Math.max(sw - 1, 0);
  const h1 = Math.max(sh - 1, 0);
  for (let y = 0; y < height; y++) {
    const x0 = saturateInt((m[1] * y + m[2]) * AB_SCALE) + ROUND_DELTA;
    const y0 = saturateInt((m[4] * y + m[5]) * AB_SCALE) + ROUND_DELTA;
    for (let x = 0; x < width; x++) {
      const X = (x0 + adelta[x]) >> (AB_BITS - INTER_BITS);
      const Y = (y0 + bdelta[x]) >> (AB_BITS - INTER_BITS);
      const sx = saturateShort(X >> INTER_BITS);
      const sy = saturateShort(Y >> INTER_BITS);
      const fx = X & (INTER_TAB_SIZE - 1);
      const fy = Y & (INTER_TAB_SIZE - 1);
      let v0: number;
      let v1: number;
      let v2: number;
      let v3: number;
      if (sx >= 0 && sx < w1 && sy >= 0 && sy < h1) {
        const i = sy * sw + sx;
        v0 = s[i];
        v1 = s[i + 1];
        v2 = s[i + sw];
        v3 = s[i + sw + 1];
      } else {
        const cx0 = clip(sx, sw);
        const cx1 = clip(sx + 1, sw);
        const r0 = clip(sy, sh) * sw;
        const r1 = clip(sy + 1, sh) * sw;
        v0 = s[r0 + cx0];
        v1 = s[r0 + cx1];
        v2 = s[r1 + cx0];
        v3 = s[r1 + cx1];
      }
      const gx = INTER_TAB_SIZE - fx;
      const gy = INTER_TAB_SIZE - fy;
      const sum = (v0 * gy * gx + v1 * gy * fx + v2 * fy * gx + v3 * fy * fx) * WEIGHT_UNIT;
      out[y * width + x] = (sum + COEF_ROUND) >> COEF_BITS;
    }
  }
  return { width, height, data: out };
}
