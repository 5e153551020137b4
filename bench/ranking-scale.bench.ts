/**
 * `npm run bench ranking` (#27 section 3): what ranking a face against the gallery costs at 100, 1,000 and 10,000
 * people (3 samples each), the product's rankEmbedding / rankLbph against the rankings before #27 (frozen in
 * bench/ranking-before.ts) in the same run, alternating query by query so a load spike hits both alike, after
 * checking that both name the same people at the same distances. Synthetic features, no photo of any gallery:
 * - embedding: random unit descriptors (128-d as face-api's, 1024-d as faceres'), queries an enrolled sample plus
 *   noise (distance about 0.3) and a stranger (a fresh random vector);
 * - LBPH: histograms of the LBPH fixtures' 100x100 crops (test/fixtures/opencv/lbph) each shifted by up to 3 px and
 *   given pixel noise, so they are as sparse as real ones (about 3,000 of 16,384 bins set); the query is another
 *   such crop.
 * Then the whole embedding recognition per face (descriptor + ranking, faceapi-128 on tfjs WASM in this process,
 * the worker's path) at each gallery size, the figure #27's target is about: p50 at 10,000 people within 1.5x of
 * its p50 at 100.
 * Env: RANKING_SIZES=100,1000 (people counts), RANKING_SKIP_LBPH=1, RANKING_SKIP_RECOGNISE=1.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { type EmbeddingModel, rankEmbedding } from '../shared/embedding/matcher.js';
import type { GrayImage, Rect, RgbImage } from '../shared/image/types.js';
import { rgbToGray } from '../shared/image/ops.js';
import { LBPH_DEFAULTS, lbpHistogram, type LbphModel, predictLbph, rankLbph } from '../shared/lbph/lbph.js';
import type { PersonDistance } from '../shared/recognition/ranking.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { predictLbphBefore, rankEmbeddingBefore, rankLbphBefore } from './ranking-before.js';
import { type BenchRow, median } from './types.js';

const SIZES = (process.env.RANKING_SIZES ?? '100,1000,10000').split(',').map(Number);
const BEFORE = 'before #27 (bench/ranking-before.ts, same run)';

function randomUnit(random: () => number, dim: number, out: Float32Array, offset = 0): void {
  let norm = 0;
  for (let k = 0; k < dim; k++) {
    const v = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    out[offset + k] = v;
    norm += v * v;
  }
  norm = Math.sqrt(norm);
  for (let k = 0; k < dim; k++) out[offset + k] /= norm;
}

function syntheticEmbedding(people: number, dim: number, seed: number): EmbeddingModel {
  const random = seededRandom(seed);
  const samples = people * 3;
  const model: EmbeddingModel = { dim, descriptors: new Float32Array(samples * dim), labels: new Int32Array(samples) };
  for (let i = 0; i < samples; i++) {
    randomUnit(random, dim, model.descriptors, i * dim);
    model.labels[i] = Math.floor(i / 3);
  }
  return model;
}

function same(a: PersonDistance[], b: PersonDistance[], what: string): void {
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${what}: rankings differ: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
}

/** Median ms of `now` and of `before` over the queries, alternating, after one untimed call of each (JIT, caches). */
function timePair<Q>(queries: Q[], now: (q: Q) => unknown, before: (q: Q) => unknown): { now: number; before: number } {
  now(queries[0]);
  before(queries[0]);
  const a: number[] = [];
  const b: number[] = [];
  for (const q of queries) {
    let t0 = performance.now();
    now(q);
    a.push(performance.now() - t0);
    t0 = performance.now();
    before(q);
    b.push(performance.now() - t0);
  }
  return { now: median(a), before: median(b) };
}

function embeddingRows(): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const dim of [128, 1024]) {
    for (const people of SIZES) {
      const model = syntheticEmbedding(people, dim, dim * 100_003 + people);
      const random = seededRandom(people + dim);
      const samples = model.labels.length;
      const enrolled = () => {
        const at = Math.floor(random() * samples) * dim;
        const noise = new Float32Array(dim);
        randomUnit(random, dim, noise);
        return Float32Array.from({ length: dim }, (_, k) => model.descriptors[at + k] + 0.3 * noise[k]);
      };
      const stranger = () => {
        const q = new Float32Array(dim);
        randomUnit(random, dim, q);
        return q;
      };
      for (const [kind, make] of [
        ['an enrolled person', enrolled],
        ['a stranger', stranger],
      ] as const) {
        const queries = Array.from({ length: people >= 10_000 ? 9 : 25 }, make);
        for (const q of queries) same(rankEmbedding(model, q), rankEmbeddingBefore(model, q), `embedding ${dim}-d ${people}`);
        const t = timePair(
          queries,
          (q) => rankEmbedding(model, q),
          (q) => rankEmbeddingBefore(model, q),
        );
        rows.push({
          name: `rankEmbedding, ${people.toLocaleString('en-US')} people x 3 random ${dim}-d descriptors, query ${kind}`,
          unit: 'ms',
          lookout: t.now,
          reference: t.before,
          referenceName: BEFORE,
          ratio: t.now / t.before,
        });
      }
    }
  }
  return rows;
}

