/**
 * The open-set protocol of `npm run bench open-set` (open-set.bench.ts) and its regression test
 * (test/recognition/open-set.test.ts), with no I/O: which faces are enrolled and which are shown in each trial, and
 * what a decision rule (shared/recognition/decision.ts) makes of the rankings.
 *
 * People with several photos are split into two folds; in each fold one half is enrolled and the other half never
 * is, so their photos are strangers. People with one photo are split the same way: one half enrolled (a gallery
 * that can be confused with, never shown again), the other half shown as strangers. An enrolled person is enrolled
 * from `shots` of their photos (at most all but one), rotating which photos, and shown every other photo of theirs.
 */
import { decideFace, type DecisionRule, type FaceQuality, personLimit } from '../shared/recognition/decision.js';
import { nearestPeople, type PersonDistance } from '../shared/recognition/ranking.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

export interface OpenSetFace {
  /** Who it is (a person's photos share it). */
  person: string;
  /** Never enrolled, only shown as a stranger (people whose identity is not sure). */
  strangerOnly?: boolean;
}

/** Ranks every enrolled person for a query face, nearest first (one entry per person: their nearest sample). */
export type Ranker = (enrolled: readonly { face: number; labelId: number }[]) => (query: number) => PersonDistance[];

export interface QueryOutcome {
  fold: number;
  rotation: number;
  query: number;
  /** The query's person's label id when enrolled; -1 for a stranger. */
  truth: number;
  /** Every enrolled person, nearest first. */
  ranked: PersonDistance[];
  /** The trial's people by label id (shared by the trial's outcomes). */
  people: readonly string[];
}

export interface ProtocolRun {
  outcomes: QueryOutcome[];
  trials: number;
  /** Multi-photo people and their photos, singles (one photo), for the record. */
  people: number;
  photos: number;
  singles: number;
}

/** Faces grouped by person, in first-seen order. */
function byPerson(faces: readonly OpenSetFace[]): { person: string; faces: number[]; strangerOnly: boolean }[] {
  const groups = new Map<string, { person: string; faces: number[]; strangerOnly: boolean }>();
  faces.forEach((f, i) => {
    const g = groups.get(f.person) ?? { person: f.person, faces: [], strangerOnly: false };
    g.faces.push(i);
    g.strangerOnly ||= f.strangerOnly === true;
    groups.set(f.person, g);
  });
  return [...groups.values()];
}

/** Runs every trial: 2 folds, and in each as many rotations as its enrolled multi-photo person has photos. */
export function runProtocol(faces: readonly OpenSetFace[], shots: number, ranker: Ranker): ProtocolRun {
  const groups = byPerson(faces);
  const multi = groups.filter((g) => g.faces.length > 1 && !g.strangerOnly);
  const singles = groups.filter((g) => g.faces.length === 1 && !g.strangerOnly);
  const outcomes: QueryOutcome[] = [];
  let trials = 0;
  for (let fold = 0; fold < 2; fold++) {
    const enrolledMulti = multi.filter((_, i) => i % 2 === fold);
    const enrolledSingles = singles.filter((_, i) => i % 2 === fold);
    const rotations = Math.max(1, ...enrolledMulti.map((g) => g.faces.length));
    for (let rotation = 0; rotation < rotations; rotation++) {
      trials++;
      const enrolled: { face: number; labelId: number }[] = [];
      const enrolledFaces = new Set<number>();
      const labelOf = new Map<string, number>();
      const enrol = (person: string, face: number) => {
        const labelId = labelOf.get(person) ?? labelOf.size;
        labelOf.set(person, labelId);
        enrolled.push({ face, labelId });
        enrolledFaces.add(face);
      };
      for (const g of enrolledMulti) {
        const n = g.faces.length;
        for (let j = 0; j < Math.min(shots, n - 1); j++) enrol(g.person, g.faces[(rotation + j) % n]);
      }
      for (const g of enrolledSingles) enrol(g.person, g.faces[0]);
      const rank = ranker(enrolled);
      const people = [...labelOf.keys()];
      faces.forEach((f, query) => {
        if (enrolledFaces.has(query)) return;
        const label = labelOf.get(f.person);
        // A single enrolled person's only photo is enrolled: nothing of theirs is left to show.
        outcomes.push({ fold, rotation, query, truth: label ?? -1, ranked: rank(query), people });
      });
    }
  }
  return {
    outcomes,
    trials,
    people: multi.length,
    photos: multi.reduce((n, g) => n + g.faces.length, 0),
    singles: singles.length + groups.filter((g) => g.strangerOnly).reduce((n, g) => n + g.faces.length, 0),
  };
}

