/**
 * The corrections file a kiosk downloads: what the server writes, the browser reads back bit for bit, and the
 * pipeline applies it as it applies the server's own corrections.
 */
import { describe, expect, it } from 'vitest';
import { trainEmbedding } from '../embedding/matcher.js';
import { decodeCorrectionsFile, encodeCorrectionsFile, float32FromBase64, float32ToBase64 } from './correction-file.js';
import type { DecisionRule } from './decision.js';
import { FacePipeline } from './pipeline.js';

const RULE: DecisionRule = { min: 0, max: 0.5, sureMax: 0.4, nearMax: 0.6, ratioMax: null, verifyMax: 0.45 };
const v = (...xs: number[]) => Float32Array.from(xs);

describe('the corrections file', () => {
  it('keeps every float32 exactly (base64, little-endian), a 16,384-bin LBPH histogram too', () => {
    const histogram = Float32Array.from({ length: 16_384 }, (_, i) => (i % 7 === 0 ? 0 : Math.fround(Math.sin(i) * 1e-3)));
    for (const values of [v(0.1, -0, 1e-38, 3.4e38, Number.NaN), histogram]) {
      const back = float32FromBase64(float32ToBase64(values));
      expect(back && Buffer.from(back.buffer)).toEqual(Buffer.from(values.buffer));
    }
    expect(float32FromBase64('AAA=')).toBeNull(); // 2 bytes: not whole float32s
    expect(float32FromBase64('not base64!')).toBeNull();
    expect(float32FromBase64('')).toBeNull();
  });

  it('reads back what it wrote, by label and recognizer', () => {
    const text = encodeCorrectionsFile({
      version: 'abc123',
      descriptorModel: 'faceapi-128',
      lbph: [
        { label: 'grace', feature: v(1, 2, 3) },
        { label: 'grace', feature: v(4, 5, 6) },
        { label: 'ada', feature: v(7, 8, 9) },
      ],
      embedding: [{ label: 'grace', feature: v(0.5, 0.25) }],
    });
    const file = decodeCorrectionsFile(text);
    expect(file.version).toBe('abc123');
    expect(file.descriptorModel).toBe('faceapi-128');
    expect(file.negatives.lbph).toEqual(
      new Map([
        ['grace', [v(1, 2, 3), v(4, 5, 6)]],
        ['ada', [v(7, 8, 9)]],
      ]),
    );
    expect(file.negatives.embedding).toEqual(new Map([['grace', [v(0.5, 0.25)]]]));
  });

  it('refuses a malformed file with the reason', () => {
    expect(() => decodeCorrectionsFile('{')).toThrow('not JSON');
    expect(() => decodeCorrectionsFile('{"version":"x"}')).toThrow('not a lookout-corrections file');
    const good = JSON.parse(encodeCorrectionsFile({ version: 'x', descriptorModel: null, lbph: [], embedding: [] }));
    expect(() => decodeCorrectionsFile(JSON.stringify({ ...good, version: 1 }))).toThrow('no version');
    expect(() => decodeCorrectionsFile(JSON.stringify({ ...good, lbph: null }))).toThrow('no lbph list');
    expect(() => decodeCorrectionsFile(JSON.stringify({ ...good, embedding: [{ label: 'grace', feature: 'AAA=' }] }))).toThrow(
      'embedding correction 0 is not a label with a float32 feature',
    );
  });

  it('once installed in a pipeline, the corrected face is unknown; the empty file names it again', async () => {
    const model = trainEmbedding(
      [
        { label: 0, descriptor: [1, 0] },
        { label: 1, descriptor: [0, 1] },
      ],
      2,
    );
    const face = v(0.1, 0.8);
    const pipeline = new FacePipeline({ describe: async (_rgb, boxes) => boxes.map(() => face) });
    const names = new Map([
      [0, 'ada'],
      [1, 'grace'],
    ]);
    pipeline.setModels({ embedding: { model, names } });
    const rgb = { width: 4, height: 4, channels: 3 as const, data: new Uint8Array(48) };
    const run = async () =>
      (await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule: RULE, boxes: [{ x: 0, y: 0, width: 4, height: 4 }] })).faces[0];
    expect(await run()).toMatchObject({ label: 'grace' });

    const file = encodeCorrectionsFile({
      version: 'v',
      descriptorModel: 'faceapi-128',
      lbph: [],
      embedding: [{ label: 'grace', feature: v(0.12, 0.78) }],
    });
    pipeline.setNegatives(decodeCorrectionsFile(file).negatives);
    expect(await run()).toMatchObject({ label: 'unknown', reason: 'corrected', candidate: { label: 'grace' } });

    pipeline.setNegatives(
      decodeCorrectionsFile(encodeCorrectionsFile({ version: 'w', descriptorModel: null, lbph: [], embedding: [] })).negatives,
    );
    expect(await run()).toMatchObject({ label: 'grace' });
  });
});
