/**
 * Open-set accuracy, out of sample (#25 section 1, #34 section 1: "a benchmark that cannot flatter"). Part of a set
 * of people is enrolled, everyone is shown, and each recognizer (LBPH; the embedding recognizer with face-api's
 * 128-d and with Human's faceres 1024-d descriptor) is judged by the product's decision (decision.ts `decideFace`,
 * with the query face's quality measures and, for the embeddings, each person's cohort bound from cohort.ts).
 * `npm run bench open-set`, which then prints what ranking costs as the gallery grows (benchRankingCost).
 *
 * Every figure of a fitted rule is out of sample (open-set-protocol.ts `crossValidationTrials`): per seed the
 * people are shuffled, a third of the people seen once becomes the background cohort (never enrolled, never
 * shown), the rest split into halves A and B by identity; a rule is fitted on A's galleries and queries only and
 * reported on B, then the other way round, for SEEDS seeds. The fit (`fitRule`, a grid search over max, sureMax,
 * the margin, the cohort ratio and the quality floors) maximises the enrolled named right on DEGRADED queries
 * with strangers named and strangers named `high` under TARGETS (below), pooled over gallery sizes. The shipped defaults
 * (shared/recognition/rules.ts) are reported beside it on the same held-out halves, but they were chosen looking
 * at this same set: their figures are not out of sample.
 *
 * Queries are shown clean (as enrolled) and through degraded camera views (camera-degrade.ts: smaller, soft, side
 * light, JPEG); enrolment is always clean. Within a half its multi-photo people are split: one part enrolled (from
 * 1 photo, or up to 3, rotating which), the other shown in all their photos as strangers (every degraded view is
 * another photo of a stranger), then swapped; galleries of 5, 10, 20 and all are filled with the half's people
 * seen once, and those left over are shown as strangers. Rates come with 95% Wilson intervals; trials share
 * identities (the man is in every trial of his half), so the intervals are optimistic.
 *
 * Data, from licensed photos in test/fixtures/images (SOURCES.md): the thumbnails of Human's face-match
 * screenshot (identity-sets.ts): a man in 19 different photos and 6 more people in 2 to 4 photos each, the other
 * thumbnails and three single-face photos as people seen once. Few multi-photo identities: read the figures as
 * orientation, and the intervals as too narrow.
 *
 * A site's own set: OPEN_SET_DIR=<dir> with <dir>/<person>/<photo> (jpg, jpeg, png, webp; the largest Haar face
 * of each photo is used; a person with one photo is someone seen once) runs the same protocol on it:
 *   OPEN_SET_DIR=/data/people npm run bench open-set
 * OPEN_SET_SEEDS (default 5) and OPEN_SET_VIEWS (degraded views per face, default 3) size the run; OPEN_SET_TARGETS
 * and OPEN_SET_FIT_SHOTS change the fit (below).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { type EmbeddingModel, predictEmbedding, rankEmbedding, trainEmbedding } from '../shared/embedding/matcher.js';
import { rgbToGray } from '../shared/image/ops.js';
import type { GrayImage, Rect, RgbImage } from '../shared/image/types.js';
import { LBPH_DEFAULTS, type LbphModel, lbpHistogram, rankLbph } from '../shared/lbph/lbph.js';
import { type Cohort, cohortBound } from '../shared/recognition/cohort.js';
import type { DecisionRule, FaceQuality, QualityFloors } from '../shared/recognition/decision.js';
import { type DescriptorModel, defaultRule } from '../shared/recognition/rules.js';
import { alignedFace, FACE_ALIGNMENT } from '../shared/vision/eye-alignment.js';
import { detectMultiScale, type HaarCascade, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { FACEMATCH, MAYBE_KNOWN, MAYBE_SAME, MULTI_PHOTO, PEOPLE, thumbKey, UNCLEAR } from './identity-sets.js';
import { computeViews, DEFAULT_VIEWS, VIEW_SEED, type ViewSet, viewDistances } from './open-set-features.js';
import {
  type BoundOf,
  crossValidationTrials,
  EMBEDDING_GRID,
  ENROL_SHOTS,
  emptyTally,
  equalErrorRate,
  type FittedRule,
  type FitTargets,
  fitRule,
  GALLERY_SIZES,
  type GallerySize,
  LBPH_GRID,
  type OpenSetFace,
  type OpenSetTrial,
  type Ranker,
  rankTrials,
  type Tally,
  tally,
  verificationThreshold,
  wilson,
} from './open-set-protocol.js';
import { boundsFor, cohortSize, nearestCohortDistance, parseCohort } from '../shared/recognition/cohort.js';
import { qualityProbe } from './quality-probe.js';
import { type BenchRow, median } from './types.js';

const FACES = 'test/fixtures/images/faces';
const DETECT = { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } };

interface Photo {
  rgb: RgbImage;
  gray: GrayImage;
}

export interface BenchFace extends OpenSetFace {
  /** Where it came from, for the record: file and box. */
  source: string;
  photo: Photo;
  box: Rect;
}

