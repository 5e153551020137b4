import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { predictLbphBefore, rankLbphBefore } from '../../bench/ranking-before.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import type { GrayImage } from '../image/types.js';
import { chiSquareAlt, LBPH_DEFAULTS, labelDistanceLbph, lbpHistogram, predictLbph, rankLbph, trainLbph, type LbphModel } from './lbph.js';

const FIX = join(process.cwd(), 'test/fixtures/opencv/lbph');

interface Expected {
  train: { file: string; label: number }[];
  queries: { file: string; label: number; predicted: number; distance: number }[];
  histograms: Record<string, { size: number; idx: number[]; val: number[] }>;
  altParams: { radius: number; neighbors: number; gridX: number; gridY: number };
  altHistograms: Record<string, { size: number; idx: number[]; val: number[] }>;
  tie: { train: string[]; labels: number[]; query: string; predicted: number; distance: number };
  threshold: { threshold: number; query: string; predicted: number; distance: number };
}
const expected = JSON.parse(readFileSync(join(FIX, 'expected.json'), 'utf8')) as Expected;

async function loadGray(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(join(FIX, file)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(1);
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

function dense(h: { size: number; idx: number[]; val: number[] }): Float32Array {
  const out = new Float32Array(h.size);
  h.idx.forEach((i, k) => {
    out[i] = h.val[k];
  });
  return out;
}

/** Deterministic pseudo-random image (xorshift), with some flat patches for ties. */
function randomImage(w: number, h: number, seed: number, levels = 256): GrayImage {
  let s = seed >>> 0 || 1;
  const data = new Uint8Array(w * h);
  for (let i = 0; i < data.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    data[i] = Math.floor(((s >>> 0) / 2 ** 32) * levels) * Math.floor(255 / Math.max(1, levels - 1));
  }
  return { width: w, height: h, data };
}

describe('lbpHistogram', () => {
  for (const [file, h] of Object.entries(expected.histograms)) {
    it(`equals OpenCV's histogram bit for bit (${file})`, async () => {
      const ours = lbpHistogram(await loadGray(file));
      const theirs = dense(h);
      expect(ours.length).toBe(theirs.length);
      let mismatches = 0;
      for (let i = 0; i < ours.length; i++) if (!Object.is(ours[i], theirs[i])) mismatches++;
      expect(mismatches).toBe(0);
    });
  }

  for (const [file, h] of Object.entries(expected.altHistograms)) {
    it(`equals OpenCV's histogram with radius 2, 6 neighbours, 5x4 grid (${file})`, async () => {
      const ours = lbpHistogram(await loadGray(file), expected.altParams);
      const theirs = dense(h);
      expect(ours.length).toBe(theirs.length);
      let mismatches = 0;
      for (let i = 0; i < ours.length; i++) if (!Object.is(ours[i], theirs[i])) mismatches++;
      expect(mismatches).toBe(0);
    });
  }

  it('has 64 cells of 256 bins that each sum to ~1 for a 100x100 image', () => {
    const h = lbpHistogram(randomImage(100, 100, 7));
    expect(h.length).toBe(64 * 256);
    for (let c = 0; c < 64; c++) {
      let s = 0;
      for (let b = 0; b < 256; b++) s += h[c * 256 + b];
      expect(s).toBeCloseTo(1, 5);
    }
  });

  it('counts a flat image as all-ones patterns (ties resolve to "set")', () => {
    const img: GrayImage = { width: 20, height: 20, data: new Uint8Array(400).fill(9) };
    const h = lbpHistogram(img);
    for (let c = 0; c < 64; c++) expect(h[c * 256 + 255]).toBe(1);
  });

  it('honours other parameters (radius 2, 12 neighbours, 4x5 grid)', () => {
    const h = lbpHistogram(randomImage(60, 70, 3), { radius: 2, neighbors: 12, gridX: 4, gridY: 5 });
    expect(h.length).toBe(4 * 5 * 4096);
  });

  it('rejects bad input clearly', () => {
    expect(() => lbpHistogram({ width: 5, height: 5, data: new Uint8Array(25) })).toThrow(/too small/);
    expect(() => lbpHistogram({ width: 10, height: 10, data: new Uint8Array(5) })).toThrow(/length/);
    expect(() => lbpHistogram(randomImage(50, 50, 1), { neighbors: 0 })).toThrow(/neighbors/);
  });
});

describe('predictLbph', () => {
  it('matches OpenCV label and distance on every query (trained on the same crops)', async () => {
    const imgs = await Promise.all(expected.train.map((t) => loadGray(t.file)));
    const model = trainLbph(
      imgs,
      expected.train.map((t) => t.label),
    );
    let maxRel = 0;
    for (const q of expected.queries) {
      const r = predictLbph(model, await loadGray(q.file));
      expect(r.label, q.file).toBe(q.predicted);
      maxRel = Math.max(maxRel, Math.abs(r.distance - q.distance) / q.distance);
      expect(r.distance, q.file).toBe(q.distance); // same summation order: exact
    }
    expect(maxRel).toBeLessThan(0.01);
  });

  it('sparse prediction equals the dense compareHist formula', async () => {
    const imgs = await Promise.all(expected.train.slice(0, 6).map((t) => loadGray(t.file)));
    const model = trainLbph(imgs, [0, 1, 2, 3, 4, 5]);
    const q = lbpHistogram(await loadGray(expected.queries[3].file));
    const byHist = predictLbph(model, q);
    const dists = model.histograms.map((h) => chiSquareAlt(h, q));
    const best = dists.indexOf(Math.min(...dists));
    expect(byHist).toEqual({ label: best, distance: dists[best] });
  });

  it('keeps the first of tied samples, like OpenCV', async () => {
    const t = expected.tie;
    const model = trainLbph(await Promise.all(t.train.map(loadGray)), t.labels);
    expect(predictLbph(model, await loadGray(t.query))).toEqual({ label: t.predicted, distance: t.distance });
  });

  it('returns label -1 and DBL_MAX when nothing is below the threshold', async () => {
    const imgs = await Promise.all(expected.train.map((t) => loadGray(t.file)));
    const model = trainLbph(
      imgs,
      expected.train.map((t) => t.label),
      { threshold: expected.threshold.threshold },
    );
    const r = predictLbph(model, await loadGray(expected.threshold.query));
    expect(r).toEqual({ label: expected.threshold.predicted, distance: expected.threshold.distance });
    expect(r.distance).toBe(Number.MAX_VALUE);
  });

  it('survives structured clone (Worker transfer) and predicts the same', () => {
    const model = trainLbph([randomImage(100, 100, 1), randomImage(100, 100, 2)], [4, 5]);
    const copy = structuredClone(model) as LbphModel;
    const q = randomImage(100, 100, 2);
    expect(predictLbph(copy, q)).toEqual(predictLbph(model, q));
    expect(predictLbph(copy, q)).toEqual({ label: 5, distance: 0 });
  });

  it('notices a replaced histogram list', () => {
    const a = randomImage(100, 100, 1);
    const b = randomImage(100, 100, 2);
    const model = trainLbph([a], [1]);
    expect(predictLbph(model, b).label).toBe(1);
    const other = trainLbph([b], [2]);
    model.histograms = other.histograms;
    model.labels = other.labels;
    expect(predictLbph(model, b)).toEqual({ label: 2, distance: 0 });
  });

  it('falls back to the literal formula for odd stored values', () => {
    const h = new Float32Array(4);
    h.set([1e-30, 0.5, Infinity, 0]);
    const model: LbphModel = {
      radius: 1,
      neighbors: 8,
      gridX: 8,
      gridY: 8,
      threshold: Number.MAX_VALUE,
      histograms: [h, new Float32Array([0, 0.5, 0, 0.25])],
      labels: new Int32Array([1, 2]),
    };
    const q = new Float32Array([0, 0.25, 0, 0.25]);
    expect(predictLbph(model, q)).toEqual({ label: 2, distance: chiSquareAlt(model.histograms[1], q) });
  });

  it('rejects mismatched inputs clearly', () => {
    const model = trainLbph([randomImage(100, 100, 1)], [0]);
    expect(() => predictLbph(model, new Float32Array(10))).toThrow(/bins/);
    expect(() => trainLbph([], [])).toThrow(/empty/);
    expect(() => trainLbph([randomImage(100, 100, 1)], [1, 2])).toThrow(/labels/);
    expect(() => trainLbph([randomImage(100, 100, 1)], [1.5])).toThrow(/int32/);
  });
});

describe('rankLbph', () => {
  it("ranks people by their nearest sample, agreeing with predictLbph's nearest and with each person's distance", () => {
    // Random-ish gray faces from a fixed seed: six samples of three people.
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed & 0xff;
    };
    const face = (): GrayImage => ({ width: 32, height: 32, data: Uint8Array.from({ length: 32 * 32 }, next) });
    const images = [face(), face(), face(), face(), face(), face()];
    const labels = [0, 0, 1, 1, 2, 2];
    const model = trainLbph(images, labels);
    const query = lbpHistogram(face());
    const ranked = rankLbph(model, query, 5);
    expect(ranked.map((p) => p.labelId).sort()).toEqual([0, 1, 2]);
    const nearest = predictLbph(model, query);
    expect(ranked[0]).toEqual({ labelId: nearest.label, distance: nearest.distance });
    for (const p of ranked) {
      const own = Math.min(...model.histograms.flatMap((h, i) => (labels[i] === p.labelId ? [chiSquareAlt(h, query)] : [])));
      expect(p.distance).toBeCloseTo(own, 6);
      expect(labelDistanceLbph(model, query, p.labelId)).toBe(p.distance);
    }
    expect(rankLbph(model, query, 1)).toHaveLength(1);
    expect(labelDistanceLbph(model, query, 9)).toBe(Infinity);
  });
});

/** A crop shifted by up to 3 px with +-amp grey levels of noise: another capture of the same face. */
function jitter(img: GrayImage, random: () => number, amp: number): GrayImage {
  const { width, height, data } = img;
  const dx = Math.floor(random() * 7) - 3;
  const dy = Math.floor(random() * 7) - 3;
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sx = Math.min(width - 1, Math.max(0, x + dx));
      const sy = Math.min(height - 1, Math.max(0, y + dy));
      out[y * width + x] = Math.min(255, Math.max(0, data[sy * width + sx] + Math.round((random() * 2 - 1) * amp)));
    }
  }
  return { width, height, data: out };
}

