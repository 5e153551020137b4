import type { GrayImage, Rect, RgbImage } from './types.js';

// OpenCV 4.6 fixed-point grayscale weights (color.hpp: RY15, GY15, BY15, gray_shift 15); they sum to 1 << 15.
const RY15 = 9798;
const GY15 = 19235;
const BY15 = 3735;

/**
 * RGB(A) to 8-bit gray, bit-exact with OpenCV `cvtColor(src, dst, COLOR_RGB2GRAY)` (or `COLOR_RGBA2GRAY`):
 * `(R*9798 + G*19235 + B*3735 + 2^14) >> 15`. Alpha is ignored.
 */
export function rgbToGray(img: RgbImage): GrayImage {
  const { width, height, channels, data } = img;
  const n = width * height;
  if (channels !== 3 && channels !== 4) throw new Error(`rgbToGray: channels must be 3 or 4, got ${channels}`);
  if (data.length < n * channels) throw new Error(`rgbToGray: data has ${data.length} bytes, need ${n * channels}`);
  const out = new Uint8Array(n);
  for (let i = 0, j = 0; i < n; i++, j += channels) {
    out[i] = (data[j] * RY15 + data[j + 1] * GY15 + data[j + 2] * BY15 + 16384) >> 15;
  }
  return { width, height, data: out };
}

/** Copy of the part of `img` inside `rect`; the rect is clipped to the image (an empty result has width or height 0). */
export function cropGray(img: GrayImage, rect: Rect): GrayImage {
  const x0 = Math.max(0, Math.floor(rect.x));
  const y0 = Math.max(0, Math.floor(rect.y));
  const x1 = Math.min(img.width, Math.floor(rect.x + rect.width));
  const y1 = Math.min(img.height, Math.floor(rect.y + rect.height));
  const w = Math.max(0, x1 - x0);
  const h = Math.max(0, y1 - y0);
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const s = (y0 + y) * img.width + x0;
    out.set(img.data.subarray(s, s + w), y * w);
  }
  return { width: w, height: h, data: out };
}