async function loadPhoto(file: string): Promise<Photo> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgb: RgbImage = {
    width: info.width,
    height: info.height,
    channels: 3,
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
  };
  return { rgb, gray: rgbToGray(rgb) };
}

/** The built-in set: Human's face-match thumbnails (identities and people seen once) and three single-face photos. */
export async function builtInFaces(repoRoot: string, cascade: HaarCascade): Promise<BenchFace[]> {
  const shot = await loadPhoto(path.join(repoRoot, FACES, FACEMATCH));
  // The boxes identity-sets.ts keys: minNeighbors 3, below the screenshot's header.
  const thumbs = detectMultiScale(cascade, shot.gray, { ...DETECT, minNeighbors: 3 }).filter((b) => b.y > 280);
  const byKey = new Map(thumbs.map((b) => [thumbKey(b), b]));
  const faces: BenchFace[] = [];
  const claimed = new Set<string>();
  for (const [person, keys] of Object.entries(MULTI_PHOTO)) {
    for (const key of keys) {
      const box = byKey.get(key);
      if (!box) throw new Error(`open-set: thumbnail ${key} of ${person} not found by the cascade`);
      faces.push({ person, source: `${FACEMATCH} ${key}`, photo: shot, box });
      claimed.add(key);
    }
  }
  for (const box of thumbs) {
    const key = thumbKey(box);
    if (claimed.has(key) || UNCLEAR.has(key) || MAYBE_KNOWN.has(key)) continue;
    faces.push({
      person: `thumb ${key}`,
      source: `${FACEMATCH} ${key}`,
      photo: shot,
      box,
      ...(MAYBE_SAME.has(key) ? { strangerOnly: true } : {}),
    });
  }
  // Photos of one person each that are not among the thumbnails.
  for (const [file, box] of PEOPLE.filter(([f]) => ['astronaut.png', 'grace_hopper.jpg', 'messi5.jpg'].includes(f))) {
    faces.push({ person: file, source: file, photo: await loadPhoto(path.join(repoRoot, FACES, file)), box });
  }
  return faces;
}

/** A site's set: <dir>/<person>/<photo>, the largest face of each photo. */
export async function directoryFaces(dir: string, cascade: HaarCascade): Promise<{ faces: BenchFace[]; skipped: string[] }> {
  const faces: BenchFace[] = [];
  const skipped: string[] = [];
  const people = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const person of people) {
    const files = readdirSync(path.join(dir, person))
      .filter((f) => /\.(jpe?g|png|webp)$/i.test(f))
      .sort();
    for (const file of files) {
      const full = path.join(dir, person, file);
      const photo = await loadPhoto(full);
      const [box] = detectMultiScale(cascade, photo.gray, DETECT).sort((a, b) => b.width * b.height - a.width * a.height);
      if (box) faces.push({ person, source: `${person}/${file}`, photo, box });
      else skipped.push(`${person}/${file}`);
    }
  }
  return { faces, skipped };
}

export interface Recognizer {
  name: string;
  kind: 'lbph' | 'embedding';
  /** The rule of before #25 (a plain threshold). */
  plain: DecisionRule;
  defaults: DecisionRule;
  /** One feature per face, and the median time per face (ms). */
  features(faces: readonly BenchFace[]): Promise<{ features: Float32Array[]; msPerFace: number } | { unavailable: string }>;
  ranker(features: readonly Float32Array[]): Ranker;
}

const plainRule = (min: number, max: number, verifyMax: number): DecisionRule => ({
  min,
  max,
  sureMax: max,
  nearMax: max,
  ratioMax: null,
  verifyMax,
});

export function lbphRecognizer(eyeCascade: HaarCascade): Recognizer {
  return {
    name: 'lbph',
    kind: 'lbph',
    plain: { ...plainRule(4, 85, 75), nearMax: 100 },
    defaults: defaultRule('lbph'),
    async features(faces) {
      const times: number[] = [];
      const features = faces.map((f) => {
        const t0 = performance.now();
        // The product's normalisation (shared/recognition/pipeline.ts): eye-tilt aligned 100x100 crop.
        const h = lbpHistogram(alignedFace(f.photo.gray, f.box, eyeCascade));
        times.push(performance.now() - t0);
        return h;
      });
      return { features, msPerFace: median(times) };
    },
    ranker: (features) => (enrolled) => {
      const model: LbphModel = {
        ...LBPH_DEFAULTS,
        histograms: enrolled.map((e) => features[e.face]),
        labels: Int32Array.from(enrolled.map((e) => e.labelId)),
        faceAlignment: FACE_ALIGNMENT,
      };
      return (query) => rankLbph(model, features[query], Number.MAX_SAFE_INTEGER);
    },
  };
}