export interface OpenSetFigures {
  /** Shown photos of enrolled people. */
  genuine: number;
  /** Shown faces of people not enrolled. */
  strangers: number;
  /** Share of genuine faces named right (rank-1 and accepted), percent. */
  namedRight: number;
  /** The same share per enrolled person, averaged over people (a person with many photos counts once). */
  namedRightPerPerson: number;
  /** Share of genuine faces named as someone else, percent. */
  namedWrong: number;
  /** Share of strangers given a name, percent. */
  strangersNamed: number;
  /** Share of strangers named with certainty `high`, percent. */
  strangersNamedSure: number;
}

const pct = (n: number, d: number) => (d ? (100 * n) / d : 0);

/**
 * What `rule` makes of the outcomes, each face decided by the product's rule (decideFace; every shown face is a
 * picture of its own, so one name per picture, assignNames, changes nothing here).
 */
export function evaluate(outcomes: readonly QueryOutcome[], rule: DecisionRule): OpenSetFigures {
  let genuine = 0;
  let strangers = 0;
  let right = 0;
  let wrong = 0;
  let named = 0;
  let sure = 0;
  const perPerson = new Map<string, { shown: number; right: number }>();
  for (const o of outcomes) {
    const d = decideFace(o.ranked, rule);
    if (o.truth >= 0) {
      genuine++;
      const p = perPerson.get(o.people[o.truth]) ?? { shown: 0, right: 0 };
      p.shown++;
      perPerson.set(o.people[o.truth], p);
      if (d.known && d.labelId === o.truth) {
        right++;
        p.right++;
      } else if (d.known) wrong++;
    } else {
      strangers++;
      if (d.known) named++;
      if (d.known && d.certainty === 'high') sure++;
    }
  }
  return {
    genuine,
    strangers,
    namedRight: pct(right, genuine),
    namedRightPerPerson: perPerson.size ? [...perPerson.values()].reduce((n, p) => n + pct(p.right, p.shown), 0) / perPerson.size : 0,
    namedWrong: pct(wrong, genuine),
    strangersNamed: pct(named, strangers),
    strangersNamedSure: pct(sure, strangers),
  };
}

/** 1:1 pairs: each shown face against its own enrolled person (genuine) and every other enrolled person (impostor). */
export function verificationPairs(outcomes: readonly QueryOutcome[]): { genuine: number[]; impostor: number[] } {
  const genuine: number[] = [];
  const impostor: number[] = [];
  for (const o of outcomes) {
    for (const p of o.ranked) (p.labelId === o.truth ? genuine : impostor).push(p.distance);
  }
  return { genuine, impostor };
}

/** Equal error rate (percent) of 1:1 pairs, and the distance where false accepts and false rejects cross. */
export function equalErrorRate(pairs: { genuine: number[]; impostor: number[] }): { eer: number; at: number } {
  const g = [...pairs.genuine].sort((a, b) => a - b);
  const im = [...pairs.impostor].sort((a, b) => a - b);
  if (!g.length || !im.length) return { eer: 0, at: 0 };
  let best = { gap: Infinity, eer: 0, at: 0 };
  let gi = 0;
  let ii = 0;
  for (const t of [...g, ...im].sort((a, b) => a - b)) {
    while (gi < g.length && g[gi] <= t) gi++;
    while (ii < im.length && im[ii] <= t) ii++;
    const frr = 1 - gi / g.length;
    const far = ii / im.length;
    const gap = Math.abs(frr - far);
    if (gap < best.gap) best = { gap, eer: (100 * (frr + far)) / 2, at: t };
  }
  return { eer: best.eer, at: best.at };
}

/** The largest distance whose 1:1 false-accept rate is at most `far` (percent), and the genuine accept rate there. */
export function verificationThreshold(
  pairs: { genuine: number[]; impostor: number[] },
  far: number,
): { at: number; accepted: number; falseAccepts: number } {
  const im = [...pairs.impostor].sort((a, b) => a - b);
  const allowed = Math.floor((far / 100) * im.length);
  // Just under the first impostor past the allowance.
  const at = allowed < im.length ? im[allowed] - 1e-9 : Infinity;
  const fa = im.filter((d) => d <= at).length;
  return { at, accepted: pct(pairs.genuine.filter((d) => d <= at).length, pairs.genuine.length), falseAccepts: pct(fa, im.length) };
}

/** `base` with its limit at `max` (sure at the limit, the near band and verification kept within it) and `rest`. */
function ruleAtLimit(base: DecisionRule, max: number, rest: Partial<DecisionRule>): DecisionRule {
  return { ...base, max, sureMax: max, nearMax: Math.max(base.nearMax, max), verifyMax: Math.min(base.verifyMax, max), ...rest };
}

