/**
 * `npm run bench precision` (#27 section 2): does the browser's copy of the embedding model keep every decision
 * when its descriptors are stored as float16, or as int8 with one scale per descriptor, instead of float32?
 *
 * The gallery is stored at the precision (shared/embedding/quantise.ts atPrecision: what the browser decodes); the
 * probe is a live float32 descriptor, as in the browser. Each probe is ranked (rankEmbedding) and decided
 * (decideFace, the calibrated default rule of its descriptor model) against the float32 gallery and against the
 * reduced one; a decision changes when named/unknown, the name, the reason or the certainty differs.
 *
 * Real data: the product's embedding nets (face-api 128-d and faceres 1024-d) on the open-set benchmark's faces
 * (Human's face-match screenshot: one man in 19 photos, 6 people in 2 to 4, people seen once; three single-face
 * photos) under its protocol (bench/open-set-protocol.ts: enrolled from 1 and 3 photos, other photos shown,
 * strangers shown), then every face the cascade finds in those photos and the group photos as a gallery of its
 * own, each face shown left out of it (a stranger with its real nearest neighbours).
 * Synthetic, for scale: people drawn to match the real descriptors (per-value mean and spread of the real faces;
 * a person's captures spread so that genuine and impostor distances have the real medians), galleries of 100,
 * 1,000 and 10,000 people x 3 captures, probes half new captures of enrolled people and half strangers.
 */
// First: before anything can load onnxruntime-node (run on its own).
import '../server/telemetry-off.js';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { type EmbeddingModel, euclideanDistance, rankEmbedding } from '../shared/embedding/matcher.js';
import { atPrecision, type DescriptorPrecision } from '../shared/embedding/quantise.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { RgbImage } from '../shared/image/types.js';
import { type DecisionRule, decideFace, type FaceDecision } from '../shared/recognition/decision.js';
import type { PersonDistance } from '../shared/recognition/ranking.js';
import { type DescriptorModel, defaultRule } from '../shared/recognition/rules.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { builtInFaces, embeddingRecognizer } from './open-set.bench.js';
import { runProtocol } from './open-set-protocol.js';
import { type BenchRow, median } from './types.js';

/** PRECISION_REDUCED=int8,int8-dim measures only those (the faceres int8 question of #27 needs no float16 rerun). */
const REDUCED = (process.env.PRECISION_REDUCED ?? 'float16,int8,int8-dim').split(',') as DescriptorPrecision[];

/** What a reduced gallery did to a set of decisions. */
export interface PrecisionComparison {
  decisions: number;
  /** Named vs unknown, or another name. */
  changedName: number;
  /** Also a changed unknown reason or certainty. */
  changedAny: number;
  /** Largest |d - d'| over every ranked person's distance. */
  maxDistanceChange: number;
  /** For each changed decision: how far its float32 figures were from the nearest threshold they are compared with. */
  changedMargins: number[];
  /** The closest any float32 decision came to a threshold (distance units; the margin rule as d1 - ratioMax d2). */
  closestCall: number;
  /** Decisions whose float32 figures lie within 0.001 of a threshold (the ones a small change could turn). */
  within1e3: number;
}

export function emptyComparison(): PrecisionComparison {
  return { decisions: 0, changedName: 0, changedAny: 0, maxDistanceChange: 0, changedMargins: [], closestCall: Infinity, within1e3: 0 };
}

/** How far a ranking's figures are from the rule's thresholds (in distance units). */
function margin(ranked: readonly PersonDistance[], rule: DecisionRule): number {
  if (!ranked.length) return Infinity;
  const d1 = ranked[0].distance;
  let m = Math.min(Math.abs(d1 - rule.max), Math.abs(d1 - rule.sureMax), Math.abs(d1 - rule.nearMax), Math.abs(d1 - rule.min));
  if (rule.ratioMax !== null && ranked.length > 1) m = Math.min(m, Math.abs(d1 - rule.ratioMax * ranked[1].distance));
  return m;
}

const decisionKey = (d: FaceDecision) => (d.known ? `named ${d.labelId} ${d.certainty}` : `unknown ${d.reason}`);
const nameKey = (d: FaceDecision) => (d.known ? `named ${d.labelId}` : 'unknown');

