import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LBPH_DEFAULTS } from '../../shared/lbph/lbph.js';
import { decodeLbphFile, encodeLbphFile } from '../../shared/recognition/model-files.js';
import { memoryFile } from '../storage/trained-files.js';
import { lbphFileWithout } from './kiosk-gallery.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-kiosk-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the kiosk copy of training.yml', () => {
  it('leaves the excluded out, read and written in pieces, in a file that leaves nothing behind', async () => {
    const labels = [0, 0, 1, 2, 1];
    const model = {
      ...LBPH_DEFAULTS,
      histograms: labels.map((l, i) => Float32Array.from({ length: 16384 }, (_, k) => ((k + i + l) % 11) / 144)),
      labels: Int32Array.from(labels),
    };
    const full = memoryFile(new TextEncoder().encode(encodeLbphFile(model, { ada: 0, bob: 1, cy: 2 })));
    const kiosk = await lbphFileWithout(full, null, new Set(['bob']), dir);
    expect(await fs.readdir(dir)).toEqual([]);
    const back = decodeLbphFile(new TextDecoder().decode(kiosk.bytesSync()));
    expect(back.labelIds).toEqual({ ada: 0, cy: 2 });
    expect([...back.model.labels]).toEqual([0, 0, 2]);
    expect(back.model.histograms).toEqual([model.histograms[0], model.histograms[1], model.histograms[3]]);
    const pieces: Uint8Array[] = [];
    for await (const piece of kiosk.chunks()) pieces.push(piece);
    expect(Buffer.concat(pieces).equals(Buffer.from(kiosk.bytesSync()))).toBe(true);
    expect(kiosk.size).toBe(Buffer.concat(pieces).length);
  });
});
