/**
 * The decision rule: from the people nearest to a face (ranking.ts) to a name, or to `unknown` with a reason that
 * is true and the nearest person as a candidate. One implementation for the server and the browser.
 *
 * A name is a claim about a person, so the rule says "I don't know" rather than guess:
 *
 *   d1 = distance to the nearest person, d2 = to the next person (a person's photos are one template set)
 *   d1 < min                       unknown, copy_of_training_image (LBPH only: a pixel copy of a training photo)
 *   quality below the rule's floor unknown, low_quality (too small or too blurred to tell people apart), with
 *                                  the candidate it would have had (#34: face quality takes part in the decision)
 *   limit = min(max, cohortRatio * bound(p1))   the person's own limit (cohort.ts: a "magnet" whose template
 *                                  sits near many strangers' faces gets a stricter one); with cohortRatio set but
 *                                  no bound known (no cohort loaded) sureMax, the strict side; without
 *                                  cohortRatio, max
 *   d1 > limit, d1 <= nearMax      unknown, below_threshold (someone is near, just not near enough)
 *   d1 > nearMax                   unknown, no_match
 *   d1 / d2 > ratioMax             unknown, ambiguous (two people about equally near: the margin rule; with a
 *                                  per-person limit the nearest face of the background cohort counts as a next
 *                                  person too, so the rule holds with 5 people enrolled as with 500)
 *   c1 <= d1                       unknown, corrected (c1: the distance to the nearest of that person's
 *                                  corrections, faces a reviewer said are not them: corrections.ts)
 *   otherwise                      named; certainty `high` when d1 <= sureMax scaled like the limit
 *                                  (sureMax * limit / max) and the face's quality is good enough to be sure of
 *                                  (the sure floors: size, sharpness, exposure, a frontal pose), else `unsure`
 *
 * and within one picture a person is given to at most one face, the nearest (assignNames).
 *
 * The score (`confidence`, percent) is the distance's similarity (similarity.ts, #36): a fixed map of the distance
 * on the rule's distance scale, the same whatever the limits are (60 at the calibrated default limit), so a face
 * reads one figure however a site sets its thresholds. A face the rule leaves unknown has `confidence` 0 in the
 * answers (the original's clients read it so); its candidate carries the candidate's similarity.
 */
import { isCorrected } from './corrections.js';
import type { PersonDistance } from './ranking.js';
import { type SimilarityScale, scaleOfRule, similarity } from './similarity.js';

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
  /**
   * 1:1 verification (`POST /api/verify`): a match up to this distance to the claimed person. Its own decision: a
   * change of `max` leaves it as it is (#36), so it may lie past a site's lowered `max`.
   */
  verifyMax: number;
  /**
   * Per-person limit against the background cohort (cohort.ts): a person is named only within this share of their
   * cohort bound (and never past `max`). Null or absent: the global limits alone.
   */
  cohortRatio?: number | null;
  /** Quality floors of the query face; null or absent: quality is not looked at. */
  quality?: QualityFloors | null;
  /**
   * #36: the distance scale the rule's distances are on (similarity.ts), which fixes the score; set on every
   * calibrated rule (rules.ts) and kept by overrides. Absent (a rule made by hand): guessed from `max`.
   */
  scale?: SimilarityScale;
}

/** Where a face is too poor to name at all, and where it is too poor to be sure of (photo-check.ts measures). */
export interface QualityFloors {
  /** Under this face width (pixels) or sharpness the face is `unknown` with reason `low_quality`. */
  minFacePx: number;
  minSharpness: number;
  /** Under these the face is named at most `unsure`. */
  sureFacePx: number;
  sureSharpness: number;
}

/**
 * The query face's quality, as photo-check.ts `measureFace` measures it (the enrollment check's measures). Exposure
 * and pose are optional: a host that does not look at them never caps certainty for them.
 */
export interface FaceQuality {
  facePx: number;
  sharpness: number;
  /** The face's 99th percentile of gray; under MIN_HIGHLIGHTS it is too dark to be sure. */
  highlights?: number;
  /** Share of burnt-out pixels; over MAX_CLIPPED too bright to be sure. */
  clipped?: number;
  /** false: the eyes show a turned or tilted head (never sure); null or absent: cannot tell. */
  frontal?: boolean | null;
}

/** Exposure bounds of the sure certainty: the enrollment check's (photo-check.ts MIN_HIGHLIGHTS, MAX_CLIPPED). */
const SURE_MIN_HIGHLIGHTS = 90;
const SURE_MAX_CLIPPED = 0.15;

