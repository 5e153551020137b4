import { describe, expect, it } from 'vitest';
import { applySimilarity, fitSimilarity, fivePoints, referencePoints, warpSimilarity } from './five-point.js';

describe('five-point alignment', () => {
  it('takes eye centres, nose tip and mouth corners from 68 landmarks', () => {
    const lm = new Float64Array(136).map((_, i) => (i % 2 ? 1000 + i : i));
    const [le, re, nose, ml, mr] = fivePoints(lm);
    expect(le).toEqual([(72 + 82) / 2, 1000 + (73 + 83) / 2]);
    expect(re).toEqual([(84 + 94) / 2, 1000 + (85 + 95) / 2]);
    expect(nose).toEqual([60, 1061]);
    expect(ml).toEqual([96, 1097]);
    expect(mr).toEqual([108, 1109]);
    expect(() => fivePoints(new Float64Array(10))).toThrow(/expected 136/);
  });

  it('recovers a known rotation, scale and shift exactly', () => {
    const ref = referencePoints(224);
    const angle = 0.3;
    const truth = [1.7 * Math.cos(angle), 1.7 * Math.sin(angle), 12, -40] as const;
    const moved = ref.map((p) => applySimilarity(truth, p));
    const fit = fitSimilarity(ref, moved);
    for (const [i, v] of fit.entries()) expect(v).toBeCloseTo(truth[i], 9);
  });

  it('scales the 112 px layout to the crop, shrunk about its centre by zoom', () => {
    expect(referencePoints(112)[2]).toEqual([56.0252, 71.7366]);
    const [x, y] = referencePoints(224, 0.5)[0];
    expect(x).toBeCloseTo(112 + (38.2946 * 2 - 112) * 0.5, 9);
    expect(y).toBeCloseTo(112 + (51.6963 * 2 - 112) * 0.5, 9);
  });

  it('warps with the identity to the same pixels, mirrors, and leaves the outside black', () => {
    const width = 4;
    const rgb = { width, height: 4, channels: 3 as const, data: Uint8Array.from({ length: 48 }, (_, i) => i * 5) };
    const same = warpSimilarity(rgb, [1, 0, 0, 0], 4);
    expect(Array.from(same)).toEqual(Array.from(rgb.data));
    const mirrored = warpSimilarity(rgb, [1, 0, 0, 0], 4, true);
    expect(Array.from(mirrored.subarray(0, 3))).toEqual(Array.from(rgb.data.subarray(9, 12)));
    const shifted = warpSimilarity(rgb, [1, 0, 2, 0], 4);
    expect(Array.from(shifted.subarray(0, 6))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(Array.from(shifted.subarray(6, 9))).toEqual(Array.from(rgb.data.subarray(0, 3)));
  });

  it('box-filters a face much larger than the crop (the mean of a 2x2 block at half scale)', () => {
    const gray = { width: 4, height: 4, data: Uint8Array.from([0, 100, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) };
    const half = warpSimilarity(gray, [0.5, 0, 0, 0], 2);
    expect(half[0]).toBeCloseTo(50, 9);
    expect(half[1]).toBeCloseTo(50, 9);
  });
});
