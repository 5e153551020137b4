import { describe, expect, it } from 'vitest';
import { LBPH_DEFAULTS, type LbphModel } from '../lbph/lbph.js';
import { writeLbphYaml } from '../lbph/opencv-yaml.js';
import { encodeLabelMapPickle } from '../lbph/pickle.js';
import { decodeEmbeddingsFile, decodeLbphFile, encodeEmbeddingsFile, encodeLbphFile, trained, trainedSet } from './model-files.js';
import { assembleModels } from './training.js';

// A histogram of the default 8x8 grid of 256 bins.
const hist = (v: number) => new Float32Array(8 * 8 * 256).fill(v);
const lbph = (labels: number[]): LbphModel => ({ ...LBPH_DEFAULTS, histograms: labels.map(hist), labels: Int32Array.from(labels) });

describe('LBPH files', () => {
  it('writes the names into labelsInfo and reads them back', () => {
    const yaml = encodeLbphFile(lbph([0, 1, 1]), { grace: 1, ada: 0 });
    const back = decodeLbphFile(yaml);
    expect(back.labelIds).toEqual({ ada: 0, grace: 1 });
    expect(back.model.labelsInfo).toEqual([
      { label: 0, value: 'ada' },
      { label: 1, value: 'grace' },
    ]);
    expect(Array.from(back.model.labels)).toEqual([0, 1, 1]);
    expect([...trained(back).names]).toEqual([
      [0, 'ada'],
      [1, 'grace'],
    ]);
  });

  it('takes the names from model.pickle when training.yml has none (written by OpenCV itself)', () => {
    const bare = writeLbphYaml(lbph([0, 1]));
    expect(decodeLbphFile(bare, encodeLabelMapPickle({ ada: 0, alan: 1 })).labelIds).toEqual({ ada: 0, alan: 1 });
    expect(() => decodeLbphFile(bare, null)).toThrow(/model.pickle is missing/);
    expect(() => decodeLbphFile(bare, encodeLabelMapPickle({ ada: 0 }))).toThrow(/label ids 1 that have no name/);
    // A browser downloads training.yml alone: without labelsInfo its faces would have no names.
    expect(() => decodeLbphFile(bare)).toThrow(/label ids 0, 1 that have no name/);
  });
});

describe('embedding files', () => {
  it('round-trips the model, its names and when it was made', () => {
    const { embedding } = assembleModels([
      { label: 'ada', histogram: Float32Array.of(1), descriptor: new Float32Array(128).fill(0.25) },
      { label: 'grace', histogram: Float32Array.of(2), descriptor: null },
    ]);
    const json = encodeEmbeddingsFile(embedding!.model, embedding!.labelIds, '2026-01-02T03:04:05.000Z');
    const back = decodeEmbeddingsFile(json);
    expect(back.labelIds).toEqual({ ada: 0 });
    expect(back.createdAt).toBe('2026-01-02T03:04:05.000Z');
    expect(back.model.descriptors).toEqual(embedding!.model.descriptors);
    expect(trained(back).trainedAt).toBe('2026-01-02T03:04:05.000Z');
  });
});

describe('trainedSet', () => {
  it('names, stamps and writes the models of one training', () => {
    const assembled = assembleModels([
      { label: 'grace', histogram: hist(1), descriptor: new Float32Array(128) },
      { label: 'ada', histogram: hist(2), descriptor: null },
    ]);
    const set = trainedSet(assembled, '2026-05-06T00:00:00.000Z');
    expect([...set.lbph.names]).toEqual([
      [0, 'ada'],
      [1, 'grace'],
    ]);
    expect(set.lbph.trainedAt).toBe('2026-05-06T00:00:00.000Z');
    expect([...set.embedding!.names]).toEqual([[1, 'grace']]);
    expect(decodeLbphFile(set.files.lbphYaml).labelIds).toEqual({ ada: 0, grace: 1 });
    expect(decodeEmbeddingsFile(set.files.embeddingsJson!).labelIds).toEqual({ grace: 1 });
    expect(trainedSet(assembleModels([{ label: 'a', histogram: hist(1), descriptor: null }]), 'x').files.embeddingsJson).toBeNull();
  });
});