/** Whether a face is too poor to name at all under the floors. */
export function belowQualityFloor(quality: FaceQuality | undefined, floors: QualityFloors | null | undefined): boolean {
  if (!quality || !floors) return false;
  return quality.facePx < floors.minFacePx || quality.sharpness < floors.minSharpness;
}

/** Whether a face is good enough to be named with certainty `high`. */
export function sureQuality(quality: FaceQuality | undefined, floors: QualityFloors | null | undefined): boolean {
  if (!quality || !floors) return true;
  if (quality.facePx < floors.sureFacePx || quality.sharpness < floors.sureSharpness) return false;
  if (quality.highlights !== undefined && quality.highlights < SURE_MIN_HIGHLIGHTS) return false;
  if (quality.clipped !== undefined && quality.clipped > SURE_MAX_CLIPPED) return false;
  return quality.frontal !== false;
}

export type Certainty = 'high' | 'unsure';

/** The nearest person, kept on an unknown face so the answer can say who it nearly was. */
export interface CandidateDecision {
  labelId: number;
  distance: number;
  /** The candidate's similarity, 0 to 100 (similarity.ts; the same figure it would have had if named). */
  confidence: number;
}

export type UnknownDecisionReason =
  | 'no_match'
  | 'below_threshold'
  | 'ambiguous'
  | 'copy_of_training_image'
  | 'given_to_another_face'
  | 'corrected'
  | 'low_quality';

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
  // #36: not bound by `max`: 1:1 verification is its own decision (rules.ts limitBound caps it as it caps `max`).
  if (verifyMax < min) return 'verifyMax must not be below min';
  if (ratioMax !== null && !(ratioMax > 0 && ratioMax <= 1)) return 'ratioMax must be above 0 and at most 1, or null';
  const { cohortRatio, quality } = rule;
  if (cohortRatio != null && !(Number.isFinite(cohortRatio) && cohortRatio > 0 && cohortRatio <= 1.5))
    return 'cohortRatio must be above 0 and at most 1.5, or null';
  if (quality) {
    for (const [key, v] of Object.entries(quality))
      if (!Number.isFinite(v) || v < 0) return `quality.${key} must be a finite number of at least 0`;
    if (quality.sureFacePx < quality.minFacePx || quality.sureSharpness < quality.minSharpness)
      return 'the quality floors of certainty high must not be below the floors of naming';
  }
  return null;
}

/**
 * The limit of one person: the rule's `max`, or stricter where their cohort bound says they sit near many strangers
 * (never under `min`).
 */
export function personLimit(rule: DecisionRule, bound: number | undefined): number {
  if (rule.cohortRatio == null) return rule.max;
  // No bound (the host has no cohort, or too few cohort faces): the rule's `max` is set for a per-person limit to
  // hold strangers back, so without one the stricter sure bound is the limit (fails closed).
  if (bound === undefined || !Number.isFinite(bound)) return rule.sureMax;
  return Math.max(rule.min, Math.min(rule.max, rule.cohortRatio * bound));
}

/**
 * The percent score of a distance under a rule: its similarity on the rule's distance scale (similarity.ts). No
 * threshold of the rule moves it (#36: before, it was relative to the limit, so the same face read 85% at the
 * defaults and 71% after a lower limit).
 */
export function scoreOf(distance: number, rule: Pick<DecisionRule, 'scale' | 'max'>): number {
  return similarity(distance, scaleOfRule(rule));
}

/** The margin d1 / d2 (0 without a next person; 1 when both are at distance 0). */
export function marginRatio(ranked: readonly PersonDistance[]): number {
  if (ranked.length < 2) return 0;
  const [d1, d2] = [ranked[0].distance, ranked[1].distance];
  if (!(d2 > 0)) return 1;
  return d1 / d2;
}

/** What a host knows of a face besides its ranking (each part absent where the host did not measure it). */
export interface FaceEvidence {
  /** Its quality measures: the rule's quality floors apply only with them. */
  quality?: FaceQuality;
  /**
   * Its distance to the nearest face of the background cohort (cohort.ts): with a per-person limit (`cohortRatio`)
   * the margin rule counts that stranger as one more person, so a face about as near to someone nobody enrolled as
   * to its candidate is `ambiguous`, however few people are enrolled.
   */
  cohortDistance?: number;
}

