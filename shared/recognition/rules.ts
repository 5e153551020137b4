/**
 * Calibrated default decision rules (decision.ts), per recognizer and, for `embedding`, per descriptor model:
 * each distance scale is its own, so a threshold fixed for one model means nothing for another. The values come
 * from `npm run bench open-set` (bench/RESULTS.md, "Open-set accuracy"), chosen for a stated false-accept target;
 * sites calibrate their own through the thresholds API (`PUT /api/models/thresholds`).
 */
import type { RecognitionModel } from '../api/index.js';
import { type DecisionRule, type QualityFloors, ruleProblem } from './decision.js';

/** The embedding recognizer's descriptor models (shared/embedding). */
export const DESCRIPTOR_MODELS = ['faceapi-128', 'faceres-1024'] as const;
export type DescriptorModel = (typeof DESCRIPTOR_MODELS)[number];
export const DEFAULT_DESCRIPTOR_MODEL: DescriptorModel = 'faceapi-128';

/**
 * LBPH (chi-square distance on 100x100 crops). The spec's window was 4..85; on photos taken at another moment 85
 * names 21% of strangers, 80 names 5 to 7% (bench/RESULTS.md), so the limit is 80 (LBPH_DISTANCE_MAX=85 gives the
 * original's window back). No margin rule: the calibrated ratio was 0.99, i.e. no margin helps LBPH.
 */
const LBPH_RULE: DecisionRule = Object.freeze({
  min: 4,
  max: 80,
  sureMax: 72,
  nearMax: 100,
  ratioMax: null,
  verifyMax: 75,
  cohortRatio: null,
  quality: null as QualityFloors | null,
});

/**
 * Quality floors of the query face (#34; photo-check.ts measures): under the first pair a face is `low_quality`,
 * under the second it is named at most `unsure`. Measured on `npm run bench open-set`'s degraded queries
 * (bench/RESULTS.md, "Out-of-sample open-set accuracy").
 */
export const QUALITY_FLOORS: QualityFloors = Object.freeze({ minFacePx: 32, minSharpness: 0.004, sureFacePx: 60, sureSharpness: 0.012 });

/**
 * Per descriptor model (euclidean distance between descriptors; faceres' are L2-normalised first), calibrated on
 * `npm run bench open-set` for at most 5% of strangers named, then rounded a little toward strict:
 * - faceapi-128: 2.8 to 3.8% strangers named, 95 to 99.7% of the enrolled named right (the plain 0.6 named 63%);
 * - faceres-1024 (BGR less ImageNet means, as trained): 2.1 to 2.6% strangers named, 92 to 99% named right. The
 *   calibrated limit was 0.852 (4.5 to 5.0%); strangers' nearest distances crowd at 0.835, so the limit is 0.83.
 *   Its margin (0.97) changes nothing on this set at 0.83 but holds look-alikes back past it. About as good as
 *   face-api here at 3x the time per face, so face-api's descriptor stays the default.
 * verifyMax (1:1) sits just under the limit: 0.0% (faceapi, 0.46) and 0.04% (faceres, 0.82) false accepts there.
 */
const EMBEDDING_RULES: Readonly<Record<DescriptorModel, DecisionRule>> = Object.freeze({
  'faceapi-128': Object.freeze({
    min: 0,
    max: 0.55,
    sureMax: 0.45,
    nearMax: 0.65,
    ratioMax: 0.91,
    verifyMax: 0.46,
    cohortRatio: 0.8,
    quality: QUALITY_FLOORS,
  }),
  'faceres-1024': Object.freeze({
    min: 0,
    max: 0.9,
    sureMax: 0.7,
    nearMax: 1.0,
    ratioMax: 0.97,
    verifyMax: 0.82,
    cohortRatio: 0.85,
    quality: QUALITY_FLOORS,
  }),
});

export function isDescriptorModel(value: unknown): value is DescriptorModel {
  return typeof value === 'string' && (DESCRIPTOR_MODELS as readonly string[]).includes(value);
}

/** The calibrated default rule of a recognizer (and descriptor model, for `embedding`). */
export function defaultRule(recognizer: RecognitionModel, descriptorModel: string = DEFAULT_DESCRIPTOR_MODEL): DecisionRule {
  if (recognizer === 'lbph') return { ...LBPH_RULE };
  return { ...EMBEDDING_RULES[isDescriptorModel(descriptorModel) ? descriptorModel : DEFAULT_DESCRIPTOR_MODEL] };
}

/** A rule's keys a site may override (undefined and null keep the default). */
export type RuleOverrides = { [K in keyof DecisionRule]?: DecisionRule[K] | null };

/**
 * `rule` with the given keys replaced. `null` in overrides means "the default", for every key; the margin rule is
 * switched off with `ratioMax: 1` (d1 / d2 never exceeds 1). Throws a RangeError when the result is not a usable
 * rule (ruleProblem).
 */
export function ruleWithOverrides(rule: DecisionRule, overrides: RuleOverrides): DecisionRule {
  const out: DecisionRule = { ...rule };
  for (const key of Object.keys(overrides) as (keyof DecisionRule)[]) {
    const v = overrides[key];
    if (v === undefined || v === null) continue;
    (out as unknown as Record<string, unknown>)[key] = v;
  }
  // A limit moved past the sure or verification bound drags them along, so a single "limit" edit stays valid.
  if (overrides.max != null) {
    if (overrides.sureMax == null) out.sureMax = Math.min(out.sureMax, out.max);
    if (overrides.verifyMax == null) out.verifyMax = Math.min(out.verifyMax, out.max);
    if (overrides.nearMax == null) out.nearMax = Math.max(out.nearMax, out.max);
  }
  const problem = ruleProblem(out);
  if (problem) throw new RangeError(problem);
  return out;
}
