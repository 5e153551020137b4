/**
 * The compact browser segments (#27 §2) are made from the LBPH model in memory when the snapshot has it, not by
 * reading training.yml again (13 s at 1,000 people), and they are the segments the file would have given.
 */
import { describe, expect, it } from 'vitest';
import { LBPH_DEFAULTS } from '../../shared/lbph/lbph.js';
import { encodeLbphFile } from '../../shared/recognition/model-files.js';
import { makeSnapshot, type ModelFile, memoryFile } from '../storage/trained-files.js';
import { compactSet } from './kiosk-compact.js';

const labels = [0, 0, 1, 2, 1];
const model = {
  ...LBPH_DEFAULTS,
  histograms: labels.map((l, i) => Float32Array.from({ length: 16384 }, (_, k) => ((k + i + l) % 11) / 144)),
  labels: Int32Array.from(labels),
};
const labelIds = { ada: 0, bob: 1, cy: 2 };

/** training.yml's bytes, counting the reads of them. */
function countedFile(): { file: ModelFile; reads: () => number } {
  const inner = memoryFile(new TextEncoder().encode(encodeLbphFile(model, labelIds)));
  let reads = 0;
  const file: ModelFile = {
    size: inner.size,
    sha256: inner.sha256,
    chunks() {
      reads++;
      return inner.chunks();
    },
    bytesSync() {
      reads++;
      return inner.bytesSync();
    },
  };
  return { file, reads: () => reads };
}

describe('the compact set of a snapshot', () => {
  it('is made from the model in memory without reading training.yml, and equals the one made from the file', async () => {
    const inMemory = countedFile();
    const fromMemory = await compactSet(
      makeSnapshot({ lbph: inMemory.file, labelMap: null, embedding: null }, ['ada', 'bob', 'cy'], [null], { model, labelIds }),
    );
    expect(inMemory.reads()).toBe(0);

    const onDisk = countedFile();
    const fromFile = await compactSet(makeSnapshot({ lbph: onDisk.file, labelMap: null, embedding: null }, ['ada', 'bob', 'cy'], [null]));
    expect(onDisk.reads()).toBeGreaterThan(0);

    expect(fromMemory.version).toBe(fromFile.version);
    expect(fromMemory.lbph).toEqual(fromFile.lbph);
    expect(fromMemory.lbph?.people.map((p) => [p.label, p.samples])).toEqual([
      ['ada', 2],
      ['bob', 2],
      ['cy', 1],
    ]);
    expect([...fromMemory.segments.keys()].sort()).toEqual([...fromFile.segments.keys()].sort());
    for (const [hash, bytes] of fromMemory.segments)
      expect(Buffer.from(bytes).equals(Buffer.from(fromFile.segments.get(hash)!))).toBe(true);
  });
});