/** The margin d1 / d2 with the cohort's nearest face as a possible next person (see FaceEvidence). */
function marginWithCohort(ranked: readonly PersonDistance[], rule: DecisionRule, cohortDistance: number | undefined): number {
  const ratio = marginRatio(ranked);
  // ratioMax 1 switches the margin rule off (the API's documented meaning), the cohort's part of it too.
  if (rule.cohortRatio == null || rule.ratioMax === null || rule.ratioMax >= 1) return ratio;
  if (cohortDistance === undefined || !Number.isFinite(cohortDistance)) return ratio;
  const d1 = ranked[0].distance;
  if (!(cohortDistance > 0)) return 1;
  return Math.max(ratio, d1 / cohortDistance);
}

/**
 * One face decided on its own (no other face of the picture considered: that is assignNames), with what the host
 * knows of it besides its ranking (FaceEvidence).
 */
export function decideFace(ranked: readonly PersonDistance[], rule: DecisionRule, face: FaceEvidence = {}): FaceDecision {
  const { quality } = face;
  const nearest = ranked[0];
  if (!nearest || !Number.isFinite(nearest.distance)) return { known: false, reason: 'no_match' };
  const d1 = nearest.distance;
  const limit = personLimit(rule, nearest.bound);
  const candidate: CandidateDecision = { labelId: nearest.labelId, distance: d1, confidence: scoreOf(d1, rule) };
  if (d1 < rule.min) return { known: false, reason: 'copy_of_training_image', candidate };
  // A face too poor to tell people apart by: who it would have been, never a name.
  if (belowQualityFloor(quality, rule.quality)) return { known: false, reason: 'low_quality', candidate };
  if (d1 > limit) return { known: false, reason: d1 <= rule.nearMax ? 'below_threshold' : 'no_match', candidate };
  if (rule.ratioMax !== null && marginWithCohort(ranked, rule, face.cohortDistance) > rule.ratioMax)
    return { known: false, reason: 'ambiguous', candidate };
  // A "not this person" template at least as near as the person's own: the face is the one the reviewer corrected.
  if (isCorrected(d1, nearest.correction)) return { known: false, reason: 'corrected', candidate };
  return {
    known: true,
    labelId: nearest.labelId,
    distance: d1,
    confidence: candidate.confidence,
    certainty: d1 <= sureLimit(rule, limit) && sureQuality(quality, rule.quality) ? 'high' : 'unsure',
  };
}

/**
 * The 1:1 verification limit of a person: `verifyMax` scaled as their limit is scaled from `max` (a magnet proves
 * more before "yes"); `verifyMax` itself without a per-person limit.
 */
export function verifyLimit(rule: DecisionRule, bound: number | undefined): number {
  if (rule.cohortRatio == null) return rule.verifyMax;
  const limit = personLimit(rule, bound);
  if (limit >= rule.max || !(rule.max > rule.min)) return rule.verifyMax;
  return rule.min + ((rule.verifyMax - rule.min) * (limit - rule.min)) / (rule.max - rule.min);
}

/** The sure bound of a person: sureMax scaled as their limit is scaled from max. */
export function sureLimit(rule: DecisionRule, limit: number): number {
  if (limit >= rule.max || !(rule.max > rule.min)) return rule.sureMax;
  return rule.min + ((rule.sureMax - rule.min) * (limit - rule.min)) / (rule.max - rule.min);
}

/**
 * Every face of one picture decided together: a person is given to at most one face, the nearest to them. A face
 * whose nearest person went to a nearer face is decided again on the people left (named at most `unsure`: its
 * best match was someone else's), or stays unknown as `given_to_another_face` with that person as its candidate.
 */
export function assignNames(
  rankings: readonly (readonly PersonDistance[])[],
  rule: DecisionRule,
  evidence: readonly (FaceEvidence | undefined)[] = [],
): FaceDecision[] {
  const decisions: FaceDecision[] = new Array(rankings.length);
  const taken = new Set<number>();
  // Nearest faces first (ties: the earlier face), so each person goes to the face nearest to them.
  const order = rankings
    .map((ranked, i) => ({ i, d: ranked[0]?.distance ?? Infinity }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((x) => x.i);
  for (const i of order) {
    const first = decideFace(rankings[i], rule, evidence[i]);
    if (!first.known || !taken.has(first.labelId)) {
      if (first.known) taken.add(first.labelId);
      decisions[i] = first;
      continue;
    }
    const next = decideFace(
      rankings[i].filter((p) => !taken.has(p.labelId)),
      rule,
      evidence[i],
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
