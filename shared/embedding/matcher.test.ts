import { describe, expect, it } from 'vitest';
import { rankEmbeddingBefore } from '../../bench/ranking-before.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { simdDots } from './simd-dots.js';
import { euclideanDistance, type EmbeddingModel, predictEmbedding, rankEmbedding, trainEmbedding, DESCRIPTOR_SIZE } from './matcher.js';

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

/** A gallery of `people` x `per` samples: random directions of length `scale`, and a few exact copies across people. */
function gallery(random: () => number, people: number, per: number, dim: number, scale = 1): EmbeddingModel {
  const n = people * per;
  const model: EmbeddingModel = { dim, descriptors: new Float32Array(n * dim), labels: new Int32Array(n) };
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let k = 0; k < dim; k++) {
      const v = random() * 2 - 1;
      model.descriptors[i * dim + k] = v;
      norm += v * v;
    }
    for (let k = 0; k < dim; k++) model.descriptors[i * dim + k] *= scale / Math.sqrt(norm);
    // Labels out of order, so ties between people are settled by label, not by position.
    model.labels[i] = (Math.floor(i / per) * 7919) % (people * 3 + 1);
  }
  // Sample 5 copied as another person's sample: a query at it ties two people at 0.
  if (n > 20) model.descriptors.copyWithin(17 * dim, 5 * dim, 6 * dim);
  return model;
}

describe('rankEmbedding in one pass', () => {
  it('has WebAssembly SIMD dot products in Node, equal to the plain sums within float32 rounding', () => {
    const engine = simdDots();
    expect(engine).not.toBeNull();
    const random = seededRandom(9);
    const templates = Float32Array.from({ length: 70 * 16 }, () => random() * 2 - 1);
    const query = Array.from({ length: 16 }, () => random() * 2 - 1);
    const out = new Float64Array(70);
    expect(engine?.dots(templates, 16, query, out)).toBe(true);
    for (let i = 0; i < 70; i++) {
      let sum = 0;
      for (let k = 0; k < 16; k++) sum += templates[i * 16 + k] * query[k];
      expect(Math.abs(out[i] - sum)).toBeLessThan(1e-5);
    }
  });

  it('gives the ranking of before #27, bit for bit, on random galleries, queries and depths', () => {
    const random = seededRandom(27);
    let compared = 0;
    for (const [people, per, dim, scale] of [
      [10, 3, 128, 1],
      [21, 3, 128, 1],
      [22, 3, 128, 1],
      [400, 3, 128, 1],
      [300, 1, 1024, 1],
      [150, 5, 7, 1],
      [200, 3, 128, 40],
      [200, 3, 64, 1e-3],
      // float32 products underflow here (below 1e-38) and overflow there: the estimate must still not drop anyone.
      [100, 3, 128, 1e-22],
      [100, 3, 128, 1e20],
    ] as const) {
      const model = gallery(random, people, per, dim, scale);
      const n = model.labels.length;
      const sample = (i: number) => model.descriptors.slice(i * dim, (i + 1) * dim);
      const queries: ArrayLike<number>[] = [sample(5), sample(n - 1)];
      for (let q = 0; q < 12; q++) {
        const at = Math.floor(random() * n);
        const noise = [0, 1e-7, 0.05, 0.3, 1][q % 5] * scale;
        // Plain number arrays too: the query's values in double, not float32.
        const v = Array.from(sample(at), (x) => x + (random() * 2 - 1) * noise);
        queries.push(q % 2 ? v : Float32Array.from(v));
      }
      for (let q = 0; q < 4; q++) queries.push(Array.from({ length: dim }, () => (random() * 2 - 1) * scale));
      for (const query of queries) {
        for (const k of [1, 2, 3, 5, 70]) {
          expect(rankEmbedding(model, query, k)).toEqual(rankEmbeddingBefore(model, query, k));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('ties at the same distance go to the smaller label, as before', () => {
    const random = seededRandom(3);
    const model = gallery(random, 100, 3, 128);
    const q = model.descriptors.slice(5 * 128, 6 * 128);
    const ranked = rankEmbedding(model, q);
    expect(ranked[0].distance).toBe(0);
    expect(ranked[1].distance).toBe(0);
    expect(ranked[0].labelId).toBeLessThan(ranked[1].labelId);
    expect(ranked).toEqual(rankEmbeddingBefore(model, q));
  });

  it('a query with a non-finite value ranks as before (nobody), and a changed model is noticed', () => {
    const random = seededRandom(4);
    const model = gallery(random, 100, 3, 128);
    const q = Array.from(model.descriptors.slice(0, 128));
    q[3] = Number.NaN;
    expect(rankEmbedding(model, q)).toEqual(rankEmbeddingBefore(model, q));
    q[3] = Number.POSITIVE_INFINITY;
    expect(rankEmbedding(model, q)).toEqual(rankEmbeddingBefore(model, q));
    const other = gallery(random, 100, 3, 128);
    const query = other.descriptors.slice(0, 128);
    rankEmbedding(model, query);
    // The same model object given other templates: the prepared lengths follow them.
    model.descriptors = other.descriptors;
    expect(rankEmbedding(model, query)[0]).toEqual({ labelId: other.labels[0], distance: 0 });
  });
});
