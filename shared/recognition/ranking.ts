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
  /**
   * This person's cohort bound (cohort.ts): their distance to the nearest faces of a background cohort of strangers;
   * absent without a cohort. The rule's per-person limit reads it.
   */
  bound?: number;
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

/** Deeper rankings than this (the open-set bench asks for every person) skip the one-pass estimate. */
export const SCREEN_MAX_DEPTH = 64;

/**
 * The k-th smallest per-person minimum of `scores` (score i is sample i's, of person `labels[i]`; Infinity when
 * there are fewer than k people): the bound the one-pass rankings (matcher.ts, lbph.ts) keep exact candidates under.
 */
export function kthPersonScore(scores: Float64Array, labels: Int32Array, k: number): number {
  const topLabels: number[] = [];
  const topScore: number[] = [];
  let kth = Infinity;
  for (let i = 0; i < labels.length; i++) {
    const s = scores[i];
    if (!(s < kth)) continue;
    const label = labels[i];
    const at = topLabels.indexOf(label);
    if (at >= 0) {
      if (s >= topScore[at]) continue;
      topLabels.splice(at, 1);
      topScore.splice(at, 1);
    } else if (topLabels.length === k) {
      topLabels.pop();
      topScore.pop();
    }
    let pos = topScore.length;
    while (pos > 0 && topScore[pos - 1] > s) pos--;
    topLabels.splice(pos, 0, label);
    topScore.splice(pos, 0, s);
    if (topLabels.length === k) kth = topScore[k - 1];
  }
  return kth;
}