describe('LBPH ranking in one pass', () => {
  it('gives the rankings and predictions of before #27, bit for bit, on galleries of the real crops', async () => {
    const crops = await Promise.all(expected.train.map((t) => loadGray(t.file)));
    const queries = await Promise.all(expected.queries.map((q) => loadGray(q.file)));
    const random = seededRandom(27);
    // 60 people x 3 captures: each person one of the fixture's crops, jittered; people share faces, as in a big gallery.
    const images = Array.from({ length: 180 }, (_, i) => jitter(crops[Math.floor(i / 3) % crops.length], random, 4 + (i % 5)));
    const labels = Array.from({ length: 180 }, (_, i) => ((Math.floor(i / 3) * 37) % 61) + 1);
    const model = trainLbph(images, labels);
    // An exact copy of sample 4 under another person: a query at it ties two people.
    model.histograms[100] = model.histograms[4];
    const histograms = [
      ...queries.map((q) => lbpHistogram(q)),
      model.histograms[4],
      ...Array.from({ length: 8 }, (_, i) => lbpHistogram(jitter(crops[i % crops.length], random, 8))),
    ];
    const limited = [0, 50, 70].map((threshold) => ({ ...model, threshold }));
    for (const h of histograms) {
      for (const k of [1, 3, 80]) expect(rankLbph(model, h, k)).toEqual(rankLbphBefore(model, h, k));
      expect(predictLbph(model, h)).toEqual(predictLbphBefore(model, h));
      for (const m of limited) expect(predictLbph(m, h)).toEqual(predictLbphBefore(m, h));
      const own = model.labels[7];
      const literal = Math.min(...model.histograms.flatMap((m, i) => (model.labels[i] === own ? [chiSquareAlt(m, h)] : [])));
      expect(labelDistanceLbph(model, h, own)).toBe(literal);
    }
    // Image queries go through the same path as their histograms.
    for (const q of queries) {
      expect(rankLbph(model, q)).toEqual(rankLbphBefore(model, lbpHistogram(q)));
      expect(predictLbph(model, q)).toEqual(predictLbphBefore(model, lbpHistogram(q)));
    }
    const tie = rankLbph(model, model.histograms[4]);
    expect(tie[0].distance).toBe(0);
    expect(tie[1].distance).toBe(0);
    expect(tie[0].labelId).toBeLessThan(tie[1].labelId);
  });

  it('gives the rankings of before on random sparse histograms, and on odd values', () => {
    const random = seededRandom(28);
    const size = 4 * 256;
    const sparse = () => {
      const h = new Float32Array(size);
      for (let j = 0; j < size; j++) if (random() < 0.2) h[j] = Math.fround(Math.ceil(random() * 9) / 40);
      return h;
    };
    const histograms = Array.from({ length: 200 }, sparse);
    const model: LbphModel = { ...LBPH_DEFAULTS, gridX: 2, gridY: 2, histograms, labels: Int32Array.from(histograms, (_, i) => i % 50) };
    for (let q = 0; q < 20; q++) {
      const h = q % 4 === 0 ? histograms[q * 3].slice() : sparse();
      if (q % 4 === 0) h[q] = Math.fround(h[q] + 0.025);
      expect(rankLbph(model, h)).toEqual(rankLbphBefore(model, h));
      expect(predictLbph(model, h)).toEqual(predictLbphBefore(model, h));
    }
    // A stored negative value (only from a hand-made file): the literal formula for every sample, as before.
    const odd: LbphModel = { ...model, histograms: histograms.map((h) => h.slice()) };
    odd.histograms[9][3] = -0.5;
    const h = sparse();
    expect(rankLbph(odd, h)).toEqual(rankLbphBefore(odd, h));
    expect(predictLbph(odd, h)).toEqual(predictLbphBefore(odd, h));
    // A query with a tiny value: the literal formula too.
    const tiny = sparse();
    tiny[7] = 1e-300 as number;
    expect(rankLbph(model, tiny)).toEqual(rankLbphBefore(model, tiny));
  });
});
