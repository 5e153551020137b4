/**
 * LBPH model files at gallery scale (issue #27): 10,000 faces of synthetic histograms (as LBPH makes them: counts
 * over a cell's pixels) make a training.yml of about 1.2 GB, past V8's longest string (~536 M characters), where
 * writing or reading it as one string failed. Saved, read back equal, a person forgotten, within bounded memory.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LBPH_DEFAULTS, type LbphModel } from '../../shared/lbph/lbph.js';
import { ModelStore, TRAINING_FILE } from './model-store.js';

const FACES = Number(process.env.LOOKOUT_SCALE_FACES ?? 10_000);
const PER_PERSON = 3;
const BINS = 256;
const CELLS = LBPH_DEFAULTS.gridX * LBPH_DEFAULTS.gridY;
/** Pixels per cell of a 100 x 100 crop on an 8 x 8 grid, as LBPH's histograms count them. */
const CELL_PIXELS = 144;
/** V8's longest string on 64-bit (2^29 - 24 characters). */
const MAX_STRING = 2 ** 29 - 24;

/** Face i's histogram, the same for the same i: skewed towards the 58 uniform patterns, like real LBP codes. */
function histogram(i: number): Float32Array {
  let s = (i * 2654435761 + 1) >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  const h = new Float32Array(CELLS * BINS);
  for (let c = 0; c < CELLS; c++) {
    for (let p = 0; p < CELL_PIXELS; p++) {
      const bin = next() < 0.8 ? Math.floor(next() * 58) * 4 : Math.floor(next() * BINS);
      h[c * BINS + bin] += 1;
    }
    for (let b = 0; b < BINS; b++) h[c * BINS + b] /= CELL_PIXELS;
  }
  return h;
}

const label = (i: number) => Math.floor(i / PER_PERSON);

function syntheticModel(faces: number): { model: LbphModel; labelIds: Record<string, number> } {
  const histograms = Array.from({ length: faces }, (_, i) => histogram(i));
  const labels = Int32Array.from({ length: faces }, (_, i) => label(i));
  const labelIds: Record<string, number> = {};
  for (let id = 0; id <= label(faces - 1); id++) labelIds[`person ${id}`] = id;
  return { model: { ...LBPH_DEFAULTS, histograms, labels }, labelIds };
}

function sameHistogram(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
  return true;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

describe(`LBPH model files at ${FACES} faces`, () => {
  it('are saved, read back equal and forget a person, in pieces and bounded memory', { timeout: 600_000 }, async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-scale-'));
    dirs.push(dir);
    const store = new ModelStore(dir);
    await store.init();
    const times: Record<string, number> = {};
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    try {
      let t = performance.now();
      const { model, labelIds } = syntheticModel(FACES);
      times.generate = performance.now() - t;
      t = performance.now();
      const saved = await store.saveLbph(model, labelIds);
      times.save = performance.now() - t;
      const size = (await fs.stat(path.join(dir, TRAINING_FILE))).size;
      expect(saved.yaml.size).toBe(size);
      if (FACES >= 5_000) expect(size).toBeGreaterThan(MAX_STRING); // what one string could not hold

      {
        t = performance.now();
        const loaded = (await store.loadLbph())!;
        times.load = performance.now() - t;
        expect(loaded.files.lbph!.sha256).toBe(saved.yaml.sha256);
        expect(loaded.labelIds).toEqual(labelIds);
        expect(Array.from(loaded.model.labels)).toEqual(Array.from(model.labels));
        const params = (m: LbphModel) => ({ ...m, histograms: [], labels: [], labelsInfo: [] });
        expect(params(loaded.model)).toEqual(params(model));
        let differ = 0;
        for (let i = 0; i < FACES; i++) if (!sameHistogram(loaded.model.histograms[i], model.histograms[i])) differ++;
        expect(differ).toBe(0);
      }

      // A deleted person is forgotten in the saved files (read and rewritten in pieces too).
      t = performance.now();
      const removed = await store.forgetLabel('person 1');
      times.forget = performance.now() - t;
      expect(removed.lbph).toBe(PER_PERSON);
      t = performance.now();
      const after = (await store.loadLbph())!;
      times.reload = performance.now() - t;
      expect(after.model.labels.length).toBe(FACES - PER_PERSON);
      expect(after.labelIds['person 1']).toBeUndefined();
      expect(after.model.labels.includes(1)).toBe(false);
      expect(sameHistogram(after.model.histograms[PER_PERSON], model.histograms[2 * PER_PERSON])).toBe(true);
      expect(sameHistogram(after.model.histograms.at(-1)!, model.histograms.at(-1)!)).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    const figures = Object.entries(times)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
      .join(', ');
    const modelBytes = FACES * CELLS * BINS * 4;
    console.log(
      `LBPH files at ${FACES} faces: ${figures}; peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB (the histograms alone: ${(modelBytes / 2 ** 20).toFixed(0)} MiB per model in memory)`,
    );
    // Bounded: the model in memory twice at most (the one written and one read) and the test's own, not its text.
    expect(peak).toBeLessThan(3 * modelBytes + 768 * 2 ** 20);
  });

  it('is read by OpenCV as written (a smaller model of the same kind, written in pieces)', { timeout: 120_000 }, async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-scale-cv-'));
    dirs.push(dir);
    const store = new ModelStore(dir);
    const { model, labelIds } = syntheticModel(30);
    await store.saveLbph(model, labelIds);
    const script = `
import sys, json, cv2, numpy as np
r = cv2.face.LBPHFaceRecognizer_create()
r.read(sys.argv[1])
h = r.getHistograms()
print(json.dumps({"n": len(h), "labels": r.getLabels().ravel().tolist(), "sum0": float(np.sum(h[0])), "first": h[5].ravel()[:600].tolist()}))
`;
    const out = spawnSync('/usr/bin/python3', ['-c', script, path.join(dir, TRAINING_FILE)], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(out.status, out.stderr).toBe(0);
    const cv = JSON.parse(out.stdout) as { n: number; labels: number[]; sum0: number; first: number[] };
    expect(cv.n).toBe(30);
    expect(cv.labels).toEqual(Array.from(model.labels));
    expect(cv.first).toEqual(Array.from(model.histograms[5].subarray(0, 600)));
    expect(cv.sum0).toBeCloseTo(CELLS, 3);
  });
});