export function embeddingRecognizer(repoRoot: string, descriptor: DescriptorModel): Recognizer {
  return {
    name: `embedding ${descriptor}`,
    kind: 'embedding',
    plain: descriptor === 'faceapi-128' ? plainRule(0, 0.6, 0.6) : { ...defaultRule('embedding', descriptor), ratioMax: null },
    defaults: defaultRule('embedding', descriptor),
    async features(faces) {
      const engine = new NodeEmbeddingEngine({ modelDir: path.join(repoRoot, 'public/models/face-api'), descriptor });
      const status = await engine.load();
      if (!status.available) return { unavailable: status.reason ?? 'not loaded' };
      try {
        // Warm the nets (first calls compile kernels).
        for (const f of faces.slice(0, 3)) await engine.describeFaces(f.photo.rgb, [f.box]);
        const times: number[] = [];
        const features: Float32Array[] = [];
        for (const f of faces) {
          const t0 = performance.now();
          const [d] = await engine.describeFaces(f.photo.rgb, [f.box]);
          times.push(performance.now() - t0);
          features.push(d);
        }
        return { features, msPerFace: median(times) };
      } finally {
        engine.dispose();
      }
    },
    ranker: (features) => (enrolled) => {
      const model = trainEmbedding(
        enrolled.map((e) => ({ label: e.labelId, descriptor: features[e.face] })),
        features[0].length,
      );
      return (query) => rankEmbedding(model, features[query], Number.MAX_SAFE_INTEGER);
    },
  };
}

const SEEDS = Number(process.env.OPEN_SET_SEEDS ?? 5);
/** Degraded views per face (view 0 is the clean face); the degradations' seed is VIEW_SEED (open-set-features.ts). */
const VIEWS = Number(process.env.OPEN_SET_VIEWS ?? DEFAULT_VIEWS);
/**
 * The fit's targets on the half it is fitted on: stricter than the issue's (3% of strangers named, 1% `high`),
 * since a rule fitted on some people names more of other strangers: fitted for 3% / 1%, the held-out halves
 * measured 4.0% / 2.0% (faceapi-128, degraded). OPEN_SET_TARGETS="3,1" fits for the issue's own numbers.
 */
const TARGETS: FitTargets = (() => {
  const [named, high] = (process.env.OPEN_SET_TARGETS ?? '2,0.2').split(',').map(Number);
  return { strangersNamed: named, strangersHigh: high };
})();
/**
 * OPEN_SET_FIT_SHOTS=1 (or 3): the fit on everyone sees only the trials enrolled from that many photos (at most),
 * which says what a rule could reach, in sample, for each way of enrolling (#34: the ceiling). Unset: both.
 */
const FIT_SHOTS = process.env.OPEN_SET_FIT_SHOTS ? Number(process.env.OPEN_SET_FIT_SHOTS) : null;
/** 1:1 verification: the threshold for about this false-accept rate (percent), fitted on the fit half. */
const VERIFY_FAR = 1;

type RecognizerName = 'lbph' | DescriptorModel;
const RECOGNIZERS: readonly RecognizerName[] = ['lbph', 'faceapi-128', 'faceres-1024'];
const defaultsOf = (name: RecognizerName): DecisionRule => (name === 'lbph' ? defaultRule('lbph') : defaultRule('embedding', name));

const pct = (k: number, n: number) => (n ? (100 * k) / n : 0);
const f1 = (v: number) => v.toFixed(1);
const f3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '-');
/** A rate with its 95% Wilson interval, e.g. `2.1% [1.4-3.0]`. */
function rate(k: number, n: number): string {
  if (!n) return '-';
  const [lo, hi] = wilson(k, n);
  return `${f1(pct(k, n))}% [${f1(100 * lo)}-${f1(100 * hi)}]`;
}

export function describeRule(rule: DecisionRule): string {
  const q = rule.quality;
  return [
    `max ${f3(rule.max)}`,
    `sure ${f3(rule.sureMax)}`,
    `ratio ${rule.ratioMax === null ? 'off' : rule.ratioMax.toFixed(2)}`,
    `cohort ${rule.cohortRatio == null ? 'off' : rule.cohortRatio.toFixed(3)}`,
    q ? `floors ${q.minFacePx} px / ${q.minSharpness}, sure ${q.sureFacePx} px / ${q.sureSharpness}` : 'no quality floors',
  ].join(', ');
}

/** The person who took the largest share of all wrong names (strangers named and enrolled people misnamed). */
function magnet(t: Tally): string {
  let total = 0;
  let top: [string, number] = ['-', 0];
  for (const [who, n] of t.wrongNamesBy) {
    total += n;
    if (n > top[1]) top = [who, n];
  }
  return total ? `${top[0]}: ${f1(pct(top[1], total))}% (${top[1]}/${total})` : '-';
}

