/**
 * Corrections ("not this person"): a reviewer says a face named X is not X, and the face's features are kept as a
 * "not X" template. From then on a face that would be named X is `unknown` with the reason `corrected` when it is at
 * least as near to one of X's corrections as to X's own nearest sample (decision.ts): the same stranger is not given
 * that name again, while X's own faces, nearer to X's samples than to the stranger's, still are.
 *
 * Pure and browser-safe: the server's workers and the browser's engine annotate their rankings here, with the
 * distance of their recognizer (LBPH's chi-square between histograms, the embedding's Euclidean distance).
 */
import { euclideanDistance } from '../embedding/matcher.js';
import { chiSquareAlt } from '../lbph/lbph.js';
import type { PersonDistance } from './ranking.js';

/** Each person's corrections: label name -> the features of faces that are not them. */
export type Negatives = ReadonlyMap<string, readonly Float32Array[]>;

/** The corrections of both recognizers (LBPH histograms; embedding descriptors of the descriptor model in use). */
export interface FaceNegatives {
  lbph: Negatives;
  embedding: Negatives;
}

export const NO_NEGATIVES: Negatives = new Map();

export const EMPTY_FACE_NEGATIVES: FaceNegatives = Object.freeze({ lbph: NO_NEGATIVES, embedding: NO_NEGATIVES });

/** A recognizer's distance between two features. */
export type FeatureDistance = (a: Float32Array, b: Float32Array) => number;

export const lbphFeatureDistance: FeatureDistance = chiSquareAlt;
export const embeddingFeatureDistance: FeatureDistance = euclideanDistance;

/**
 * The distance from `feature` to the nearest of `negatives` (Infinity without any). A correction of another size
 * (another LBPH grid, another descriptor model) is not comparable and is passed over.
 */
export function nearestNegative(feature: Float32Array, negatives: readonly Float32Array[] | undefined, distance: FeatureDistance): number {
  let best = Number.POSITIVE_INFINITY;
  if (!negatives) return best;
  for (const negative of negatives) {
    if (negative.length !== feature.length) continue;
    const d = distance(feature, negative);
    if (d < best) best = d;
  }
  return best;
}

/** True when a face at `distance` from a person is at least as near to one of their corrections (`correction`). */
export function isCorrected(distance: number, correction: number | undefined): boolean {
  return correction !== undefined && Number.isFinite(correction) && correction <= distance;
}

/** What a host needs to apply corrections to a ranking: the model's names and the corrections by name. */
export interface CorrectionContext {
  names: ReadonlyMap<number, string>;
  negatives: Negatives;
  distance: FeatureDistance;
}

/**
 * The ranking with each person's `correction`: the face's distance to the nearest of that person's corrections.
 * People without corrections (and every person, when there are none) are left as they were.
 */
export function withCorrections(ranked: PersonDistance[], feature: Float32Array, context: CorrectionContext | null): PersonDistance[] {
  if (!context || context.negatives.size === 0) return ranked;
  return ranked.map((person) => {
    const name = context.names.get(person.labelId);
    const negatives = name === undefined ? undefined : context.negatives.get(name);
    if (!negatives?.length) return person;
    const correction = nearestNegative(feature, negatives, context.distance);
    return Number.isFinite(correction) ? { ...person, correction } : person;
  });
}

/** How many corrections a set holds (all people together). */
export function negativeCount(negatives: Negatives): number {
  let n = 0;
  for (const list of negatives.values()) n += list.length;
  return n;
}
