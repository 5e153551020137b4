/**
 * What a decision rule (decision.ts) does to the people already enrolled and to the recent sightings, so a site
 * sees the effect of a threshold before saving it (`POST /api/models/thresholds/preview`).
 *
 * Enrolled: leave-one-out over a trained model. Each training sample is ranked against all the other samples
 * (its own person standing at their nearest other sample), as a new photo of that person would be, then decided
 * by the rule. The rankings depend on the model only, so a host computes them once per model and decides them
 * again for every rule it is asked about. On a large model a share of the samples, spread over every person, is
 * evaluated (the cost grows with samples x samples).
 *
 * Recent: a stored face keeps only its nearest person's distance (`distance` of a named face, `candidate` of an
 * unknown one), so it is decided again from that alone: the margin rule (the next person's distance) and one
 * name per picture cannot be re-checked. Faces that were `ambiguous` or `given_to_another_face` are left out.
 *
 * Browser-safe: no Node, no DOM.
 */
import type { EnrolledCounts, FaceResult, RecentCounts } from '../api/index.js';
import { type EmbeddingModel, rankEmbedding } from '../embedding/matcher.js';
import { type LbphModel, rankLbph } from '../lbph/lbph.js';
import { boundsFor, type Cohort, nearestCohortDistance, withCohortBounds } from './cohort.js';
import { type DecisionRule, decideFace, type FaceDecision } from './decision.js';
import { nearestPeople, type PersonDistance, RANK_DEPTH } from './ranking.js';

/** One training sample ranked against all the others. */
export interface HeldOutSample {
  labelId: number;
  /** The nearest people among the other samples, nearest first (RANK_DEPTH of them). */
  ranked: PersonDistance[];
  /** Its person has no other sample: it stands for a stranger. */
  alone: boolean;
  /** Its distance to the nearest face of the background cohort (embedding with a cohort; decision.ts FaceEvidence). */
  cohortDistance?: number;
}

export interface LeaveOneOut {
  /** Samples in the model. */
  samples: number;
  /** People in the model. */
  people: number;
  /** The samples evaluated (all, or a share of every person's). */
  heldOut: HeldOutSample[];
}

export interface LeaveOneOutOptions {
  /**
   * At most this many sample pairs are compared (queries x samples); beyond it a share of the samples is evaluated.
   * Default 40 000 for LBPH, 256 000 000 / dim for embeddings (2 000 000 at 128-d, 250 000 at 1024-d): about 2 s
   * at worst on one core.
   */
  maxPairs?: number;
  /** Work between two yields to the event loop, in milliseconds (default 20). */
  sliceMs?: number;
  /** Embedding: the background cohort recognition uses (cohort.ts), so the preview applies the same per-person limits. */
  cohort?: Cohort | null;
}

const yieldNow = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * The order samples are evaluated in: every person's first sample, then every person's second, and so on, so that
 * a share (the first `count`) covers every person before any gets two.
 */
function spreadOrder(labels: ArrayLike<number>): number[] {
  const seen = new Map<number, number>();
  const order = Array.from({ length: labels.length }, (_, i) => {
    const nth = seen.get(labels[i]) ?? 0;
    seen.set(labels[i], nth + 1);
    return { i, nth };
  });
  return order.sort((a, b) => a.nth - b.nth || a.i - b.i).map((x) => x.i);
}

/**
 * Leave-one-out over any model: `rankAll(i)` ranks sample i against the whole model (its own person included, at
 * distance 0 or so through sample i itself), `ownDistance(i)` gives the distance to its own person's nearest
 * *other* sample (Infinity when there is none).
 */
async function leaveOneOut(
  labels: ArrayLike<number>,
  rankAll: (i: number, k: number) => PersonDistance[],
  ownDistance: (i: number) => number,
  maxQueries: number,
  sliceMs: number,
  annotate: (i: number, sample: HeldOutSample) => HeldOutSample = (_, sample) => sample,
): Promise<LeaveOneOut> {
  const counts = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) counts.set(labels[i], (counts.get(labels[i]) ?? 0) + 1);
  const queries = spreadOrder(labels).slice(0, Math.max(0, maxQueries));
  const heldOut: HeldOutSample[] = [];
  let sliceStart = Date.now();
  for (const i of queries) {
    const own = labels[i];
    // The whole model ranked one deeper, without the own person (whom sample i itself puts at ~0), is the others.
    const nearest = new Map<number, number>();
    for (const p of rankAll(i, RANK_DEPTH + 1)) if (p.labelId !== own) nearest.set(p.labelId, p.distance);
    const alone = (counts.get(own) ?? 0) < 2;
    if (!alone) nearest.set(own, ownDistance(i));
    heldOut.push(annotate(i, { labelId: own, ranked: nearestPeople(nearest, RANK_DEPTH), alone }));
    if (Date.now() - sliceStart >= sliceMs) {
      await yieldNow();
      sliceStart = Date.now();
    }
  }
  return { samples: labels.length, people: counts.size, heldOut };
}