function perPersonMean(t: Tally): number {
  const people = [...t.perPerson.values()];
  return people.length ? people.reduce((n, p) => n + pct(p.right, p.shown), 0) / people.length : 0;
}

function tallyRow(query: string, gallery: string, shots: number, ruleName: string, t: Tally): string {
  return [
    query,
    gallery,
    shots === 1 ? '1 photo' : 'up to 3',
    ruleName,
    `${t.genuine} / ${t.strangers}`,
    `${rate(t.right, t.genuine)} (${f1(perPersonMean(t))}%)`,
    rate(t.wrong, t.genuine),
    rate(t.strangersNamed, t.strangers),
    rate(t.strangersHigh, t.strangers),
    rate(t.strangersAt65, t.strangers),
    `${rate(t.highWrong, t.highNames)} of ${t.highNames} / ${rate(t.unsureWrong, t.unsureNames)} of ${t.unsureNames}`,
    `${f1(pct(t.genuineLowQuality, t.genuine))}% / ${f1(pct(t.strangersLowQuality, t.strangers))}%`,
    magnet(t),
  ].join(' | ');
}

const TABLE_HEAD = [
  '| query | gallery | enrolled from | rule | shown: enrolled / strangers | enrolled named right (per-person mean) | enrolled named wrongly | strangers named | strangers named `high` | strangers at confidence >= 65 | wrong among `high` / `unsure` names | refused low_quality: enrolled / strangers | most wrong names to one person |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];

/** Median of fitted values; null (off) counts as the loosest value: ratio 1, cohort ratio infinite. */
function medianOf(values: (number | null | undefined)[], off: number): number {
  return median(values.map((v) => (v == null ? off : v)));
}

interface Cell {
  query: 'clean' | 'degraded';
  gallery: GallerySize | 'pooled';
  shots: number;
}

export interface OpenSetReport {
  lines: string[];
  rows: BenchRow[];
}

/**
 * Everything after the features: the cross-validated protocol, the fit per fold and recognizer, the held-out
 * figures beside the defaults', as markdown lines and bench rows. No model is run here.
 */
export function openSetReport(faces: readonly OpenSetFace[], set: ViewSet, views: number, seeds: number): OpenSetReport {
  const lines: string[] = [];
  const rows: BenchRow[] = [];
  const F = faces.length;
  const V = views + 1;
  const cv = crossValidationTrials(
    faces,
    Array.from({ length: seeds }, (_, i) => i + 1),
  );
  const qualities: FaceQuality[] = new Array(F * V);
  for (const v of set.views) {
    const m = v.measures;
    qualities[v.face * V + v.view] = {
      facePx: m.face_px,
      sharpness: m.sharpness,
      highlights: m.highlights,
      clipped: m.clipped,
      frontal: m.frontal,
    };
  }
  const quality = (face: number, view: number) => qualities[face * V + view];
  const shownViews = cv.trials.reduce((n, t) => n + t.shown.length * V, 0);
  lines.push(
    `${cv.people} people with several photos (${cv.photos} photos), ${cv.singles} people seen once, ${cv.strangerOnly} faces only ever shown as strangers; ` +
      `each face clean and in ${views} degraded camera views. ${seeds} seeds x 2 halves: ${cv.trials.length} trials, ${shownViews} views shown per recognizer.`,
  );
  lines.push(
    `Cohort per seed: ${cv.splits.map((s) => s.cohort.length).join(', ')} faces of people seen once (never enrolled, never shown). ` +
      'Rates with 95% Wilson intervals; trials share identities (the same people recur across rotations, galleries and seeds), so the intervals are optimistic.',
  );
  const cells: Cell[] = [];
  for (const query of ['clean', 'degraded'] as const) {
    for (const gallery of [...GALLERY_SIZES, 'pooled'] as const) for (const shots of ENROL_SHOTS) cells.push({ query, gallery, shots });
  }
  const inCell = (c: Cell, t: OpenSetTrial, view: number) =>
    (c.query === 'clean') === (view === 0) && t.shots === c.shots && (c.gallery === 'pooled' || t.gallery === c.gallery);

  const folds = [...new Set(cv.trials.map((t) => t.fold))].sort((a, b) => a - b);
  const otherHalf = (fold: number) => fold ^ 1;
  const suggested: string[] = [];
  for (const name of RECOGNIZERS) {
    const t0 = performance.now();
    const defaults = defaultsOf(name);
    lines.push('', `### ${name}`, '');
    if (name !== 'lbph' && set.unavailable[name]) {
      lines.push(`unavailable: ${set.unavailable[name]}`);
      continue;
    }
    const dist = viewDistances(set, F, V, name);
    let boundOf: BoundOf | undefined;
    if (name !== 'lbph') {
      const descriptorOf = (face: number) => set.views.find((v) => v.face === face && v.view === 0)?.descriptors[name] ?? null;
      const cohorts = new Map<number, Cohort>();
      const cache = new Map<string, number>();
      boundOf = (split, enrolledFaces) => {
        let cohort = cohorts.get(split.seed);
        if (!cohort) {
          const rowsOf = split.cohort.map(descriptorOf).filter((d): d is Float32Array => d !== null);
          const dim = rowsOf[0]?.length ?? 0;
          const descriptors = new Float32Array(rowsOf.length * dim);
          rowsOf.forEach((d, i) => {
            descriptors.set(d, i * dim);
          });
          cohort = { descriptorModel: name, dim, descriptors };
          cohorts.set(split.seed, cohort);
        }
        const key = `${split.seed}:${[...enrolledFaces].sort((a, b) => a - b).join(',')}`;
        let b = cache.get(key);
        if (b === undefined) {
          const samples = enrolledFaces.map(descriptorOf).filter((d): d is Float32Array => d !== null);
          b = cohortBound(samples, cohort);
          cache.set(key, b);
        }
        return b;
      };
    }
    // 1:1 pairs of the galleries of all, enrolled from 1 photo: per fold and query kind.
    const pairs = new Map<string, { genuine: number[]; impostor: number[] }>();
    const o = rankTrials(cv, dist, boundOf, (t, _i, rankOf) => {
      if (t.shots !== 1 || t.gallery !== 'all') return;
      for (const { face, truth } of t.shown) {
        for (let view = 0; view < V; view++) {
          const key = `${t.fold}:${view === 0 ? 'clean' : 'degraded'}`;
          const p = pairs.get(key) ?? { genuine: [], impostor: [] };
          pairs.set(key, p);
          for (const [labelId, d] of rankOf(face, view)) (labelId === truth ? p.genuine : p.impostor).push(d);
        }
      }
    });
    // The fit, per fold: that half's degraded queries only.
    const fitted = new Map<number, FittedRule | null>();
    const grid = name === 'lbph' ? LBPH_GRID : EMBEDDING_GRID;
    for (const fold of folds) {
      const fit = fitRule(o, (k) => o.view[k] > 0 && cv.trials[o.trial[k]].fold === fold, quality, defaults, grid, TARGETS);
      if (fit) {
        const fp = pairs.get(`${fold}:degraded`);
        if (fp?.impostor.length) {
          const v = verificationThreshold(fp, VERIFY_FAR);
          fit.rule.verifyMax = Math.round(Math.max(fit.rule.min, Math.min(fit.rule.max, v.at)) * 1e4) / 1e4;
        }
        // The fast search must agree with the product's decideFace on the half it was fitted on.
        const check = tally(
          o,
          cv.trials,
          () => fit.rule,
          quality,
          (k) => o.view[k] > 0 && cv.trials[o.trial[k]].fold === fold,
        );
        const agree =
          Math.abs(pct(check.right, check.genuine) - fit.fit.namedRight) < 1e-6 &&
          Math.abs(pct(check.strangersNamed, check.strangers) - fit.fit.strangersNamed) < 1e-6 &&
          Math.abs(pct(check.strangersHigh, check.strangers) - fit.fit.strangersHigh) < 1e-6;
        if (!agree) lines.push(`WARNING: fold ${fold}: the fit's figures differ from decideFace's (${JSON.stringify(fit.fit)})`);
      }
      fitted.set(fold, fit);
    }
    const heldOut = (t: OpenSetTrial): DecisionRule =>
      fitted.get(otherHalf(t.fold))?.rule ?? { ...defaults, max: defaults.min, sureMax: defaults.min };
    const rules: [string, (t: OpenSetTrial) => DecisionRule][] = [
      ['**held out** (fitted on the other half)', heldOut],
      ['defaults (chosen on this same set: not out of sample)', () => defaults],
    ];
    const tallies = rules.map(() => cells.map(() => emptyTally()));
    rules.forEach(([, ruleOf], ri) => {
      cells.forEach((c, ci) => {
        tally(o, cv.trials, ruleOf, quality, (k) => inCell(c, cv.trials[o.trial[k]], o.view[k]), tallies[ri][ci]);
      });
    });
    lines.push(...TABLE_HEAD);
    cells.forEach((c, ci) => {
      for (const [ri, [ruleName]] of rules.entries())
        lines.push(`| ${tallyRow(c.query, String(c.gallery), c.shots, ruleName, tallies[ri][ci])} |`);
    });
    // Magnets: who strangers were named as (degraded queries, all gallery sizes, 1 photo, held out).
    const magnetCell = cells.findIndex((c) => c.query === 'degraded' && c.gallery === 'pooled' && c.shots === 1);
    for (const [ri, [ruleName]] of rules.entries()) {
      const t = tallies[ri][magnetCell];
      const top = [...t.strangersBy].sort((a, b) => b[1] - a[1]).slice(0, 5);
      lines.push(
        '',
        `Strangers who took an enrolled person's name (degraded, 1 photo, all gallery sizes, ${ruleName.replace(/\*\*/g, '')}): ${t.strangersNamed} of ${t.strangers}; ` +
          (top.length ? top.map(([who, n]) => `${who} ${n} (${f1(pct(n, t.strangersNamed))}%)`).join(', ') : 'none'),
      );
    }
    // The fitted parameters per fold, their medians, and the defaults.
    lines.push(
      '',
      '| fitted on | max | sureMax | ratioMax | cohortRatio | minFacePx | minSharpness | sureFacePx | sureSharpness | verifyMax | on its fit half: named right / strangers named / `high` |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
    );
    const cellsOf = (r: DecisionRule) => {
      const q = r.quality;
      return [
        f3(r.max),
        f3(r.sureMax),
        r.ratioMax === null ? 'off' : r.ratioMax.toFixed(2),
        r.cohortRatio == null ? 'off' : r.cohortRatio.toFixed(3),
        q ? String(q.minFacePx) : '-',
        q ? String(q.minSharpness) : '-',
        q ? String(q.sureFacePx) : '-',
        q ? String(q.sureSharpness) : '-',
        f3(r.verifyMax),
      ];
    };
    const got: DecisionRule[] = [];
    for (const fold of folds) {
      const fit = fitted.get(fold);
      const label = `seed ${Math.floor(fold / 2)}, half ${fold % 2 ? 'B' : 'A'}`;
      if (!fit) {
        lines.push(`| ${label} | no rule meets the targets | | | | | | | | | |`);
        continue;
      }
      got.push(fit.rule);
      lines.push(
        `| ${label} | ${cellsOf(fit.rule).join(' | ')} | ${f1(fit.fit.namedRight)}% / ${f1(fit.fit.strangersNamed)}% / ${f1(fit.fit.strangersHigh)}% |`,
      );
    }
    if (got.length) {
      const ratio = medianOf(
        got.map((r) => r.ratioMax),
        1,
      );
      const cohort = medianOf(
        got.map((r) => r.cohortRatio),
        Infinity,
      );
      const q = (key: keyof QualityFloors) => median(got.map((r) => r.quality?.[key] ?? 0));
      const med: DecisionRule = {
        ...defaults,
        max: median(got.map((r) => r.max)),
        sureMax: median(got.map((r) => r.sureMax)),
        ratioMax: ratio >= 1 ? null : Math.round(ratio * 1000) / 1000,
        cohortRatio: Number.isFinite(cohort) ? Math.round(cohort * 1000) / 1000 : null,
        quality: {
          minFacePx: q('minFacePx'),
          minSharpness: q('minSharpness'),
          sureFacePx: q('sureFacePx'),
          sureSharpness: q('sureSharpness'),
        },
        verifyMax: median(got.map((r) => r.verifyMax)),
      };
      // The medians of parameters that interact are not a fitted rule (measured: as defaults they named 6.6% of
      // strangers): shown for how stable each parameter is, never suggested.
      lines.push(`| median of each parameter (not a rule) | ${cellsOf(med).join(' | ')} | |`);
    }
    // The same procedure on every person at once: the rule a default should be. Its held-out rows above are what to
    // expect of it on people it was not fitted on.
    const everyone = fitRule(
      o,
      (k) => o.view[k] > 0 && (FIT_SHOTS === null || cv.trials[o.trial[k]].shots === FIT_SHOTS),
      quality,
      defaults,
      grid,
      TARGETS,
    );
    if (everyone) {
      lines.push(
        `| **fitted on everyone: suggested defaults** | ${cellsOf(everyone.rule).join(' | ')} | ${f1(everyone.fit.namedRight)}% / ${f1(everyone.fit.strangersNamed)}% / ${f1(everyone.fit.strangersHigh)}% |`,
      );
      suggested.push(`- ${name}: ${describeRule(everyone.rule)}`);
    }
    lines.push(`| shipped defaults (rules.ts) | ${cellsOf(defaults).join(' | ')} | |`);

    // 1:1 verification on the held-out halves: the threshold fitted on the other half, and the defaults' verifyMax.
    for (const query of ['clean', 'degraded'] as const) {
      const all = { genuine: [] as number[], impostor: [] as number[] };
      let fa = 0;
      let ga = 0;
      let dfa = 0;
      let dga = 0;
      for (const fold of folds) {
        const p = pairs.get(`${fold}:${query}`);
        if (!p) continue;
        all.genuine.push(...p.genuine);
        all.impostor.push(...p.impostor);
        const at = fitted.get(otherHalf(fold))?.rule.verifyMax ?? -Infinity;
        const within = (d: number, t: number) => d >= defaults.min && d <= t;
        fa += p.impostor.filter((d) => within(d, at)).length;
        ga += p.genuine.filter((d) => within(d, at)).length;
        dfa += p.impostor.filter((d) => within(d, defaults.verifyMax)).length;
        dga += p.genuine.filter((d) => within(d, defaults.verifyMax)).length;
      }
      const { eer, at } = equalErrorRate(all);
      lines.push(
        '',
        `1:1 (${query} queries, galleries of all, 1 photo; ${all.genuine.length} genuine and ${all.impostor.length} impostor pairs): EER ${f1(eer)}% (at ${f3(at)}); ` +
          `verifyMax fitted on the other half for ${VERIFY_FAR}% false accepts: false accepts ${rate(fa, all.impostor.length)}, genuine accepted ${rate(ga, all.genuine.length)}; ` +
          `defaults' verifyMax ${f3(defaults.verifyMax)}: false accepts ${rate(dfa, all.impostor.length)}, genuine accepted ${rate(dga, all.genuine.length)}`,
      );
      rows.push({ name: `open-set ${name}, ${query} queries: 1:1 EER (held-out halves)`, unit: '%', lookout: eer });
    }
    lines.push('', `(${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s for ranking, fitting and reporting)`);

    for (const c of cells) {
      if (c.shots !== 1) continue;
      const ci = cells.indexOf(c);
      const h = tallies[0][ci];
      const d = tallies[1][ci];
      const where = `open-set ${name}, ${c.query} queries, gallery ${c.gallery}, enrolled from 1 photo`;
      rows.push(
        { name: `${where}, held out: enrolled named right`, unit: '%', lookout: pct(h.right, h.genuine) },
        {
          name: `${where}, held out: strangers named`,
          unit: '%',
          lookout: pct(h.strangersNamed, h.strangers),
          goal: `<= ${TARGETS.strangersNamed}%`,
        },
        {
          name: `${where}, held out: strangers named high`,
          unit: '%',
          lookout: pct(h.strangersHigh, h.strangers),
          goal: `<= ${TARGETS.strangersHigh}%`,
        },
      );
      if (c.gallery === 'pooled') {
        rows.push(
          { name: `${where}, defaults (not out of sample): enrolled named right`, unit: '%', lookout: pct(d.right, d.genuine) },
          { name: `${where}, defaults (not out of sample): strangers named`, unit: '%', lookout: pct(d.strangersNamed, d.strangers) },
        );
      }
    }
    const ms = set.msPerFace[name];
    if (ms !== undefined) rows.push({ name: `open-set ${name}: time per face view (features)`, unit: 'ms', lookout: ms });
  }
  if (suggested.length) {
    lines.push(
      '',
      `Suggested defaults (the fit on every person; fit targets strangers named <= ${TARGETS.strangersNamed}%, \`high\` <= ${TARGETS.strangersHigh}%; expect on other people what the held-out rows show):`,
      ...suggested,
    );
  }
  return { lines, rows };
}

/** A random unit vector (normal components by Box-Muller), written at `out[offset ..)`. */
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

/**
 * Ranking cost as the gallery grows: rankEmbedding (the 3 nearest people, what the decision rule needs) against
 * predictEmbedding (the nearest sample only, the matcher of before #25), on synthetic galleries of random unit
 * descriptors, 3 samples per person. Two kinds of query: an enrolled person's sample plus noise (distance about
 * 0.3, so the early exit of both searches works as with a real match) and a random stranger (every sample about
 * sqrt(2) away: the worst case for the early exit). Synthetic features only: no model is run.
 */
export function benchRankingCost(): BenchRow[] {
  const rows: BenchRow[] = [];
  const QUERIES = 15;
  for (const dim of [128, 1024]) {
    for (const people of [100, 1_000, 10_000]) {
      const random = seededRandom(dim * 100_003 + people);
      const samples = people * 3;
      const model: EmbeddingModel = { dim, descriptors: new Float32Array(samples * dim), labels: new Int32Array(samples) };
      for (let i = 0; i < samples; i++) {
        randomUnit(random, dim, model.descriptors, i * dim);
        model.labels[i] = Math.floor(i / 3);
      }
      const noise = new Float32Array(dim);
      const enrolledQuery = () => {
        const at = Math.floor(random() * samples) * dim;
        randomUnit(random, dim, noise);
        const q = new Float32Array(dim);
        for (let k = 0; k < dim; k++) q[k] = model.descriptors[at + k] + 0.3 * noise[k];
        return q;
      };
      const strangerQuery = () => {
        const q = new Float32Array(dim);
        randomUnit(random, dim, q);
        return q;
      };
      for (const [kind, make] of [
        ['an enrolled person', enrolledQuery],
        ['a stranger', strangerQuery],
      ] as const) {
        const queries = Array.from({ length: people >= 10_000 ? 5 : QUERIES }, make);
        // Warm both (JIT), then time them alternately per query, so a load spike on this machine hits both alike.
        rankEmbedding(model, queries[0]);
        predictEmbedding(model, queries[0]);
        const rankTimes: number[] = [];
        const predictTimes: number[] = [];
        for (const q of queries) {
          let t0 = performance.now();
          rankEmbedding(model, q);
          rankTimes.push(performance.now() - t0);
          t0 = performance.now();
          predictEmbedding(model, q);
          predictTimes.push(performance.now() - t0);
        }
        const rank = median(rankTimes);
        const predict = median(predictTimes);
        rows.push({
          name: `ranking cost, ${people.toLocaleString('en-US')} people x 3 random ${dim}-d descriptors, query ${kind}: rankEmbedding (3 nearest people)`,
          unit: 'ms',
          lookout: rank,
          reference: predict,
          referenceName: 'predictEmbedding (nearest sample)',
          ratio: rank / predict,
        });
      }
    }
  }
  return rows;
}

/**
 * What the per-person limits cost as the gallery grows (#34; synthetic descriptors, the shipped face-api cohort):
 * a person's cohort bound the first time a face ranks them (then kept with the model), and a query's distance to the
 * cohort's nearest face, beside the ranking itself measured in the same run.
 */
export function benchCohortCost(repoRoot: string): BenchRow[] {
  const cohort = parseCohort(readFileSync(path.join(repoRoot, 'public/models/cohort/faceapi-128.f32')), 'faceapi-128', 128);
  const rows: BenchRow[] = [];
  for (const people of [100, 1_000, 10_000]) {
    const random = seededRandom(people + 34);
    const dim = 128;
    const samples = people * 3;
    const model: EmbeddingModel = { dim, descriptors: new Float32Array(samples * dim), labels: new Int32Array(samples) };
    for (let i = 0; i < samples; i++) {
      randomUnit(random, dim, model.descriptors, i * dim);
      model.labels[i] = Math.floor(i / 3);
    }
    const query = model.descriptors.slice(0, dim);
    rankEmbedding(model, query);
    const rankTimes: number[] = [];
    for (let k = 0; k < 15; k++) {
      const t0 = performance.now();
      rankEmbedding(model, query);
      rankTimes.push(performance.now() - t0);
    }
    const bounds = boundsFor(model, cohort);
    bounds.of(0);
    const t0 = performance.now();
    const asked = Math.min(people, 2_000);
    for (let p = 1; p <= asked - 1; p++) bounds.of(p);
    const perPerson = (performance.now() - t0) / (asked - 1);
    const t1 = performance.now();
    for (let k = 0; k < 200; k++) nearestCohortDistance(query, cohort);
    const perQuery = (performance.now() - t1) / 200;
    const rank = median(rankTimes);
    const name = `cohort cost, ${people.toLocaleString('en-US')} people x 3 random 128-d descriptors, cohort of ${cohortSize(cohort)}`;
    rows.push(
      {
        name: `${name}: a person's bound, first time (then kept)`,
        unit: 'ms',
        lookout: perPerson,
        reference: rank,
        referenceName: 'rankEmbedding per query',
        ratio: perPerson / rank,
      },
      {
        name: `${name}: a query's nearest cohort face`,
        unit: 'ms',
        lookout: perQuery,
        reference: rank,
        referenceName: 'rankEmbedding per query',
        ratio: perQuery / rank,
      },
    );
  }
  return rows;
}

export async function benchOpenSet(repoRoot: string): Promise<BenchRow[]> {
  const started = performance.now();
  const models = path.join(repoRoot, 'public/models');
  const cascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_frontalface_alt2.xml'), 'utf8'));
  const eyeCascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_eye.xml'), 'utf8'));
  const dir = process.env.OPEN_SET_DIR;
  let faces: BenchFace[];
  let skipped: string[] = [];
  if (dir) ({ faces, skipped } = await directoryFaces(path.resolve(dir), cascade));
  else faces = await builtInFaces(repoRoot, cascade);
  const set = await computeViews(repoRoot, faces, eyeCascade, {
    views: VIEWS,
    seed: VIEW_SEED,
    descriptors: ['faceapi-128', 'faceres-1024'],
    log: (line) => console.log(line),
  });
  const featuresAt = performance.now();
  console.log(`\nOpen-set accuracy, out of sample, on ${dir ? `OPEN_SET_DIR ${dir}` : 'the built-in set (bench/identity-sets.ts)'}:`);
  if (skipped.length) console.log(`no face found in: ${skipped.join(', ')}`);
  const report = openSetReport(faces, set, VIEWS, SEEDS);
  for (const line of report.lines) console.log(line);
  if (!dir) for (const line of await qualityProbe(repoRoot, faces)) console.log(line);
  console.log(
    `\nopen-set: ${((performance.now() - started) / 1000).toFixed(0)} s in all (features ${((featuresAt - started) / 1000).toFixed(0)} s, protocol and fits ${((performance.now() - featuresAt) / 1000).toFixed(0)} s)\n`,
  );
  return [...report.rows, ...benchRankingCost(), ...benchCohortCost(repoRoot)];
}