async function loadGray(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(file).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

/** A crop shifted by (dx, dy) (edges repeated) with uniform noise of +-amp grey levels. */
function jitter(img: GrayImage, random: () => number, amp = 6): GrayImage {
  const { width, height, data } = img;
  const dx = Math.floor(random() * 7) - 3;
  const dy = Math.floor(random() * 7) - 3;
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(height - 1, Math.max(0, y + dy));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(width - 1, Math.max(0, x + dx));
      const v = data[sy * width + sx] + Math.round((random() * 2 - 1) * amp);
      out[y * width + x] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  return { width, height, data: out };
}

async function lbphRows(root: string): Promise<BenchRow[]> {
  const fix = path.join(root, 'test/fixtures/opencv/lbph');
  const expected = JSON.parse(readFileSync(path.join(fix, 'expected.json'), 'utf8')) as { train: { file: string }[] };
  const crops = await Promise.all(expected.train.map((t) => loadGray(path.join(fix, t.file))));
  const rows: BenchRow[] = [];
  for (const people of SIZES) {
    const random = seededRandom(people * 7 + 1);
    const samples = people * 3;
    const histograms: Float32Array[] = [];
    const labels = new Int32Array(samples);
    for (let i = 0; i < samples; i++) {
      histograms.push(lbpHistogram(jitter(crops[i % crops.length], random)));
      labels[i] = Math.floor(i / 3);
    }
    const model: LbphModel = { ...LBPH_DEFAULTS, histograms, labels };
    const queries = Array.from({ length: people >= 10_000 ? 5 : 15 }, () =>
      lbpHistogram(jitter(crops[Math.floor(random() * crops.length)], random, 10)),
    );
    let t0 = performance.now();
    rankLbph(model, queries[0]);
    const prepareMs = performance.now() - t0;
    t0 = performance.now();
    rankLbphBefore(model, queries[0]);
    const prepareBeforeMs = performance.now() - t0;
    for (const q of queries) {
      same(rankLbph(model, q), rankLbphBefore(model, q), `LBPH ${people}`);
      const [a, b] = [predictLbph(model, q), predictLbphBefore(model, q)];
      if (a.label !== b.label || a.distance !== b.distance) throw new Error(`LBPH ${people}: predictions differ`);
    }
    const t = timePair(
      queries,
      (q) => rankLbph(model, q),
      (q) => rankLbphBefore(model, q),
    );
    rows.push({
      name: `rankLbph, ${people.toLocaleString('en-US')} people x 3 histograms of 100x100 crops (first call, which prepares the model: ${prepareMs.toFixed(0)} ms, before ${prepareBeforeMs.toFixed(0)} ms)`,
      unit: 'ms',
      lookout: t.now,
      reference: t.before,
      referenceName: BEFORE,
      ratio: t.now / t.before,
    });
  }
  return rows;
}

async function loadRgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

/**
 * Descriptor + ranking per face (faceapi-128), as the embedding worker runs it, at each gallery size. The sizes
 * take turns within each round (and after / before within each size), so the machine's load falls on all alike;
 * switching models costs the after side a copy of the templates into the SIMD memory each time (a few ms at
 * 10,000 people), which one installed model never pays.
 */
async function recogniseRows(root: string): Promise<BenchRow[]> {
  const engine = new NodeEmbeddingEngine({ modelDir: path.join(root, 'public/models/face-api') });
  const status = await engine.load();
  if (!status.available) return [{ name: `embedding recognition: unavailable (${status.reason})`, unit: 'ms', lookout: NaN }];
  const cascade = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
  const rgb = await loadRgb(path.join(root, 'test/fixtures/images/faces/grace_hopper.jpg'));
  const boxes: Rect[] = detectMultiScale(cascade, rgbToGray(rgb), {
    scaleFactor: 1.1,
    minNeighbors: 5,
    minSize: { width: 30, height: 30 },
  }).slice(0, 1);
  const [own] = await engine.describeFaces(rgb, boxes);
  const models = SIZES.map((people) => {
    const model = syntheticEmbedding(people, own.length, 128 * 100_003 + people);
    // The photo's own descriptor is person 0's first sample: the face is enrolled.
    model.descriptors.set(own, 0);
    return model;
  });
  const recognise = async (model: EmbeddingModel, rank: typeof rankEmbedding) => {
    const t0 = performance.now();
    const [d] = await engine.describeFaces(rgb, boxes);
    rank(model, d);
    return performance.now() - t0;
  };
  const after: number[][] = SIZES.map(() => []);
  const before: number[][] = SIZES.map(() => []);
  for (let round = -1; round < 15; round++) {
    for (let j = 0; j < SIZES.length; j++) {
      const at = (j + Math.max(0, round)) % SIZES.length;
      const a = await recognise(models[at], rankEmbedding);
      const b = await recognise(models[at], rankEmbeddingBefore);
      // Round -1 warms up (JIT, the SIMD module, the prepared models).
      if (round >= 0) {
        after[at].push(a);
        before[at].push(b);
      }
    }
  }
  const first = median(after[0]);
  return SIZES.map((people, at) => {
    const p50 = median(after[at]);
    return {
      name: `embedding recognise per face (faceapi-128 descriptor + ranking), ${people.toLocaleString('en-US')} people x 3, p50`,
      unit: 'ms',
      lookout: p50,
      reference: median(before[at]),
      referenceName: BEFORE,
      ratio: p50 / median(before[at]),
      goal: at > 0 ? `<= 1.5x the p50 at ${SIZES[0]} people: ${(p50 / first).toFixed(2)}x` : undefined,
    };
  });
}

export async function benchRankingScale(root: string): Promise<BenchRow[]> {
  const rows = embeddingRows();
  if (!process.env.RANKING_SKIP_LBPH) rows.push(...(await lbphRows(root)));
  if (!process.env.RANKING_SKIP_RECOGNISE) rows.push(...(await recogniseRows(root)));
  return rows;
}
