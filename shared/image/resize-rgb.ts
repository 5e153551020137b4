/**
 * Bilinear resize of an RGB/RGBA image to 8-bit RGB, with OpenCV's INTER_LINEAR geometry (pixel centres at
 * +0.5, edges clamped) so a network fed by it sees what `cv2.resize(img, (w, h))` would give it.
 * Results are rounded to integers: V2 clients send 8-bit pixel values, which also keeps JSON tensors short.
 */
import type { RgbImage } from './types.js';

interface Taps {
  /** Index of the first source sample (the second is the next one, clamped). */
  i0: Int32Array;
  i1: Int32Array;
  /** Weight of the second sample, 0..1. */
  w1: Float32Array;
}

function taps(src: number, dst: number): Taps {
  const i0 = new Int32Array(dst);
  const i1 = new Int32Array(dst);
  const w1 = new Float32Array(dst);
  const scale = src / dst;
  for (let d = 0; d < dst; d++) {
    let f = (d + 0.5) * scale - 0.5;
    if (f < 0) f = 0;
    const a = Math.min(Math.floor(f), src - 1);
    i0[d] = a;
    i1[d] = Math.min(a + 1, src - 1);
    w1[d] = a === src - 1 ? 0 : f - a;
  }
  return { i0, i1, w1 };
}

/** Resizes to `width` x `height`, always returning 3 channels (alpha is dropped). */
export function resizeRgbBilinear(img: RgbImage, width: number, height: number): RgbImage {
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) {
    throw new RangeError(`resize target must be positive integers, got ${width}x${height}`);
  }
  if (img.width <= 0 || img.height <= 0) throw new RangeError('cannot resize an empty image');
  const cin = img.channels;
  const src = img.data;
  const out = new Uint8Array(width * height * 3);
  const xs = taps(img.width, width);
  const ys = taps(img.height, height);
  // Horizontal pass per needed source row, cached for the two rows a destination row blends.
  const rowA = new Float32Array(width * 3);
  const rowB = new Float32Array(width * 3);
  let cachedA = -1;
  let cachedB = -1;
  const hpass = (sy: number, row: Float32Array) => {
    const base = sy * img.width * cin;
    for (let x = 0; x < width; x++) {
      const p0 = base + xs.i0[x] * cin;
      const p1 = base + xs.i1[x] * cin;
      const w = xs.w1[x];
      const o = x * 3;
      row[o] = src[p0] + (src[p1] - src[p0]) * w;
      row[o + 1] = src[p0 + 1] + (src[p1 + 1] - src[p0 + 1]) * w;
      row[o + 2] = src[p0 + 2] + (src[p1 + 2] - src[p0 + 2]) * w;
    }
  };
  for (let y = 0; y < height; y++) {
    const y0 = ys.i0[y];
    const y1 = ys.i1[y];
    if (cachedA !== y0) {
      if (cachedB === y0) rowA.set(rowB);
      else hpass(y0, rowA);
      cachedA = y0;
    }
    if (cachedB !== y1) {
      hpass(y1, rowB);
      cachedB = y1;
    }
    const w = ys.w1[y];
    const o = y * width * 3;
    for (let i = 0; i < width * 3; i++) {
      const v = rowA[i] + (rowB[i] - rowA[i]) * w;
      out[o + i] = v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
    }
  }
  return { width, height, channels: 3, data: out };
}
