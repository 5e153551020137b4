import { describe, expect, it } from 'vitest';
import { atPrecision, fromHalfBits, int8DimensionScales, int8Scale, toHalfBits } from './quantise.js';

describe('float16', () => {
  it("rounds float32 values to the half NumPy's astype(float16) gives (nearest, ties to even, overflow to infinity)", () => {
    // Math.fround(v) -> NumPy 1.24 float16 bits.
    const numpy: [number, number][] = [
      [0.1, 0x2e66],
      [-0.0625, 0xac00],
      [0.3, 0x34cd],
      [1e-5, 0x00a8], // subnormal
      [-1.5e-5, 0x80fc],
      [6.1e-5, 0x03ff],
      [65504, 0x7bff],
      [65519.99, 0x7bff],
      [65520, 0x7c00],
      [2 ** -24, 0x0001],
      [2 ** -25, 0x0000], // a tie: to even (zero)
      [3 * 2 ** -26, 0x0001],
      [1 + 2 ** -11, 0x3c00], // a tie: to even
      [1 + 3 * 2 ** -11, 0x3c02],
      [-0.7, 0xb99a],
      [0.2357, 0x338b],
    ];
    for (const [v, bits] of numpy) expect(toHalfBits(Math.fround(v)), `${v}`).toBe(bits);
    expect(toHalfBits(-0)).toBe(0x8000);
    expect(toHalfBits(Number.NaN)).toBe(0x7e00);
    expect(toHalfBits(-Infinity)).toBe(0xfc00);
  });

  it('gives every half back from its value', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const v = fromHalfBits(h);
      if (Number.isNaN(v) ? (h & 0x7c00) !== 0x7c00 : toHalfBits(v) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });
});

describe('atPrecision', () => {
  it('float32 copies; int8 keeps the largest value of each descriptor exact and the rest within half a step', () => {
    const d = new Float32Array([0.5, -0.25, 0.1, 0.01, -2, 1, 0.3, 0]);
    expect(atPrecision(d, 4, 'float32')).toEqual(d);
    const q = atPrecision(d, 4, 'int8');
    expect(q[0]).toBe(d[0]);
    expect(q[4]).toBe(d[4]);
    for (const [o, i] of [0, 4].flatMap((o) => [0, 1, 2, 3].map((i) => [o, i]))) {
      expect(Math.abs(q[o + i] - d[o + i])).toBeLessThanOrEqual(int8Scale(d, o, 4) / 2 + 1e-7);
    }
    expect(atPrecision(new Float32Array(4), 4, 'int8')).toEqual(new Float32Array(4));
  });

  it('int8-dim scales each dimension by its own largest value over the gallery: a small dimension keeps its detail', () => {
    // Dimension 1 is small in both descriptors: per descriptor it shares the big values' step, per dimension it has its own.
    const d = new Float32Array([1, 0.003, -0.5, 0.8, 0.0021, -0.6]);
    const scales = int8DimensionScales(d, 3);
    expect(Array.from(scales)).toEqual([d[0], d[1], -d[5]].map((m) => Math.fround(m / 127)));
    const q = atPrecision(d, 3, 'int8-dim');
    for (let i = 0; i < d.length; i++) expect(Math.abs(q[i] - d[i])).toBeLessThanOrEqual(scales[i % 3] / 2 + 1e-9);
    expect(Math.abs(q[1] - d[1])).toBeLessThan(Math.abs(atPrecision(d, 3, 'int8')[1] - d[1]) + 1e-12);
    expect(atPrecision(new Float32Array(6), 3, 'int8-dim')).toEqual(new Float32Array(6));
  });
});
