/**
 * People ranked by distance, the input of the decision rule (decision.ts): a person's photos count as one
 * template set, so each person stands at the distance of their nearest sample. One ordering for every recognizer
 * and host, so the server and the browser name the same face the same way.
 */

/** One person (a model label id) at the distance of their nearest sample. */
export interface PersonDistance {
  labelId: number;
  distance: number;
  /**
   * The face's distance to the nearest of this person's corrections (faces a reviewer said are not them:
   * corrections.ts); absent when they have none. The rule never names them when this is within `distance`.
   */
  correction?: number;
}

/** How many people a ranking keeps: the nearest, the next (margin rule), and one more (one name per face). */
export const RANK_DEPTH = 3;

/** The `k` nearest of a label -> nearest-distance map, nearest first (ties: the smaller label id). */
export function nearestPeople(nearest: ReadonlyMap<number, number>, k: number = RANK_DEPTH): PersonDistance[] {
  return [...nearest]
    .map(([labelId, distance]) => ({ labelId, distance }))
    .filter((p) => !Number.isNaN(p.distance))
    .sort((a, b) => a.distance - b.distance || a.labelId - b.labelId)
    .slice(0, Math.max(0, k));
}
