/**
 * The decision rule: from the people nearest to a face (ranking.ts) to a name, or to `unknown` with a reason that
 * is true and the nearest person as a candidate. One implementation for the server and the browser.
 *
 * A name is a claim about a person, so the rule says "I don't know" rather than guess:
 *
 *   d1 = distance to the nearest person, d2 = to the next person (a person's photos are one template set)
 *   d1 < min                       unknown, copy_of_training_image (LBPH only: a pixel copy of a training photo)
 *   d1 > max, d1 <= nearMax        unknown, below_threshold (someone is near, just not near enough)
 *   d1 > nearMax                   unknown, no_match
 *   d1 / d2 > ratioMax             unknown, ambiguous (two people about equally near: the margin rule)
 *   c1 <= d1                       unknown, corrected (c1: the distance to the nearest of that person's
 *                                  corrections, faces a reviewer said are not them: corrections.ts)
 *   otherwise                      named; certainty `high` when d1 <= sureMax, else `unsure`
 *
 * and within one picture a person is given to at most one face, the nearest (assignNames).
 *
 * The score (`confidence`, percent) is a monotonic map of the distance: 100 at `min`, EDGE_SCORE (60) at `max`,
 * falling on at the same slope past the limit to 0 (only unknown faces' candidates get scores under 60).
 */
import { EDGE_SCORE } from './confidence.js';
import { isCorrected } from './corrections.js';
import type { PersonDistance } from './ranking.js';

export interface DecisionRule {
  /** Smallest distance accepted (LBPH's spec window starts at 4; embeddings at 0). */
  min: number;
  /** The limit: the nearest person may be named up to this distance. */
  max: number;
  /** Named with certainty `high` up to here; `unsure` between here and `max`. */
  sureMax: number;
  /** Past `max` but within this, the face is `below_threshold` (a near miss); beyond, `no_match`. */
  nearMax: number;
  /** Margin rule: `ambiguous` when d1 / d2 is above this; null switches the rule off. */
  ratioMax: number | null;
  /** 1:1 verification (`POST /api/verify`): a match up to this distance to the claimed person. */
  verifyMax: number;
}

export type Certainty = 'high' | 'unsure';

/** The nearest person, kept on an unknown face so the answer can say who it nearly was. */
export interface CandidateDecision {
  labelId: number;
  distance: number;
  /** The candidate's score, 0 to 100 (under 60 past the limit). */
  confidence: number;
}

export type UnknownDecisionReason =
  | 'no_match'
  | 'below_threshold'
  | 'ambiguous'
  | 'copy_of_training_image'
  | 'given_to_another_face'
  | 'corrected';

export type FaceDecision =
  | { known: true; labelId: number; distance: number; confidence: number; certainty: Certainty }
  | { known: false; reason: UnknownDecisionReason; candidate?: CandidateDecision };

/** Why a rule cannot be used, or null. */
export function ruleProblem(rule: DecisionRule): string | null {
  const { min, max, sureMax, nearMax, ratioMax, verifyMax } = rule;
  for (const [key, v] of Object.entries({ min, max, sureMax, nearMax, verifyMax })) {
    if (!Number.isFinite(v) || v < 0) return `${key} must be a finite number of at least 0`;
  }
  if (min > max) return 'min must not be above max';
  if (sureMax < min || sureMax > max) return 'sureMax must lie between min and max';
  if (nearMax < max) return 'nearMax must not be below max';
  if (verifyMax < min || verifyMax > max) return 'verifyMax must lie between min and max';
  if (ratioMax !== null && !(ratioMax > 0 && ratioMax <= 1)) return 'ratioMax must be above 0 and at most 1, or null';
  return null;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/** The percent score of a distance under a rule (see the header); 0 for a non-finite distance. */
export function scoreOf(distance: number, rule: DecisionRule): number {
  if (!Number.isFinite(distance)) return 0;
  const span = rule.max - rule.min;
  if (!(span > 0)) return distance <= rule.max ? 100 : 0;
  const t = (Math.max(distance, rule.min) - rule.min) / span;
  return round1(Math.max(0, 100 - (100 - EDGE_SCORE) * t));
}

/** The margin d1 / d2 (0 without a next person; 1 when both are at distance 0). */
export function marginRatio(ranked: readonly PersonDistance[]): number {
  if (ranked.length < 2) return 0;
  const [d1, d2] = [ranked[0].distance, ranked[1].distance];
  if (!(d2 > 0)) return 1;
  return d1 / d2;
}

/** One face decided on its own (no other face of the picture considered: that is assignNames). */
export function decideFace(ranked: readonly PersonDistance[], rule: DecisionRule): FaceDecision {
  const nearest = ranked[0];
  if (!nearest || !Number.isFinite(nearest.distance)) return { known: false, reason: 'no_match' };
  const d1 = nearest.distance;
  const candidate: CandidateDecision = { labelId: nearest.labelId, distance: d1, confidence: scoreOf(d1, rule) };
  if (d1 < rule.min) return { known: false, reason: 'copy_of_training_image', candidate };
  if (d1 > rule.max) return { known: false, reason: d1 <= rule.nearMax ? 'below_threshold' : 'no_match', candidate };
  if (rule.ratioMax !== null && marginRatio(ranked) > rule.ratioMax) return { known: false, reason: 'ambiguous', candidate };
  // A "not this person" template at least as near as the person's own: the face is the one the reviewer corrected.
  if (isCorrected(d1, nearest.correction)) return { known: false, reason: 'corrected', candidate };
  return {
    known: true,
    labelId: nearest.labelId,
    distance: d1,
    confidence: candidate.confidence,
    certainty: d1 <= rule.sureMax ? 'high' : 'unsure',
  };
}

/**
 * Every face of one picture decided together: a person is given to at most one face, the nearest to them. A face
 * whose nearest person went to a nearer face is decided again on the people left (named at most `unsure`: its
 * best match was someone else's), or stays unknown as `given_to_another_face` with that person as its candidate.
 */
export function assignNames(rankings: readonly (readonly PersonDistance[])[], rule: DecisionRule): FaceDecision[] {
  const decisions: FaceDecision[] = new Array(rankings.length);
  const taken = new Set<number>();
  // Nearest faces first (ties: the earlier face), so each person goes to the face nearest to them.
  const order = rankings
    .map((ranked, i) => ({ i, d: ranked[0]?.distance ?? Infinity }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((x) => x.i);
  for (const i of order) {
    const first = decideFace(rankings[i], rule);
    if (!first.known || !taken.has(first.labelId)) {
      if (first.known) taken.add(first.labelId);
      decisions[i] = first;
      continue;
    }
    const next = decideFace(
      rankings[i].filter((p) => !taken.has(p.labelId)),
      rule,
    );
    if (next.known) {
      taken.add(next.labelId);
      decisions[i] = { ...next, certainty: 'unsure' };
    } else {
      decisions[i] = {
        known: false,
        reason: 'given_to_another_face',
        candidate: { labelId: first.labelId, distance: first.distance, confidence: first.confidence },
      };
    }
  }
  return decisions;
}
