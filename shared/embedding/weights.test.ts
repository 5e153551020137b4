import { describe, expect, it } from 'vitest';
import { loadWeightMap, type WeightSpec } from './weights.js';

const specs: WeightSpec[] = [
  { name: 'a', shape: [2, 2], dtype: 'float32' },
  { name: 'b', shape: [3], dtype: 'float32', quantization: { dtype: 'uint8', scale: 0.5, min: -1 } },
];
const manifest = JSON.stringify([{ paths: ['m.bin'], weights: specs }]);

/** Records what it was asked to decode instead of making tensors. */
const decoder = {
  io: {
    decodeWeights: (data: ArrayBuffer, s: WeightSpec[]) => Object.fromEntries(s.map((w) => [w.name, { bytes: data.byteLength }])),
  },
};

function files(map: Record<string, string | Uint8Array>) {
  return async (name: string) => {
    const v = map[name];
    if (v === undefined) throw new Error(`ENOENT: ${name}`);
    return typeof v === 'string' ? new TextEncoder().encode(v) : v;
  };
}

describe('loadWeightMap', () => {
  it('reads the manifest and its shards, joined in order', async () => {
    const shards = JSON.stringify([{ paths: ['m1.bin', 'm2.bin'], weights: specs }]);
    const map = await loadWeightMap(
      decoder,
      files({ 'm-weights_manifest.json': shards, 'm1.bin': new Uint8Array(10), 'm2.bin': new Uint8Array(9) }),
      'm',
    );
    expect(map).toEqual({ a: { bytes: 19 }, b: { bytes: 19 } });
  });

  it('names the model and file when something is missing', async () => {
    await expect(loadWeightMap(decoder, files({}), 'm')).rejects.toThrow(
      'm: cannot read m-weights_manifest.json (ENOENT: m-weights_manifest.json)',
    );
    await expect(loadWeightMap(decoder, files({ 'm-weights_manifest.json': manifest }), 'm')).rejects.toThrow('m: cannot read m.bin');
  });

  it('rejects a truncated shard, a bad manifest, and shard names that leave the folder', async () => {
    const read = (m: string, bin = new Uint8Array(19)) => files({ 'm-weights_manifest.json': m, 'm.bin': bin });
    await expect(loadWeightMap(decoder, read(manifest, new Uint8Array(18)), 'm')).rejects.toThrow(
      'm.bin hold 18 bytes, the manifest describes 19',
    );
    await expect(loadWeightMap(decoder, read('{'), 'm')).rejects.toThrow(/not valid JSON/);
    await expect(loadWeightMap(decoder, read('[{}]'), 'm')).rejects.toThrow(/needs "paths" and "weights"/);
    const escaping = JSON.stringify([{ paths: ['../secret.bin'], weights: specs }]);
    await expect(loadWeightMap(decoder, read(escaping), 'm')).rejects.toThrow(/only plain file names/);
  });
});
