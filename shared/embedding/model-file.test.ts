import { describe, expect, it } from 'vitest';
import { trainEmbedding } from './matcher.js';
import { decodeEmbeddingFile, encodeEmbeddingFile, EmbeddingFileError, EMBEDDING_EXTRACTOR } from './model-file.js';

function randomModel(n: number) {
  let seed = 99;
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  const rand = () => {
    // Any finite float32 bit pattern, so the round trip is tested on awkward values, not only tidy ones.
    do {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      bits[0] = seed;
    } while (!Number.isFinite(f[0]));
    return f[0];
  };
  return trainEmbedding(Array.from({ length: n }, (_, i) => ({ label: i % 3, descriptor: Array.from({ length: 128 }, rand) })));
}

const names = [
  { label: 2, name: 'messi' },
  { label: 0, name: 'grace-hopper' },
  { label: 1, name: 'eileen-collins' },
];

describe('embeddings.json', () => {
  it('round-trips exactly, with names sorted by label', () => {
    const model = randomModel(7);
    const text = encodeEmbeddingFile(model, names, { createdAt: '2024-05-01T00:00:00.000Z' });
    const back = decodeEmbeddingFile(text);
    expect(back.model.dim).toBe(128);
    expect(back.model.labels).toEqual(model.labels);
    // Bit-exact, including -0, denormals and extremes.
    expect(new Uint32Array(back.model.descriptors.buffer)).toEqual(new Uint32Array(model.descriptors.buffer));
    expect(back.labels).toEqual([...names].sort((a, b) => a.label - b.label));
    expect(back.extractor).toBe(EMBEDDING_EXTRACTOR);
    expect(back.createdAt).toBe('2024-05-01T00:00:00.000Z');
    expect(encodeEmbeddingFile(back.model, back.labels, { createdAt: back.createdAt })).toBe(text);
    const json = JSON.parse(text);
    expect(json).toMatchObject({ format: 'lookout-embeddings', version: 2, descriptor: 'faceapi-128', dim: 128 });
    expect(back.descriptor).toBe('faceapi-128');
    expect(json.samples).toHaveLength(7);
  });

  it('records the descriptor model, from the length unless named', () => {
    const unit = trainEmbedding([{ label: 0, descriptor: new Float32Array(1024).fill(1 / 32) }], 1024);
    const back = decodeEmbeddingFile(encodeEmbeddingFile(unit, [{ label: 0, name: 'a' }]));
    expect(back.descriptor).toBe('faceres-1024');
    expect(back.extractor).toMatch(/faceres/);
    expect(() => encodeEmbeddingFile(unit, [{ label: 0, name: 'a' }], { descriptor: 'faceapi-128' })).toThrow(
      /faceapi-128 descriptors have 128 values/,
    );
    expect(() => encodeEmbeddingFile(trainEmbedding([], 64), [])).toThrow(/no descriptor model gives 64 values/);
  });

  it('reads a version 1 file (before descriptor ids) as faceapi-128', () => {
    const { descriptor: _, ...v1 } = JSON.parse(encodeEmbeddingFile(randomModel(2), names));
    const back = decodeEmbeddingFile(JSON.stringify({ ...v1, version: 1 }));
    expect(back.descriptor).toBe('faceapi-128');
    expect(back.model.labels).toHaveLength(2);
  });

  it('handles an empty model', () => {
    const back = decodeEmbeddingFile(encodeEmbeddingFile(trainEmbedding([]), []));
    expect(back.model.labels).toHaveLength(0);
    expect(back.labels).toEqual([]);
  });

  it('refuses to write a sample whose label has no name', () => {
    expect(() => encodeEmbeddingFile(randomModel(3), names.slice(0, 1))).toThrow(/label 0, which has no name/);
  });

  const good = JSON.parse(encodeEmbeddingFile(randomModel(2), names));
  const cases: [string, unknown, RegExp][] = [
    ['not JSON', 'not json {', /not valid JSON/],
    ['an array', [], /top level must be a JSON object/],
    ['another format', { ...good, format: 'other' }, /"format" must be "lookout-embeddings"/],
    ['a newer version', { ...good, version: 3 }, /unsupported version 3 \(this build reads versions 1 and 2\); train again/],
    [
      'an unknown descriptor model',
      { ...good, descriptor: 'other-64' },
      /"descriptor" must be one of faceapi-128, faceres-1024, got "other-64"; train again/,
    ],
    [
      'a descriptor model of another length',
      { ...good, descriptor: 'faceres-1024' },
      /"dim" is 128, but faceres-1024 descriptors have 1024 values/,
    ],
    ['bad dim', { ...good, dim: 0 }, /"dim" must be a positive integer/],
    ['no samples', { ...good, samples: undefined }, /"samples" must be an array/],
    [
      'a short descriptor',
      { ...good, samples: [{ label: 0, descriptor: [1, 2] }] },
      /samples\[0\]\.descriptor must be an array of 128 numbers/,
    ],
    [
      'a string value',
      { ...good, samples: [{ label: 0, descriptor: [...good.samples[0].descriptor.slice(1), 'x'] }] },
      /samples\[0\]\.descriptor\[127\] is not a finite number/,
    ],
    [
      'a bad label',
      { ...good, samples: [{ ...good.samples[0], label: 1.5 }] },
      /samples\[0\]\.label must be a non-negative 32-bit integer/,
    ],
    ['an unnamed label', { ...good, labels: [{ label: 0, name: 'a' }] }, /sample 1 has label 1, which has no name/],
    ['a duplicate name entry', { ...good, labels: [...good.labels, { label: 0, name: 'again' }] }, /label 0 is named twice/],
    [
      'an empty name',
      { ...good, labels: [{ label: 0, name: '' }, ...good.labels.slice(1)] },
      /labels\[0\]\.name must be a non-empty string/,
    ],
  ];
  for (const [what, value, message] of cases) {
    it(`rejects ${what} with a clear message`, () => {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      expect(() => decodeEmbeddingFile(text)).toThrow(EmbeddingFileError);
      expect(() => decodeEmbeddingFile(text)).toThrow(message);
    });
  }
});
