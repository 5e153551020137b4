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
import { decideFace, type DecisionRule } from '../shared/recognition/decision.js';
import type { PersonDistance } from '../shared/recognition/ranking.js';

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
      const rule: DecisionRule = {
        ...base,
        max,
        sureMax: max,
        nearMax: Math.max(base.nearMax, max),
        verifyMax: Math.min(base.verifyMax, max),
        ratioMax,
      };
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
