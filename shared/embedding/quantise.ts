/**
 * Descriptors in fewer bytes for the browser's copy of the model (#27 section 2): IEEE half precision (float16,
 * 2 bytes a value) and int8 with one float32 scale per descriptor (1 byte a value + 4), or with one scale per
 * dimension over the whole gallery (`int8-dim`: what a fixed per-model scale table would at best give). The browser decodes them
 * back to float32 for the matcher; the server keeps its own float32. What each does to decisions is measured by
 * bench/descriptor-precision.bench.ts (bench/RESULTS.md): float16 moves a distance by about 1e-4 at most.
 *
 * Written out by hand: Node 20 has neither Math.f16round nor Float16Array.
 */

export const DESCRIPTOR_PRECISIONS = ['float32', 'float16', 'int8', 'int8-dim'] as const;
export type DescriptorPrecision = (typeof DESCRIPTOR_PRECISIONS)[number];

/** x rounded to the nearest integer, ties to even (IEEE's rounding). */
function roundEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The float16 bits nearest to `v` (ties to even; beyond the largest half, infinity; NaN stays NaN). */
export function toHalfBits(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === Infinity) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24); // subnormal (1024 rounds up into the smallest normal)
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--; // log2's rounding near a power of two
  if (2 ** (e + 1) <= a) e++;
  let m = roundEven((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e++;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | ((e + 15) << 10) | m;
}

/** The value of float16 bits. */
export function fromHalfBits(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 0x1f) return m ? Number.NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** Per-descriptor int8: q = round(v / scale) with scale = max |v| / 127, so the largest value is exact. */
export function int8Scale(values: ArrayLike<number>, from: number, dim: number): number {
  let max = 0;
  for (let k = 0; k < dim; k++) max = Math.max(max, Math.abs(values[from + k]));
  return Math.fround(max / 127);
}

/** Per-dimension int8: one scale per dimension, max |v| / 127 over every descriptor of the gallery. */
export function int8DimensionScales(descriptors: Float32Array, dim: number): Float32Array {
  const scales = new Float32Array(dim);
  for (let i = 0; i < descriptors.length; i++) scales[i % dim] = Math.max(scales[i % dim], Math.abs(descriptors[i]));
  for (let k = 0; k < dim; k++) scales[k] = Math.fround(scales[k] / 127);
  return scales;
}

export function toInt8(v: number, scale: number): number {
  if (!(scale > 0)) return 0;
  return Math.max(-127, Math.min(127, Math.round(v / scale)));
}

/**
 * The descriptors as a browser holding them in `precision` has them (decoded to float32): what the benchmark and
 * the tests compare with the originals. Non-finite values are refused (the codec would not keep them either).
 */
export function atPrecision(descriptors: Float32Array, dim: number, precision: DescriptorPrecision): Float32Array {
  const out = new Float32Array(descriptors.length);
  if (precision === 'float32') {
    out.set(descriptors);
    return out;
  }
  if (precision === 'int8-dim') {
    const scales = int8DimensionScales(descriptors, dim);
    for (let i = 0; i < descriptors.length; i++) out[i] = toInt8(descriptors[i], scales[i % dim]) * scales[i % dim];
    return out;
  }
  for (let o = 0; o < descriptors.length; o += dim) {
    const scale = precision === 'int8' ? int8Scale(descriptors, o, dim) : 0;
    for (let k = 0; k < dim; k++) {
      const v = descriptors[o + k];
      out[o + k] = precision === 'float16' ? fromHalfBits(toHalfBits(v)) : toInt8(v, scale) * scale;
    }
  }
  return out;
}