/** Adds one probe's float32 and reduced rankings to `into`. */
export function compareRankings(
  into: PrecisionComparison,
  exact: readonly PersonDistance[],
  reduced: readonly PersonDistance[],
  rule: DecisionRule,
): void {
  const a = decideFace(exact, rule);
  const b = decideFace(reduced, rule);
  into.decisions++;
  const byLabel = new Map(reduced.map((p) => [p.labelId, p.distance]));
  for (const p of exact) {
    const other = byLabel.get(p.labelId);
    if (other !== undefined) into.maxDistanceChange = Math.max(into.maxDistanceChange, Math.abs(other - p.distance));
  }
  const m = margin(exact, rule);
  into.closestCall = Math.min(into.closestCall, m);
  if (m < 1e-3) into.within1e3++;
  if (decisionKey(a) !== decisionKey(b)) {
    into.changedAny++;
    into.changedMargins.push(m);
  }
  if (nameKey(a) !== nameKey(b)) into.changedName++;
}

function modelOf(descriptors: Float32Array, labels: Int32Array, dim: number): EmbeddingModel {
  return { dim, descriptors, labels };
}

// ---------------------------------------------------------------- real descriptors

export interface RealFaces {
  /** The open-set faces (person, descriptor). */
  labelled: { person: string; strangerOnly?: boolean; descriptor: Float32Array }[];
  /** Every face the cascade finds in the fixture photos (duplicates of `labelled` among them). */
  all: Float32Array[];
}

const GROUP_PHOTOS = ['human-facematch.jpg', 'sample1.jpg', 'sample2.jpg', 'sample3.jpg', 'sample4.jpg', 'sample5.jpg', 'sample6.jpg'];