export interface Calibration {
  rule: DecisionRule;
  /** Figures per outcome set (e.g. enrolled from 1 photo, from up to 3). */
  figures: OpenSetFigures[];
}

/**
 * The rule with the highest mean rank-1 whose strangers named stay at or under `target` percent in every outcome
 * set, searching `max` over the nearest distances seen and `ratioMax` over 0.5..1 and off; `sureMax` is then the
 * largest distance at which strangers named with certainty `high` stay at or under `sureTarget` percent.
 * `base` gives min, nearMax and verifyMax. Null when no rule meets the target.
 */
export function calibrate(
  sets: readonly (readonly QueryOutcome[])[],
  base: DecisionRule,
  target: number,
  sureTarget: number,
  fixedMax?: number,
): Calibration | null {
  const d1s = sets
    .flat()
    .map((o) => o.ranked[0]?.distance ?? Infinity)
    .filter((d) => Number.isFinite(d) && d >= base.min)
    .sort((a, b) => a - b);
  if (!d1s.length) return null;
  const maxes =
    fixedMax !== undefined
      ? [fixedMax]
      : [...new Set(Array.from({ length: 120 }, (_, i) => d1s[Math.min(d1s.length - 1, Math.floor((i / 120) * d1s.length))]))];
  const ratios: (number | null)[] = [null, ...Array.from({ length: 51 }, (_, i) => Math.round((0.5 + i * 0.01) * 100) / 100)];
  let best: Calibration | null = null;
  let bestScore = -1;
  for (const max of maxes) {
    for (const ratioMax of ratios) {
      const rule = ruleAtLimit(base, max, { ratioMax });
      const figures = sets.map((s) => evaluate(s, rule));
      if (figures.some((f) => f.strangersNamed > target)) continue;
      const score = figures.reduce((n, f) => n + f.namedRight, 0) / figures.length;
      // Ties: the stricter rule (fewer strangers named).
      if (score > bestScore + 1e-9 || (Math.abs(score - bestScore) <= 1e-9 && best && strangerSum(figures) < strangerSum(best.figures))) {
        bestScore = score;
        best = { rule, figures };
      }
    }
  }
  if (!best) return null;
  // sureMax: the largest distance up to max where strangers named `high` stay within sureTarget everywhere.
  const rule = best.rule;
  let sureMax = rule.min;
  const step = Math.max(1, Math.floor(d1s.length / 400));
  for (let i = 0; i < d1s.length; i += step) {
    const t = d1s[i];
    if (t > rule.max) break;
    const figures = sets.map((s) => evaluate(s, { ...rule, sureMax: t }));
    if (figures.every((f) => f.strangersNamedSure <= sureTarget)) sureMax = t;
  }
  const calibrated = { ...rule, sureMax };
  return { rule: calibrated, figures: sets.map((s) => evaluate(s, calibrated)) };
}