/** Round half to even, as OpenCV's cvRound (and softfloat's round_near_even) does. */
export function cvRound(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** Per-axis tables of OpenCV's `interpolationLinear` (resize.cpp, bit-exact path). */
export interface AxisTable {
  /** First source index of each destination index (the second is `+1`). */
  ofs: Int32Array;
  /** Weight of the second source pixel, 8 fractional bits (ufixedpoint16); the first gets `256 - c1`. */
  c1: Int32Array;
  /** Destination indices `< min` copy the first source pixel. */
  min: number;
  /** Destination indices `>= max` copy the last source pixel. */
  max: number;
}

/** The tables resizing one axis from `srcSize` to `dstSize` (also used by the cascade's WebAssembly pyramid). */
export function axisTable(srcSize: number, dstSize: number): AxisTable {
  const ofs = new Int32Array(dstSize);
  const c1 = new Int32Array(dstSize);
  // Same double operations as softdouble: scale = 1 / (dst / src); fval = scale * (d + 0.5) - 0.5.
  const scale = 1 / (dstSize / srcSize);
  let min = 0;
  let max = dstSize;
  for (let d = 0; d < dstSize; d++) {
    const fval = scale * (d + 0.5) - 0.5;
    const ival = Math.floor(fval);
    if (ival >= 0 && srcSize > 1) {
      if (ival < srcSize - 1) {
        ofs[d] = ival;
        c1[d] = cvRound((fval - ival) * 256);
      } else {
        ofs[d] = srcSize - 1;
        if (d < max) max = d;
      }
    } else if (d + 1 > min) {
      min = d + 1;
    }
  }
  return { ofs, c1, min, max };
}

/** Horizontal pass of one source row into 8.8 fixed point (hlineResizeCn<uint8_t, ufixedpoint16, 2, true, 1>). */
function hline(src: Uint8Array, rowStart: number, srcW: number, xt: AxisTable, dstW: number, out: Int32Array): void {
  const { ofs, c1, min, max } = xt;
  const first = src[rowStart] << 8;
  let x = 0;
  for (; x < min; x++) out[x] = first;
  for (; x < max; x++) {
    const p = rowStart + ofs[x];
    const c = c1[x];
    out[x] = (256 - c) * src[p] + c * src[p + 1];
  }
  const last = src[rowStart + (max < dstW ? ofs[dstW - 1] : srcW - 1)] << 8;
  for (; x < dstW; x++) out[x] = last;
}

/**
 * Resize `src` (width `srcW`, height `srcH`, row stride `srcW`) into `dst` (`dstW * dstH` bytes), bit-exact with
 * OpenCV 4.6 `cv::resize(..., INTER_LINEAR_EXACT)` for CV_8UC1, including the same-size copy.
 * Exported for the cascade pyramid, which reuses one destination buffer for all levels.
 */
export function resizeLinearExactInto(src: Uint8Array, srcW: number, srcH: number, dst: Uint8Array, dstW: number, dstH: number): void {
  if (dstW === srcW && dstH === srcH) {
    dst.set(src.subarray(0, srcW * srcH));
    return;
  }
  // The exact-2x downscale goes through INTER_AREA in OpenCV; (a+b+c+d+2)>>2 equals the linear result there.
  const xt = axisTable(srcW, dstW);
  const yt = axisTable(srcH, dstH);
  let bufA = new Int32Array(dstW);
  let bufB = new Int32Array(dstW);
  let rowA = -1;
  let rowB = -1;
  const rowOut = (dy: number, h: Int32Array): void => {
    const o = dy * dstW;
    for (let x = 0; x < dstW; x++) dst[o + x] = (h[x] + 128) >> 8;
  };
  let dy = 0;
  if (yt.min > 0) {
    hline(src, 0, srcW, xt, dstW, bufA);
    rowA = 0;
    for (; dy < yt.min; dy++) rowOut(dy, bufA);
  }
  for (; dy < yt.max; dy++) {
    const iy = yt.ofs[dy];
    // Keep the two source rows in bufA (iy) and bufB (iy + 1), reusing what the previous row computed.
    if (rowA !== iy) {
      if (rowB === iy) {
        const t = bufA;
        bufA = bufB;
        bufB = t;
        rowA = iy;
        rowB = -1;
      } else {
        hline(src, iy * srcW, srcW, xt, dstW, bufA);
        rowA = iy;
      }
    }
    if (rowB !== iy + 1) {
      hline(src, (iy + 1) * srcW, srcW, xt, dstW, bufB);
      rowB = iy + 1;
    }
    const c1 = yt.c1[dy];
    const c0 = 256 - c1;
    const o = dy * dstW;
    for (let x = 0; x < dstW; x++) dst[o + x] = (bufA[x] * c0 + bufB[x] * c1 + 32768) >> 16;
  }
  if (dy < dstH) {
    const last = srcH - 1;
    let h: Int32Array;
    if (rowA === last) h = bufA;
    else if (rowB === last) h = bufB;
    else {
      hline(src, last * srcW, srcW, xt, dstW, bufA);
      h = bufA;
    }
    for (; dy < dstH; dy++) rowOut(dy, h);
  }
}

/** Bilinear resize of an 8-bit gray image, bit-exact with OpenCV 4.6 `cv::resize(src, dst, Size(width, height), 0, 0, INTER_LINEAR_EXACT)`. */
export function resizeLinearExact(img: GrayImage, width: number, height: number): GrayImage {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new Error(`resizeLinearExact: size must be positive integers, got ${width}x${height}`);
  }
  if (img.width <= 0 || img.height <= 0) throw new Error('resizeLinearExact: empty source image');
  const out = new Uint8Array(width * height);
  resizeLinearExactInto(img.data, img.width, img.height, out, width, height);
  return { width, height, data: out };
}