/** The fixture faces described by the product's net for `descriptor` (null when its weights are missing). */
export async function realFaces(repoRoot: string, descriptor: DescriptorModel): Promise<RealFaces | null> {
  const cascade = parseHaarCascade(readFileSync(path.join(repoRoot, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
  const faces = await builtInFaces(repoRoot, cascade);
  const got = await embeddingRecognizer(repoRoot, descriptor).features(faces);
  if ('unavailable' in got) return null;
  const labelled = faces.map((f, i) => ({
    person: f.person,
    ...(f.strangerOnly ? { strangerOnly: true } : {}),
    descriptor: got.features[i],
  }));
  const engine = new NodeEmbeddingEngine({ modelDir: path.join(repoRoot, 'public/models/face-api'), descriptor });
  const status = await engine.load();
  if (!status.available) return null;
  const all: Float32Array[] = [];
  try {
    for (const file of GROUP_PHOTOS) {
      const { data, info } = await sharp(path.join(repoRoot, 'test/fixtures/images/faces', file))
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const rgb: RgbImage = {
        width: info.width,
        height: info.height,
        channels: 3,
        data: new Uint8Array(data.buffer, data.byteOffset, data.length),
      };
      const boxes = detectMultiScale(cascade, rgbToGray(rgb), { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } });
      for (const d of await engine.describeFaces(rgb, boxes)) if (d) all.push(Float32Array.from(d));
    }
  } finally {
    engine.dispose();
  }
  return { labelled, all };
}

/** A gallery's descriptors as the browser holds them: a precision, or a function (the codec's round trip, in tests). */
export type Reduce = DescriptorPrecision | ((descriptors: Float32Array, dim: number) => Float32Array);

/** The open-set protocol (1 and 3 photos enrolled) and the leave-one-out gallery of every face, reduced by `precision`. */
export function compareReal(real: RealFaces, rule: DecisionRule, precision: Reduce): PrecisionComparison {
  const reduce = (d: Float32Array, dim: number) => (typeof precision === 'function' ? precision(d, dim) : atPrecision(d, dim, precision));
  const out = emptyComparison();
  const dim = real.labelled[0].descriptor.length;
  const feats = real.labelled.map((f) => f.descriptor);
  for (const shots of [1, 3]) {
    runProtocol(real.labelled, shots, (enrolled) => {
      const d = new Float32Array(enrolled.length * dim);
      enrolled.forEach((e, i) => {
        d.set(feats[e.face], i * dim);
      });
      const labels = Int32Array.from(enrolled.map((e) => e.labelId));
      const exact = modelOf(d, labels, dim);
      const reduced = modelOf(reduce(d, dim), labels, dim);
      return (query) => {
        const a = rankEmbedding(exact, feats[query]);
        compareRankings(out, a, rankEmbedding(reduced, feats[query]), rule);
        return a;
      };
    });
  }
  // Every face its own person; each shown with itself left out (its nearest are real look-alikes and itself elsewhere).
  const n = real.all.length;
  for (let skip = 0; skip < n; skip++) {
    const d = new Float32Array((n - 1) * dim);
    const labels = new Int32Array(n - 1);
    for (let i = 0, j = 0; i < n; i++) {
      if (i === skip) continue;
      d.set(real.all[i], j * dim);
      labels[j] = i;
      j++;
    }
    const a = rankEmbedding(modelOf(d, labels, dim), real.all[skip]);
    const b = rankEmbedding(modelOf(reduce(d, dim), labels, dim), real.all[skip]);
    compareRankings(out, a, b, rule);
  }
  return out;
}

// ---------------------------------------------------------------- synthetic descriptors like the real ones

export interface Distribution {
  dim: number;
  mean: Float64Array;
  sd: Float64Array;
  /** A capture's share of the spread (0..1): genuine / impostor distance, as the real medians. */
  within: number;
  /** Scale each descriptor to length 1 (faceres' are L2-normalised). */
  unit: boolean;
}

/** The per-value mean and spread of real descriptors, and their genuine / impostor distance medians. */
export function fitDistribution(real: RealFaces, unit: boolean): Distribution & { genuine: number; impostor: number } {
  const all = real.all.length ? real.all : real.labelled.map((f) => f.descriptor);
  const dim = all[0].length;
  const mean = new Float64Array(dim);
  const sd = new Float64Array(dim);
  for (const d of all) for (let k = 0; k < dim; k++) mean[k] += d[k] / all.length;
  for (const d of all) for (let k = 0; k < dim; k++) sd[k] += (d[k] - mean[k]) ** 2 / all.length;
  for (let k = 0; k < dim; k++) sd[k] = Math.sqrt(sd[k]);
  const genuine: number[] = [];
  const impostor: number[] = [];
  const l = real.labelled;
  for (let i = 0; i < l.length; i++) {
    for (let j = i + 1; j < l.length; j++) {
      const dist = euclideanDistance(l[i].descriptor, l[j].descriptor);
      if (l[i].person === l[j].person) genuine.push(dist);
      else if (!l[i].strangerOnly && !l[j].strangerOnly) impostor.push(dist);
    }
  }
  const g = median(genuine);
  const im = median(impostor);
  return { dim, mean, sd, within: Math.min(0.95, g / im), unit, genuine: g, impostor: im };
}

function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A person's centre: the overall mean plus their share of the spread. */
function centre(dist: Distribution, g: () => number): Float64Array {
  const a = Math.sqrt(1 - dist.within ** 2);
  return Float64Array.from(dist.mean, (m, k) => m + dist.sd[k] * a * g());
}

function capture(dist: Distribution, c: Float64Array, g: () => number, out: Float32Array, at: number): void {
  const v = Array.from(c, (x, k) => x + dist.sd[k] * dist.within * g());
  const norm = dist.unit ? Math.hypot(...v) : 1;
  for (let k = 0; k < v.length; k++) out[at + k] = v[k] / norm;
}

/** People x 3 captures against `probes` probes (half new captures of enrolled people, half strangers). */
export function compareSynthetic(
  dist: Distribution,
  people: number,
  probes: number,
  rule: DecisionRule,
  seed: number,
): { precision: DescriptorPrecision; result: PrecisionComparison }[] {
  const g = gaussian(seededRandom(seed));
  const dim = dist.dim;
  const per = 3;
  const centres: Float64Array[] = [];
  const d = new Float32Array(people * per * dim);
  const labels = new Int32Array(people * per);
  for (let p = 0; p < people; p++) {
    const c = centre(dist, g);
    centres.push(c);
    for (let s = 0; s < per; s++) {
      capture(dist, c, g, d, (p * per + s) * dim);
      labels[p * per + s] = p;
    }
  }
  const queries: Float32Array[] = [];
  for (let i = 0; i < probes; i++) {
    const q = new Float32Array(dim);
    capture(dist, i % 2 === 0 ? centres[Math.floor((i / 2) * 7919) % people] : centre(dist, g), g, q, 0);
    queries.push(q);
  }
  const exact = modelOf(d, labels, dim);
  const base = queries.map((q) => rankEmbedding(exact, q));
  return REDUCED.map((precision) => {
    const reduced = modelOf(atPrecision(d, dim, precision), labels, dim);
    const result = emptyComparison();
    queries.forEach((q, i) => {
      compareRankings(result, base[i], rankEmbedding(reduced, q), rule);
    });
    return { precision, result };
  });
}

// ---------------------------------------------------------------- the suite

const f = (v: number) => (v === Infinity ? '-' : v < 0.001 ? v.toExponential(1) : v.toFixed(4));

function line(what: string, precision: string, r: PrecisionComparison): string {
  const worst = r.changedMargins.length ? f(Math.max(...r.changedMargins)) : '-';
  return (
    `${what} ${precision}: ${r.decisions} decisions, ${r.changedName} changed name/unknown, ${r.changedAny} changed at all` +
    ` (farthest from a threshold: ${worst}); max |distance change| ${f(r.maxDistanceChange)}; closest float32 call ${f(r.closestCall)},` +
    ` ${r.within1e3} within 0.001`
  );
}

export async function benchDescriptorPrecision(repoRoot: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  console.log(
    `precision: load average ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')} on ${os.cpus().length} cores`,
  );
  const sizes = (process.env.PRECISION_PEOPLE ?? '100,1000,10000').split(',').map(Number);
  // PRECISION_MODELS=faceres-1024: one descriptor model only (int8 is a per-model decision).
  const models = (process.env.PRECISION_MODELS ?? 'faceapi-128,faceres-1024').split(',') as DescriptorModel[];
  for (const descriptor of models) {
    const rule = defaultRule('embedding', descriptor);
    const real = await realFaces(repoRoot, descriptor);
    if (!real) {
      console.log(`precision ${descriptor}: the net is not available, skipped`);
      continue;
    }
    for (const precision of REDUCED) {
      const r = compareReal(real, rule, precision);
      console.log(line(`precision ${descriptor} real (${real.labelled.length} labelled faces, ${real.all.length} in all)`, precision, r));
      rows.push({
        name: `descriptor precision ${descriptor} ${precision}, real faces: changed decisions`,
        unit: 'decisions',
        lookout: r.changedAny,
        goal: '0',
      });
    }
    const dist = fitDistribution(real, descriptor === 'faceres-1024');
    console.log(
      `precision ${descriptor} synthetic: fitted to the real faces (genuine median ${dist.genuine.toFixed(3)}, impostor ${dist.impostor.toFixed(3)})`,
    );
    for (const people of sizes) {
      // 1024-d galleries cost 8x a probe: fewer probes at the largest sizes.
      const probes = descriptor === 'faceres-1024' && people >= 10000 ? 300 : people >= 10000 ? 600 : 1000;
      const t0 = performance.now();
      for (const { precision, result } of compareSynthetic(dist, people, probes, rule, 27 + people)) {
        console.log(line(`precision ${descriptor} synthetic ${people} people x 3`, precision, result));
        rows.push({
          name: `descriptor precision ${descriptor} ${precision}, synthetic ${people} people x 3: changed decisions`,
          unit: 'decisions',
          lookout: result.changedAny,
        });
        rows.push({
          name: `descriptor precision ${descriptor} ${precision}, synthetic ${people} people x 3: max distance change`,
          unit: 'distance',
          lookout: result.maxDistanceChange,
        });
      }
      console.log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  }
  return rows;
}

if (process.argv[1]?.endsWith('descriptor-precision.bench.ts')) {
  await benchDescriptorPrecision(process.cwd());
}
