import { describe, expect, it } from 'vitest';
import { assembleModels, type TrainingSample } from './training.js';

const hist = (v: number) => Float32Array.from([v, v + 1]);
const desc = (v: number) => new Float32Array(128).fill(v);

describe('assembleModels', () => {
  it('numbers labels by sorted name and orders samples by name, keeping the order of each person', () => {
    const samples: TrainingSample[] = [
      { label: 'grace', histogram: hist(1), descriptor: desc(0.1) },
      { label: 'ada', histogram: hist(2), descriptor: null },
      { label: 'grace', histogram: hist(3), descriptor: desc(0.3) },
    ];
    const m = assembleModels(samples);
    expect(m.labels).toEqual(['ada', 'grace']);
    expect(m.labelIds).toEqual({ ada: 0, grace: 1 });
    expect(Array.from(m.lbph.labels)).toEqual([0, 1, 1]);
    expect(m.lbph.histograms.map((h) => h[0])).toEqual([2, 1, 3]);
    expect(m.lbph).toMatchObject({ radius: 1, neighbors: 8, gridX: 8, gridY: 8 });
    expect(m.facesPerLabel).toEqual({ ada: 1, grace: 2 });
    // Only grace has descriptors: the embedding model and its names hold her alone.
    expect(m.embedding!.labelIds).toEqual({ grace: 1 });
    expect(Array.from(m.embedding!.model.labels)).toEqual([1, 1]);
    expect(m.embedding!.model.descriptors[128]).toBeCloseTo(0.3);
    expect(samples[0].label).toBe('grace'); // the input is not reordered
  });

  it('has no embedding model without descriptors, and refuses no samples', () => {
    expect(assembleModels([{ label: 'a', histogram: hist(0), descriptor: null }]).embedding).toBeNull();
    expect(() => assembleModels([])).toThrow(/no training samples/);
  });
});

describe('assembleModels with labels that are names of object members', () => {
  it('counts faces of labels such as constructor, __proto__ and toString like any other (found by the API fuzzer)', () => {
    const h = new Float32Array(256 * 64);
    const labels = ['constructor', '__proto__', 'toString', 'constructor', 'hasOwnProperty'];
    const { facesPerLabel, labelIds } = assembleModels(labels.map((label) => ({ label, histogram: h, descriptor: null })));
    // (An object literal's `__proto__:` would set the prototype, so the expected counts are entries.)
    expect(Object.entries(facesPerLabel).sort()).toEqual([
      ['__proto__', 1],
      ['constructor', 2],
      ['hasOwnProperty', 1],
      ['toString', 1],
    ]);
    expect(JSON.parse(JSON.stringify(facesPerLabel)).constructor).toBe(2);
    expect(Object.values(labelIds).sort()).toEqual([0, 1, 2, 3]);
  });
});