/** The sample indices of one label other than `except`. */
function othersOf(labels: ArrayLike<number>, label: number, except: number): number[] {
  const out: number[] = [];
  for (let j = 0; j < labels.length; j++) if (j !== except && labels[j] === label) out.push(j);
  return out;
}

export async function leaveOneOutEmbedding(model: EmbeddingModel, opts: LeaveOneOutOptions = {}): Promise<LeaveOneOut> {
  const { dim, descriptors, labels } = model;
  const n = labels.length;
  const descriptor = (i: number) => descriptors.subarray(i * dim, (i + 1) * dim);
  const maxQueries = n === 0 ? 0 : Math.ceil((opts.maxPairs ?? Math.floor(256_000_000 / dim)) / n);
  return leaveOneOut(
    labels,
    (i, k) => rankEmbedding(model, descriptor(i), k),
    (i) => {
      const others = othersOf(labels, labels[i], i);
      if (others.length === 0) return Number.POSITIVE_INFINITY;
      // The own person's other samples as a model of their own, ranked by the same function as recognition.
      const own = new Float32Array(others.length * dim);
      for (const [o, j] of others.entries()) own.set(descriptor(j), o * dim);
      return rankEmbedding({ dim, descriptors: own, labels: new Int32Array(others.length).fill(labels[i]) }, descriptor(i), 1)[0].distance;
    },
    maxQueries,
    opts.sliceMs ?? 20,
    (i, sample) => {
      // Each person's cohort bound from the whole model (recognition's), and the sample's nearest cohort face.
      const cohort = opts.cohort && opts.cohort.dim === dim ? opts.cohort : null;
      if (!cohort) return sample;
      const ranked = withCohortBounds(sample.ranked, boundsFor(model, cohort));
      return { ...sample, ranked, cohortDistance: nearestCohortDistance(descriptor(i), cohort) };
    },
  );
}

export async function leaveOneOutLbph(model: LbphModel, opts: LeaveOneOutOptions = {}): Promise<LeaveOneOut> {
  const { histograms, labels } = model;
  const n = labels.length;
  const maxQueries = n === 0 ? 0 : Math.ceil((opts.maxPairs ?? 40_000) / n);
  return leaveOneOut(
    labels,
    (i, k) => rankLbph(model, histograms[i], k),
    (i) => {
      const others = othersOf(labels, labels[i], i);
      if (others.length === 0) return Number.POSITIVE_INFINITY;
      const own: LbphModel = {
        ...model,
        histograms: others.map((j) => histograms[j]),
        labels: new Int32Array(others.length).fill(labels[i]),
      };
      return rankLbph(own, histograms[i], 1)[0].distance;
    },
    maxQueries,
    opts.sliceMs ?? 20,
  );
}

export type EnrolledOutcome = 'named_right' | 'named_wrong' | 'unsure_right' | 'unsure_wrong' | 'unknown';
export type RecentOutcome = 'named' | 'unsure' | 'unknown';

/** A change of outcome, counted by person. */
export interface OutcomeChange<O extends string> {
  label: string;
  before: O;
  after: O;
  count: number;
}

function enrolledOutcome(sample: HeldOutSample, decision: FaceDecision): EnrolledOutcome {
  if (!decision.known) return 'unknown';
  // A person with no other sample is a stranger to the rest of the model: any name is wrong.
  const right = decision.labelId === sample.labelId && !sample.alone;
  if (decision.certainty === 'high') return right ? 'named_right' : 'named_wrong';
  return right ? 'unsure_right' : 'unsure_wrong';
}

function emptyEnrolled(): EnrolledCounts {
  return { named_right: 0, named_wrong: 0, unsure: 0, unsure_wrong: 0, unknown: 0, unknown_reasons: {} };
}

function countEnrolled(counts: EnrolledCounts, outcome: EnrolledOutcome, decision: FaceDecision): void {
  if (outcome === 'named_right') counts.named_right++;
  else if (outcome === 'named_wrong') counts.named_wrong++;
  else if (outcome === 'unsure_right' || outcome === 'unsure_wrong') {
    counts.unsure++;
    if (outcome === 'unsure_wrong') counts.unsure_wrong++;
  } else if (!decision.known) {
    counts.unknown++;
    counts.unknown_reasons[decision.reason] = (counts.unknown_reasons[decision.reason] ?? 0) + 1;
  }
}

/** Changes grouped by (person, before, after), most first, at most `limit`. */
function changesOf<O extends string>(items: { label: string; before: O; after: O }[], limit: number): OutcomeChange<O>[] {
  const groups = new Map<string, OutcomeChange<O>>();
  for (const { label, before, after } of items) {
    if (before === after) continue;
    const key = JSON.stringify([label, before, after]);
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { label, before, after, count: 1 });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.label.localeCompare(b.label)).slice(0, limit);
}

