/**
 * Verification 1:1 (`POST /api/verify`): one face against one person's template set. Unlike recognition, no
 * other person takes part: the face is compared only with the claimed person's samples (labelDistanceEmbedding,
 * labelDistanceLbph: the nearest of that person's samples), and it is a match iff that distance is within the
 * rule's `verifyMax`, stricter than the 1:N limit, since a wrong "yes" here lets someone in.
 */
import type { VerifyFrame, VerifyReason } from '../api/verify.js';
import type { GrayImage, Rect } from '../image/types.js';
import { labelDistanceLbph, lbpHistogram, type LbphModel } from '../lbph/lbph.js';
import { alignedFace, FACE_ALIGNMENT } from '../vision/eye-alignment.js';
import type { HaarCascade } from '../vision/haar-cascade.js';
import { isCorrected, lbphFeatureDistance, nearestNegative } from './corrections.js';
import type { DecisionRule } from './decision.js';

export type VerifyRule = Pick<DecisionRule, 'min' | 'verifyMax'>;

/**
 * Exactly one face's distance to the claimed person's nearest sample, decided. `correction`: the face's distance to
 * the nearest of that person's corrections (corrections.ts); a face at least as near to one never verifies as them.
 */
export function decideVerify(distance: number, rule: VerifyRule, correction?: number | null): { match: boolean; reason: VerifyReason } {
  if (!Number.isFinite(distance)) return { match: false, reason: 'below_threshold' };
  // LBPH only (embedding's min is 0): closer than any live face comes, so a replayed training photo.
  if (distance < rule.min) return { match: false, reason: 'copy_of_training_image' };
  if (distance > rule.verifyMax) return { match: false, reason: 'below_threshold' };
  return isCorrected(distance, correction ?? undefined) ? { match: false, reason: 'corrected' } : { match: true, reason: 'match' };
}

/**
 * A burst's verdict: a match only when every frame matches. The reason is the first failing frame's, and the
 * distance the largest of the frames' (the least sure), null when any frame had no one face to compare; the
 * confidence the smallest.
 */
export function combineFrames(frames: readonly VerifyFrame[]): Pick<VerifyFrame, 'match' | 'reason' | 'distance' | 'confidence'> {
  const failing = frames.find((f) => !f.match);
  // The frames computed here always carry both scores (#35 leaves them out of some answers, not out of the work).
  const distances = frames.map((f) => f.distance ?? null);
  const distance = distances.some((d) => d === null) || frames.length === 0 ? null : Math.max(...(distances as number[]));
  const confidence = frames.length ? Math.min(...frames.map((f) => f.confidence ?? 0)) : 0;
  return failing
    ? { match: false, reason: failing.reason, distance, confidence }
    : { match: frames.length > 0, reason: 'match', distance, confidence };
}

/** A label's id in a model's names, or null when the model does not know it. */
export function labelIdOf(names: ReadonlyMap<number, string>, label: string): number | null {
  for (const [id, name] of names) if (name === label) return id;
  return null;
}

/**
 * LBPH: one face's distance to one person's nearest sample, its crop made as the model's own were (turned upright
 * by the eyes only for a model trained that way, as predictLbphFaces does).
 */
export function lbphLabelDistance(gray: GrayImage, box: Rect, model: LbphModel, labelId: number, eyeCascade: HaarCascade | null): number {
  return lbphLabelDistances(gray, box, model, labelId, eyeCascade, undefined).distance;
}

/**
 * LBPH: as lbphLabelDistance, and the same face's distance to the nearest of the person's corrections (`negatives`,
 * histograms of faces that are not them); null without any.
 */
export function lbphLabelDistances(
  gray: GrayImage,
  box: Rect,
  model: LbphModel,
  labelId: number,
  eyeCascade: HaarCascade | null,
  negatives: readonly Float32Array[] | undefined,
): { distance: number; correction: number | null } {
  const eyes = model.faceAlignment === FACE_ALIGNMENT ? eyeCascade : null;
  const histogram = lbpHistogram(alignedFace(gray, box, eyes));
  const correction = negatives?.length ? nearestNegative(histogram, negatives, lbphFeatureDistance) : Number.POSITIVE_INFINITY;
  return { distance: labelDistanceLbph(model, histogram, labelId), correction: Number.isFinite(correction) ? correction : null };
}
