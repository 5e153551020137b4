/**
 * #36 "One score": the one figure a face shows, its similarity in percent (0 to 100, higher is nearer), a fixed
 * monotonic map of the recognizer's raw distance. Fixed: it depends on the distance and on the distance scale
 * (LBPH's chi-square, or one descriptor model's euclidean distance) only, never on a threshold, so the same face
 * reads the same figure whatever a site sets its limits to, and a threshold can be shown in the same units
 * (`GET /api/models/thresholds` `similarity`, the Models page). The API's `confidence` (and a candidate's) is this
 * figure; server, browser engine, overlay, lists and chat all read it from here.
 *
 * The map is piecewise linear through four anchors per scale, each from a measurement (bench/RESULTS.md):
 *
 *   100%  at the distance of the same photo (LBPH: its copy floor 4; descriptors: 0)
 *    60%  at the calibrated default limit (rules.ts; `npm run bench open-set`: the limit that names about 2% of
 *         strangers), so a face named at the calibrated defaults reads the figure it read before #36
 *    50%  where 1% of the bench's 1:1 impostor pairs are accepted ("Open-set accuracy (#25)", 48,736 impostor pairs;
 *         also the calibrated bound of a limit, rules.ts limitBound)
 *     0%  at the median distance between two different people (half of all strangers' pairs lie farther)
 *
 * and clamped to 100 below the first and 0 past the last. So 60% and more is a face the calibrated defaults
 * would name, and under 50% one nearer to a stranger than 99% of strangers' pairs are to each other would not be.
 */
import type { DecisionRule } from './decision.js';

/** The distance scales: LBPH's, and each descriptor model's (rules.ts DESCRIPTOR_MODELS). */
export const SIMILARITY_SCALES = ['lbph', 'faceapi-128', 'faceres-1024'] as const;
export type SimilarityScale = (typeof SIMILARITY_SCALES)[number];

/** One anchor of the map: this distance reads this percentage. */
export interface SimilarityAnchor {
  distance: number;
  percent: number;
}

/** The percentages of the anchors, in order (see the header). */
export const ANCHOR_PERCENTS = [100, 60, 50, 0] as const;

/**
 * The anchors' distances per scale (bench/RESULTS.md):
 * - lbph: copy floor 4; limit 80 ("Out-of-sample open-set accuracy"); 1% of 1:1 impostor pairs at 84.0;
 *   strangers' median distance 117 ("LBPH across photos").
 * - faceapi-128: 0; limit 0.515; 1% of impostor pairs at 0.546; impostor median 0.764 ("Descriptor precision":
 *   the real faces' genuine / impostor medians 0.417 / 0.764).
 * - faceres-1024: 0; limit 0.88; 1% of impostor pairs at 0.915; impostor median 1.128 (same sections).
 */
const ANCHOR_DISTANCES: Readonly<Record<SimilarityScale, readonly [number, number, number, number]>> = Object.freeze({
  lbph: [4, 80, 84, 117],
  'faceapi-128': [0, 0.515, 0.546, 0.764],
  'faceres-1024': [0, 0.88, 0.915, 1.128],
});

/** The anchors of a scale, nearest first. */
export function similarityAnchors(scale: SimilarityScale): SimilarityAnchor[] {
  return ANCHOR_DISTANCES[scale].map((distance, i) => ({ distance, percent: ANCHOR_PERCENTS[i] }));
}

export function isSimilarityScale(value: unknown): value is SimilarityScale {
  return typeof value === 'string' && (SIMILARITY_SCALES as readonly string[]).includes(value);
}

/** The scale of a recognizer's distances (for `embedding`, its descriptor model's; face-api's when unknown). */
export function similarityScaleOf(recognizer: 'lbph' | 'embedding', descriptorModel?: string): SimilarityScale {
  if (recognizer === 'lbph') return 'lbph';
  return descriptorModel === 'faceres-1024' ? 'faceres-1024' : 'faceapi-128';
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/** The similarity of a distance on a scale, in percent with one decimal; 0 for no distance (NaN, infinite). */
export function similarity(distance: number, scale: SimilarityScale): number {
  if (!Number.isFinite(distance)) return 0;
  const d = ANCHOR_DISTANCES[scale];
  if (distance <= d[0]) return 100;
  for (let i = 1; i < d.length; i++) {
    if (distance <= d[i]) {
      const t = (distance - d[i - 1]) / (d[i] - d[i - 1]);
      return round1(ANCHOR_PERCENTS[i - 1] + (ANCHOR_PERCENTS[i] - ANCHOR_PERCENTS[i - 1]) * t);
    }
  }
  return 0;
}

/**
 * The scale of a rule's distances: the one it names (rules.ts sets it on every calibrated rule, rule-wire.ts on
 * every rule the server sends); for a rule built by hand without one, LBPH's when its limit is an LBPH distance
 * (past 2, where no unit descriptor's distance lies), else the default descriptor model's.
 */
export function scaleOfRule(rule: Pick<DecisionRule, 'scale' | 'max'>): SimilarityScale {
  if (rule.scale && isSimilarityScale(rule.scale)) return rule.scale;
  return rule.max > 2 ? 'lbph' : 'faceapi-128';
}