export interface EnrolledPreview {
  before: EnrolledCounts;
  after: EnrolledCounts;
  changes: OutcomeChange<EnrolledOutcome>[];
}

/** The held-out samples decided by both rules. `nameOf` gives a label id's name. */
export function previewEnrolled(
  loo: LeaveOneOut,
  before: DecisionRule,
  after: DecisionRule,
  nameOf: (labelId: number) => string,
  maxChanges = 20,
): EnrolledPreview {
  const out: EnrolledPreview = { before: emptyEnrolled(), after: emptyEnrolled(), changes: [] };
  const items: { label: string; before: EnrolledOutcome; after: EnrolledOutcome }[] = [];
  for (const sample of loo.heldOut) {
    const evidence = sample.cohortDistance === undefined ? {} : { cohortDistance: sample.cohortDistance };
    const b = decideFace(sample.ranked, before, evidence);
    const a = decideFace(sample.ranked, after, evidence);
    const ob = enrolledOutcome(sample, b);
    const oa = enrolledOutcome(sample, a);
    countEnrolled(out.before, ob, b);
    countEnrolled(out.after, oa, a);
    items.push({ label: nameOf(sample.labelId), before: ob, after: oa });
  }
  out.changes = changesOf(items, maxChanges);
  return out;
}

/** Why a stored face cannot be decided again. */
export type NotEvaluated = 'not_trained' | 'no_candidate' | 'margin' | 'no_distance';

/** A stored face's nearest person and distance, or why it has none to decide from. */
export function storedNearest(
  face: Pick<FaceResult, 'label' | 'distance' | 'reason' | 'candidate'>,
): { label: string; distance: number } | NotEvaluated {
  if (face.reason === 'ambiguous' || face.reason === 'given_to_another_face') return 'margin';
  if (face.reason === 'not_trained') return 'not_trained';
  if (face.label !== 'unknown') {
    return typeof face.distance === 'number' && Number.isFinite(face.distance)
      ? { label: face.label, distance: face.distance }
      : 'no_distance';
  }
  return face.candidate && Number.isFinite(face.candidate.distance)
    ? { label: face.candidate.label, distance: face.candidate.distance }
    : 'no_candidate';
}

function recentOutcome(decision: FaceDecision): RecentOutcome {
  if (!decision.known) return 'unknown';
  return decision.certainty === 'high' ? 'named' : 'unsure';
}

function emptyRecent(): RecentCounts {
  return { named: 0, unsure: 0, unknown: 0, unknown_reasons: {} };
}

function countRecent(counts: RecentCounts, decision: FaceDecision): void {
  if (decision.known) {
    if (decision.certainty === 'high') counts.named++;
    else counts.unsure++;
  } else {
    counts.unknown++;
    counts.unknown_reasons[decision.reason] = (counts.unknown_reasons[decision.reason] ?? 0) + 1;
  }
}

export interface RecentPreview {
  faces: number;
  evaluated: number;
  notEvaluated: Partial<Record<NotEvaluated, number>>;
  before: RecentCounts;
  after: RecentCounts;
  changes: OutcomeChange<RecentOutcome>[];
}

/**
 * Stored faces decided again from their nearest person's distance by both rules. `boundOf`: that person's cohort
 * bound now (cohort.ts; embedding), so a per-person limit applies as in recognition. A face stored as `low_quality`
 * stays so: its quality does not change with the thresholds.
 */
export function previewRecent(
  faces: readonly Pick<FaceResult, 'label' | 'distance' | 'reason' | 'candidate'>[],
  before: DecisionRule,
  after: DecisionRule,
  { maxChanges = 20, boundOf = () => undefined }: { maxChanges?: number; boundOf?: (label: string) => number | undefined } = {},
): RecentPreview {
  const out: RecentPreview = {
    faces: faces.length,
    evaluated: 0,
    notEvaluated: {},
    before: emptyRecent(),
    after: emptyRecent(),
    changes: [],
  };
  const items: { label: string; before: RecentOutcome; after: RecentOutcome }[] = [];
  for (const face of faces) {
    const nearest = storedNearest(face);
    if (typeof nearest === 'string') {
      out.notEvaluated[nearest] = (out.notEvaluated[nearest] ?? 0) + 1;
      continue;
    }
    out.evaluated++;
    // Only the nearest person is known: a ranking of one (no margin to test).
    const bound = boundOf(nearest.label);
    const ranked = [bound === undefined ? { labelId: 0, distance: nearest.distance } : { labelId: 0, distance: nearest.distance, bound }];
    const poor: FaceDecision = { known: false, reason: 'low_quality' };
    const b = face.reason === 'low_quality' ? poor : decideFace(ranked, before);
    const a = face.reason === 'low_quality' ? poor : decideFace(ranked, after);
    countRecent(out.before, b);
    countRecent(out.after, a);
    items.push({ label: nearest.label, before: recentOutcome(b), after: recentOutcome(a) });
  }
  out.changes = changesOf(items, maxChanges);
  return out;
}