function strangerSum(figures: readonly OpenSetFigures[]): number {
  return figures.reduce((n, f) => n + f.strangersNamed, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Cross-validated open-set protocol (#34 section 1: "a benchmark that cannot flatter").
//
// Per seed, the people are shuffled: a third of the people seen once is the background COHORT (never enrolled,
// never shown: it only gives the embedding recognizers' per-person bounds, cohort.ts); everyone else is split into
// halves A and B (multi-photo people alternate, so do the people seen once and the stranger-only faces). A rule is
// fitted on one half (its galleries and queries only) and reported on the other, then the halves swap: every
// reported figure is out of sample. Within a half, its multi-photo people are split in two groups; one group is
// enrolled (from 1 photo, or up to 3, rotating which) and the other shown as strangers in all their photos, then
// the groups swap. The gallery is filled up to 5, 10, 20 or all with the half's people seen once; those not
// enrolled are shown as strangers. Every face is shown clean (view 0, as enrolled) and in degraded camera views.
// ---------------------------------------------------------------------------------------------------------------

export const GALLERY_SIZES = [5, 10, 20, 'all'] as const;
export type GallerySize = (typeof GALLERY_SIZES)[number];
export const ENROL_SHOTS = [1, 3] as const;

export interface OpenSetTrial {
  seed: number;
  /** seed * 2 + half: the half the trial's people belong to. */
  fold: number;
  half: 0 | 1;
  gallery: GallerySize;
  shots: number;
  /** The trial's people by label id. */
  people: string[];
  enrolled: { face: number; labelId: number }[];
  /** Faces shown: truth is the label id of an enrolled person, -1 for a stranger. */
  shown: { face: number; truth: number }[];
}

export interface OpenSetSplit {
  seed: number;
  /** The cohort's faces (clean views). */
  cohort: number[];
  /** People (names) of each half. */
  halves: [string[], string[]];
}

export interface CrossValidation {
  splits: OpenSetSplit[];
  trials: OpenSetTrial[];
  people: number;
  photos: number;
  singles: number;
  strangerOnly: number;
}

function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Every trial of `seeds` seeds x 2 halves (see above). */
export function crossValidationTrials(faces: readonly OpenSetFace[], seeds: readonly number[]): CrossValidation {
  const groups = byPerson(faces);
  const multi = groups.filter((g) => g.faces.length > 1 && !g.strangerOnly);
  const singles = groups.filter((g) => g.faces.length === 1 && !g.strangerOnly);
  const strangerOnly = groups.filter((g) => g.strangerOnly);
  const splits: OpenSetSplit[] = [];
  const trials: OpenSetTrial[] = [];
  for (const seed of seeds) {
    const random = seededRandom(seed * 7919 + 34);
    const m = shuffled(multi, random);
    const s = shuffled(singles, random);
    const o = shuffled(strangerOnly, random);
    const cohort = s.filter((_, i) => i % 3 === 0);
    const rest = s.filter((_, i) => i % 3 !== 0);
    const halfOf = <T>(list: readonly T[], h: number) => list.filter((_, i) => i % 2 === h);
    const halves = [0, 1].map((h) => ({
      multi: halfOf(m, h),
      singles: shuffled(halfOf(rest, h), random),
      strangerOnly: halfOf(o, h),
    }));
    splits.push({
      seed,
      cohort: cohort.map((g) => g.faces[0]),
      halves: halves.map((h) => [...h.multi, ...h.singles, ...h.strangerOnly].map((g) => g.person)) as [string[], string[]],
    });
    halves.forEach((h, half) => {
      // The half's multi-photo people in two groups: one enrolled, the other strangers; then the other way round.
      const groupsOf = [h.multi.filter((_, i) => i % 2 === 0), h.multi.filter((_, i) => i % 2 === 1)];
      for (let arrangement = 0; arrangement < 2; arrangement++) {
        const enrolledMulti = groupsOf[arrangement];
        const strangerMulti = groupsOf[1 - arrangement];
        if (!enrolledMulti.length) continue;
        const rotations = Math.max(...enrolledMulti.map((g) => g.faces.length));
        for (const gallery of GALLERY_SIZES) {
          const fill = gallery === 'all' ? h.singles.length : Math.max(0, Math.min(h.singles.length, gallery - enrolledMulti.length));
          const enrolledSingles = h.singles.slice(0, fill);
          const strangerSingles = h.singles.slice(fill);
          for (const shots of ENROL_SHOTS) {
            for (let rotation = 0; rotation < rotations; rotation++) {
              const people: string[] = [];
              const enrolled: { face: number; labelId: number }[] = [];
              const shown: { face: number; truth: number }[] = [];
              for (const g of enrolledMulti) {
                const labelId = people.push(g.person) - 1;
                const n = g.faces.length;
                const take = Math.min(shots, n - 1);
                const mine = new Set<number>();
                for (let j = 0; j < take; j++) mine.add(g.faces[(rotation + j) % n]);
                for (const face of mine) enrolled.push({ face, labelId });
                for (const face of g.faces) if (!mine.has(face)) shown.push({ face, truth: labelId });
              }
              for (const g of enrolledSingles) enrolled.push({ face: g.faces[0], labelId: people.push(g.person) - 1 });
              for (const g of [...strangerMulti, ...strangerSingles, ...h.strangerOnly]) {
                for (const face of g.faces) shown.push({ face, truth: -1 });
              }
              trials.push({ seed, fold: seed * 2 + half, half: half as 0 | 1, gallery, shots, people, enrolled, shown });
            }
          }
        }
      }
    });
  }
  return {
    splits,
    trials,
    people: multi.length,
    photos: multi.reduce((n, g) => n + g.faces.length, 0),
    singles: singles.length,
    strangerOnly: strangerOnly.reduce((n, g) => n + g.faces.length, 0),
  };
}

/**
 * Distances from every view of every face to every clean face (view 0) under one recognizer:
 * d[(face * views + view) * faces + template]. Infinity where either side has no feature.
 */
export interface ViewDistances {
  faces: number;
  views: number;
  d: Float64Array;
}

/** The per-person cohort bound of an enrolled person from their enrolled faces (cohort.ts), or undefined. */
export type BoundOf = (split: OpenSetSplit, faces: readonly number[]) => number | undefined;

/**
 * What a recognizer makes of every trial, struct-of-arrays (a few hundred thousand shown views): per shown view
 * the trial, the face and view, the truth, the three nearest people (RANK_DEPTH: all the rule reads) with their
 * cohort bounds, and the distance to the true person (NaN for strangers).
 */
export interface Outcomes {
  count: number;
  trial: Int32Array;
  face: Int32Array;
  view: Int32Array;
  truth: Int32Array;
  /** 3 per outcome: label id (-1: none), distance, bound (NaN: none). */
  label: Int32Array;
  distance: Float64Array;
  bound: Float64Array;
  genuineDistance: Float64Array;
  /** The shown view's distance to the nearest face of the fold's cohort (NaN without one): the cohort margin. */
  cohortDistance: Float64Array;
}

/** Ranks every shown view of every trial (each enrolled person at their nearest enrolled face: nearestPeople). */
export function rankTrials(
  cv: CrossValidation,
  dist: ViewDistances,
  boundOf?: BoundOf,
  onTrial?: (trial: OpenSetTrial, index: number, rankOf: (face: number, view: number) => Map<number, number>) => void,
): Outcomes {
  const { faces: F, views: V, d } = dist;
  let count = 0;
  for (const t of cv.trials) count += t.shown.length * V;
  const o: Outcomes = {
    count,
    trial: new Int32Array(count),
    face: new Int32Array(count),
    view: new Int32Array(count),
    truth: new Int32Array(count),
    label: new Int32Array(count * 3).fill(-1),
    distance: new Float64Array(count * 3).fill(Infinity),
    bound: new Float64Array(count * 3).fill(Number.NaN),
    genuineDistance: new Float64Array(count).fill(Number.NaN),
    cohortDistance: new Float64Array(count).fill(Number.NaN),
  };
  const splitOf = new Map(cv.splits.map((s) => [s.seed, s]));
  let k = 0;
  cv.trials.forEach((t, ti) => {
    const split = splitOf.get(t.seed)!;
    const byLabel = new Map<number, number[]>();
    for (const e of t.enrolled) byLabel.set(e.labelId, [...(byLabel.get(e.labelId) ?? []), e.face]);
    const bounds = new Map<number, number>();
    if (boundOf) {
      for (const [labelId, enrolledFaces] of byLabel) {
        const b = boundOf(split, enrolledFaces);
        if (b !== undefined && Number.isFinite(b)) bounds.set(labelId, b);
      }
    }
    const rankOf = (face: number, view: number) => {
      const row = (face * V + view) * F;
      const nearest = new Map<number, number>();
      for (const [labelId, enrolledFaces] of byLabel) {
        let best = Infinity;
        for (const f of enrolledFaces) best = Math.min(best, d[row + f]);
        if (Number.isFinite(best)) nearest.set(labelId, best);
      }
      return nearest;
    };
    onTrial?.(t, ti, rankOf);
    for (const { face, truth } of t.shown) {
      for (let view = 0; view < V; view++, k++) {
        o.trial[k] = ti;
        o.face[k] = face;
        o.view[k] = view;
        o.truth[k] = truth;
        const nearest = rankOf(face, view);
        if (boundOf && split.cohort.length) {
          const row = (face * V + view) * F;
          let c = Infinity;
          for (const f of split.cohort) c = Math.min(c, d[row + f]);
          o.cohortDistance[k] = c;
        }
        if (truth >= 0) o.genuineDistance[k] = nearest.get(truth) ?? Infinity;
        const ranked = nearestPeople(nearest, 3);
        ranked.forEach((p, r) => {
          o.label[k * 3 + r] = p.labelId;
          o.distance[k * 3 + r] = p.distance;
          o.bound[k * 3 + r] = bounds.get(p.labelId) ?? Number.NaN;
        });
      }
    }
  });
  return o;
}

/** The ranking of outcome k as the product hands it to decideFace (with the cohort bounds attached). */
export function rankedOf(o: Outcomes, k: number): PersonDistance[] {
  const out: PersonDistance[] = [];
  for (let r = 0; r < 3; r++) {
    const labelId = o.label[k * 3 + r];
    if (labelId < 0) break;
    const bound = o.bound[k * 3 + r];
    out.push(Number.isNaN(bound) ? { labelId, distance: o.distance[k * 3 + r] } : { labelId, distance: o.distance[k * 3 + r], bound });
  }
  return out;
}

/** Everything a rule does to a set of outcomes, as counts (so folds pool by adding). */
export interface Tally {
  genuine: number;
  right: number;
  wrong: number;
  genuineLowQuality: number;
  strangers: number;
  strangersNamed: number;
  strangersHigh: number;
  strangersLowQuality: number;
  /** Strangers named with `confidence` 65 or more: what a client holding the original's threshold of 65 admits. */
  strangersAt65: number;
  /** Names given with certainty high / unsure, and how many of them were wrong (a stranger or the wrong person). */
  highNames: number;
  highWrong: number;
  unsureNames: number;
  unsureWrong: number;
  /** Per enrolled person (by name): genuine views shown and named right. */
  perPerson: Map<string, { shown: number; right: number }>;
  /** Per person named: wrong names they took (strangers named as them, and enrolled people named as them). */
  wrongNamesBy: Map<string, number>;
  /** Per person named: strangers named as them. */
  strangersBy: Map<string, number>;
}

export function emptyTally(): Tally {
  return {
    genuine: 0,
    right: 0,
    wrong: 0,
    genuineLowQuality: 0,
    strangers: 0,
    strangersNamed: 0,
    strangersHigh: 0,
    strangersLowQuality: 0,
    strangersAt65: 0,
    highNames: 0,
    highWrong: 0,
    unsureNames: 0,
    unsureWrong: 0,
    perPerson: new Map(),
    wrongNamesBy: new Map(),
    strangersBy: new Map(),
  };
}

const bump = (m: Map<string, number>, key: string, by = 1) => m.set(key, (m.get(key) ?? 0) + by);

/**
 * Adds what `rule` (the product's decideFace) makes of the outcomes `select` picks to `into`. `rule` may depend on
 * the trial (a rule fitted per fold). `quality`: the measures of a face's view (the rule's quality floors).
 */
export function tally(
  o: Outcomes,
  trials: readonly OpenSetTrial[],
  ruleOf: (trial: OpenSetTrial) => DecisionRule,
  quality: (face: number, view: number) => FaceQuality,
  select: (k: number) => boolean,
  into: Tally = emptyTally(),
): Tally {
  for (let k = 0; k < o.count; k++) {
    if (!select(k)) continue;
    const t = trials[o.trial[k]];
    const d = decideFace(rankedOf(o, k), ruleOf(t), { quality: quality(o.face[k], o.view[k]), cohortDistance: o.cohortDistance[k] });
    const truth = o.truth[k];
    if (truth >= 0) {
      into.genuine++;
      const name = t.people[truth];
      const p = into.perPerson.get(name) ?? { shown: 0, right: 0 };
      p.shown++;
      into.perPerson.set(name, p);
      if (d.known && d.labelId === truth) {
        into.right++;
        p.right++;
      } else if (d.known) {
        into.wrong++;
        bump(into.wrongNamesBy, t.people[d.labelId]);
      } else if (d.reason === 'low_quality') into.genuineLowQuality++;
    } else {
      into.strangers++;
      if (d.known) {
        into.strangersNamed++;
        if (d.certainty === 'high') into.strangersHigh++;
        // The original's Keycloak client lets a face in as a user at confidence >= 65 (docs/identity.md).
        if (d.confidence >= 65) into.strangersAt65++;
        bump(into.wrongNamesBy, t.people[d.labelId]);
        bump(into.strangersBy, t.people[d.labelId]);
      } else if (d.reason === 'low_quality') into.strangersLowQuality++;
    }
    if (d.known) {
      const wrong = d.labelId !== truth;
      if (d.certainty === 'high') {
        into.highNames++;
        if (wrong) into.highWrong++;
      } else {
        into.unsureNames++;
        if (wrong) into.unsureWrong++;
      }
    }
  }
  return into;
}

/** 95% Wilson score interval of k successes in n (fractions). */
export function wilson(k: number, n: number, z = 1.96): [number, number] {
  if (!n) return [0, 0];
  const p = k / n;
  const den = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / den;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / den;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** The grids of the fit (fitRule). */
export interface FitGrid {
  /** Step of the max and sureMax grids (distance units): the limits searched are multiples of it. */
  step: number;
  ratioMax: readonly (number | null)[];
  cohortRatio: readonly (number | null)[];
  minFacePx: readonly number[];
  minSharpness: readonly number[];
  sureFacePx: readonly number[];
  sureSharpness: readonly number[];
}

export const EMBEDDING_GRID: FitGrid = {
  step: 0.005,
  ratioMax: [null, 0.98, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.9, 0.88, 0.86, 0.84, 0.82, 0.8],
  cohortRatio: [null, ...Array.from({ length: 13 }, (_, i) => Math.round((1 - i * 0.025) * 1000) / 1000)],
  minFacePx: [0, 32, 36, 40],
  minSharpness: [0, 0.004, 0.006],
  sureFacePx: [0, 50, 60],
  sureSharpness: [0, 0.01, 0.015],
};

export const LBPH_GRID: FitGrid = { ...EMBEDDING_GRID, step: 0.5, cohortRatio: [null] };

export interface FitTargets {
  /** Strangers named, at most this share (percent). */
  strangersNamed: number;
  /** Strangers named with certainty high, at most this share (percent). */
  strangersHigh: number;
}

export interface FittedRule {
  rule: DecisionRule;
  /** On the fit outcomes: named right, strangers named, strangers named high (percent). */
  fit: { namedRight: number; strangersNamed: number; strangersHigh: number };
}

const SURE_MIN_HIGHLIGHTS = 90;
const SURE_MAX_CLIPPED = 0.15;

/**
 * The rule that names the most enrolled people right on the outcomes `select` picks while strangers named stay
 * within `targets.strangersNamed` percent; then its sureMax and sure floors, naming the most enrolled people
 * `high` while strangers named `high` stay within `targets.strangersHigh`. A grid search made fast by sweeping
 * `max` (and sureMax) over the distances sorted into bins: the same decisions as decideFace (the bench checks).
 * `base` gives min, nearMax and verifyMax. Null when no rule meets the target.
 */
export function fitRule(
  o: Outcomes,
  select: (k: number) => boolean,
  quality: (face: number, view: number) => FaceQuality,
  base: DecisionRule,
  grid: FitGrid,
  targets: FitTargets,
): FittedRule | null {
  const idx: number[] = [];
  for (let k = 0; k < o.count; k++) if (select(k)) idx.push(k);
  const n = idx.length;
  const bins = Math.ceil((base.nearMax * 2) / grid.step) + 2;
  const cls = new Uint8Array(n); // 0 stranger, 1 genuine named right if named, 2 genuine named wrong if named
  const bin = new Int32Array(n);
  const ratioOk = new Uint32Array(n);
  // With a per-person limit the margin rule also counts the cohort's nearest face (decision.ts FaceEvidence).
  const ratioOkCohort = new Uint32Array(n);
  const cohortOk = new Uint32Array(n);
  const qualityOk = new Uint32Array(n);
  const sureOk = new Uint32Array(n);
  const floors: [number, number][] = [];
  for (const px of grid.minFacePx) for (const sh of grid.minSharpness) floors.push([px, sh]);
  const sureFloors: [number, number][] = [];
  for (const px of grid.sureFacePx) for (const sh of grid.sureSharpness) sureFloors.push([px, sh]);
  let strangers = 0;
  let genuine = 0;
  for (let i = 0; i < n; i++) {
    const k = idx[i];
    const truth = o.truth[k];
    const label = o.label[k * 3];
    const d1 = o.distance[k * 3];
    if (truth < 0) strangers++;
    else genuine++;
    cls[i] = truth < 0 ? 0 : label === truth ? 1 : 2;
    // Never named: no one ranked, or a copy of a training image.
    bin[i] = label < 0 || !Number.isFinite(d1) || d1 < base.min ? bins : Math.min(bins, Math.ceil(d1 / grid.step - 1e-9));
    const d2 = o.distance[k * 3 + 1];
    const ratio = o.label[k * 3 + 1] < 0 ? 0 : d2 > 0 ? d1 / d2 : 1;
    const qc = o.cohortDistance[k];
    const ratioCohort = Number.isFinite(qc) ? Math.max(ratio, qc > 0 ? d1 / qc : 1) : ratio;
    grid.ratioMax.forEach((r, j) => {
      if (r === null || ratio <= r) ratioOk[i] |= 1 << j;
      if (r === null || ratioCohort <= r) ratioOkCohort[i] |= 1 << j;
    });
    const b = o.bound[k * 3];
    grid.cohortRatio.forEach((c, j) => {
      if (c === null || !Number.isFinite(b) || d1 <= Math.max(base.min, c * b)) cohortOk[i] |= 1 << j;
    });
    const q = quality(o.face[k], o.view[k]);
    floors.forEach(([px, sh], j) => {
      if (q.facePx >= px && q.sharpness >= sh) qualityOk[i] |= 1 << j;
    });
    const exposureOk =
      (q.highlights === undefined || q.highlights >= SURE_MIN_HIGHLIGHTS) &&
      (q.clipped === undefined || q.clipped <= SURE_MAX_CLIPPED) &&
      q.frontal !== false;
    sureFloors.forEach(([px, sh], j) => {
      if (exposureOk && q.facePx >= px && q.sharpness >= sh) sureOk[i] |= 1 << j;
    });
  }
  if (!strangers || !genuine) return null;
  const allowed = Math.floor((targets.strangersNamed / 100) * strangers + 1e-9);
  const maxBin = Math.min(bins - 1, Math.floor(base.nearMax / grid.step + 1e-9));
  const acc = new Int32Array(bins * 2);
  let best: { right: number; named: number; ri: number; ci: number; qi: number; g: number } | null = null;
  for (let ri = 0; ri < grid.ratioMax.length; ri++) {
    for (let ci = 0; ci < grid.cohortRatio.length; ci++) {
      for (let qi = 0; qi < floors.length; qi++) {
        acc.fill(0);
        const rm = 1 << ri;
        const cm = 1 << ci;
        const qm = 1 << qi;
        const ratios = grid.cohortRatio[ci] === null ? ratioOk : ratioOkCohort;
        for (let i = 0; i < n; i++) {
          if (bin[i] >= bins || !(ratios[i] & rm) || !(cohortOk[i] & cm) || !(qualityOk[i] & qm)) continue;
          if (cls[i] === 0) acc[bin[i] * 2]++;
          else if (cls[i] === 1) acc[bin[i] * 2 + 1]++;
        }
        let named = 0;
        let right = 0;
        for (let g = 0; g <= maxBin; g++) {
          named += acc[g * 2];
          right += acc[g * 2 + 1];
          if (named > allowed) break;
          if (!best || right > best.right || (right === best.right && named < best.named)) best = { right, named, ri, ci, qi, g };
        }
      }
    }
  }
  if (!best) return null;
  const round = (v: number) => Math.round(v * 1e6) / 1e6;
  const max = round(Math.max(base.min, best.g * grid.step));
  const [minFacePx, minSharpness] = floors[best.qi];
  const cohortRatio = grid.cohortRatio[best.ci];
  const rule = ruleAtLimit(base, max, {
    ratioMax: grid.ratioMax[best.ri],
    cohortRatio,
    quality: { minFacePx, minSharpness, sureFacePx: minFacePx, sureSharpness: minSharpness },
  });
  // The sure stage: among the faces this rule names, the sure bound (sureMax scaled like the person's limit) and floors.
  const sureAllowed = Math.floor((targets.strangersHigh / 100) * strangers + 1e-9);
  const rm = 1 << best.ri;
  const cm = 1 << best.ci;
  const qm = 1 << best.qi;
  const sureBin = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (bin[i] > best.g || !((cohortRatio === null ? ratioOk : ratioOkCohort)[i] & rm) || !(cohortOk[i] & cm) || !(qualityOk[i] & qm))
      continue;
    const k = idx[i];
    const d1 = o.distance[k * 3];
    const limit = personLimit(rule, Number.isNaN(o.bound[k * 3]) ? undefined : o.bound[k * 3]);
    // d1 <= sureLimit(rule, limit) <=> key <= sureMax.
    const key =
      limit >= max || !(max > base.min)
        ? d1
        : limit > base.min
          ? base.min + ((d1 - base.min) * (max - base.min)) / (limit - base.min)
          : base.min;
    sureBin[i] = Math.ceil(key / grid.step - 1e-9);
  }
  let sure: { high: number; strangersHigh: number; si: number; g: number } | null = null;
  for (let si = 0; si < sureFloors.length; si++) {
    if (sureFloors[si][0] < minFacePx || sureFloors[si][1] < minSharpness) continue;
    acc.fill(0);
    const sm = 1 << si;
    for (let i = 0; i < n; i++) {
      if (sureBin[i] < 0 || cls[i] === 2 || !(sureOk[i] & sm)) continue;
      acc[Math.min(sureBin[i], bins - 1) * 2 + (cls[i] === 0 ? 0 : 1)]++;
    }
    let high = 0;
    let strangersHigh = 0;
    for (let g = 0; g <= best.g; g++) {
      strangersHigh += acc[g * 2];
      high += acc[g * 2 + 1];
      if (strangersHigh > sureAllowed) break;
      if (!sure || high > sure.high || (high === sure.high && strangersHigh < sure.strangersHigh)) sure = { high, strangersHigh, si, g };
    }
  }
  const fitted: DecisionRule = sure
    ? {
        ...rule,
        sureMax: round(Math.min(max, Math.max(base.min, sure.g * grid.step))),
        quality: { minFacePx, minSharpness, sureFacePx: sureFloors[sure.si][0], sureSharpness: sureFloors[sure.si][1] },
      }
    : { ...rule, sureMax: base.min };
  return {
    rule: fitted,
    fit: {
      namedRight: (100 * best.right) / genuine,
      strangersNamed: (100 * best.named) / strangers,
      strangersHigh: sure ? (100 * sure.strangersHigh) / strangers : 0,
    },
  };
}
