import { describe, expect, it } from 'vitest';
import { euclideanDistance, predictEmbedding, trainEmbedding, DESCRIPTOR_SIZE } from './matcher.js';

function vec(seed: number, dim = DESCRIPTOR_SIZE): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = Math.sin(seed * 7.1 + i * 1.3) * 0.1;
  return v;
}

describe('embedding matcher', () => {
  it('predicts the nearest sample by euclidean distance', () => {
    const a = vec(1);
    const b = vec(2);
    const model = trainEmbedding([
      { label: 3, descriptor: a },
      { label: 5, descriptor: b },
      { label: 3, descriptor: vec(3) },
    ]);
    expect(model.labels).toEqual(Int32Array.from([3, 5, 3]));
    expect(model.descriptors).toHaveLength(3 * DESCRIPTOR_SIZE);
    expect(predictEmbedding(model, a)).toEqual({ label: 3, distance: 0 });
    const q = b.map((v, i) => v + (i === 0 ? 0.01 : 0));
    const p = predictEmbedding(model, q);
    expect(p.label).toBe(5);
    expect(p.distance).toBeCloseTo(euclideanDistance(q, b), 12);
  });

  it('agrees with a brute-force nearest neighbour', () => {
    const samples = Array.from({ length: 40 }, (_, i) => ({ label: i % 7, descriptor: vec(i + 10) }));
    const model = trainEmbedding(samples);
    for (let q = 0; q < 20; q++) {
      const query = vec(q * 3.7 + 0.5);
      let best = -1;
      let bestD = Infinity;
      samples.forEach((s, i) => {
        const d = euclideanDistance(query, Float32Array.from(s.descriptor));
        if (d < bestD) [bestD, best] = [d, i];
      });
      const p = predictEmbedding(model, query);
      expect(p.label).toBe(samples[best].label);
      expect(p.distance).toBeCloseTo(bestD, 12);
    }
  });

  it('gives -1 and Infinity for an empty model', () => {
    expect(predictEmbedding(trainEmbedding([]), vec(1))).toEqual({ label: -1, distance: Infinity });
  });

  it('is plain data: survives structured clone', () => {
    const model = trainEmbedding([{ label: 1, descriptor: vec(1) }]);
    const copy = structuredClone(model);
    expect(copy).toEqual(model);
    expect(predictEmbedding(copy, vec(1))).toEqual({ label: 1, distance: 0 });
  });

  it('rejects bad input', () => {
    expect(() => trainEmbedding([{ label: 0, descriptor: new Float32Array(5) }])).toThrow(/5 values, expected 128/);
    expect(() => trainEmbedding([{ label: -1, descriptor: vec(1) }])).toThrow(/label -1/);
    expect(() => trainEmbedding([{ label: 0, descriptor: vec(1).fill(NaN) }])).toThrow(/non-finite/);
    expect(() => predictEmbedding(trainEmbedding([]), new Float32Array(3))).toThrow(/3 values/);
    expect(() => euclideanDistance([1], [1, 2])).toThrow(/lengths differ/);
  });
});
