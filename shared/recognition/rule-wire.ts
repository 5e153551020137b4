/**
 * The decision rules of a thresholds answer (`GET /api/models/thresholds`, shared/api/models.ts
 * thresholdValuesOf) read back as rules (decision.ts), for every host that decides with the server's rules: the
 * browser's engine (client/src/engine/rule-sync.ts) and the tests that compare it with the server. A value that does
 * not make a usable rule leaves that recognizer out (its default is safer than a guess).
 */
import { type DecisionRule, ruleProblem } from './decision.js';
import { similarityScaleOf } from './similarity.js';

/** The rule per recognizer; the embedding one says which descriptor model its distances belong to. */
export interface WireRules {
  lbph?: DecisionRule;
  embedding?: DecisionRule & { descriptorModel?: string };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * One recognizer's entry of the thresholds answer (`{ min?, max, sure_max, near_max, ratio_max, verify_max }`)
 * as a rule; null when it is not a usable one (a newer or broken answer: the default is safer than a guess).
 */
export function ruleFromThresholds(entry: unknown): DecisionRule | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const e = entry as Record<string, unknown>;
  const max = num(e.max);
  const sureMax = num(e.sure_max);
  const nearMax = num(e.near_max);
  const verifyMax = num(e.verify_max);
  const ratioMax = e.ratio_max === null ? null : num(e.ratio_max);
  if (max === undefined || sureMax === undefined || nearMax === undefined || verifyMax === undefined || ratioMax === undefined) return null;
  const rule: DecisionRule = { min: num(e.min) ?? 0, max, sureMax, nearMax, ratioMax, verifyMax };
  // #34: the per-person limit and the quality floors (absent from older servers' answers: off, as there).
  rule.cohortRatio = num(e.cohort_ratio) ?? null;
  rule.quality = null;
  const q = e.quality as Record<string, unknown> | null | undefined;
  if (q && typeof q === 'object') {
    const [minFacePx, minSharpness, sureFacePx, sureSharpness] = [q.min_face_px, q.min_sharpness, q.sure_face_px, q.sure_sharpness].map(
      num,
    );
    if (minFacePx === undefined || minSharpness === undefined || sureFacePx === undefined || sureSharpness === undefined) return null;
    rule.quality = { minFacePx, minSharpness, sureFacePx, sureSharpness };
  }
  return ruleProblem(rule) ? null : rule;
}

/** The rules of a thresholds answer (or of the kept copy), each recognizer's only where usable. */
export function rulesFromThresholds(body: unknown): WireRules {
  const out: WireRules = {};
  if (typeof body !== 'object' || body === null) return out;
  const b = body as Record<string, unknown>;
  const lbph = ruleFromThresholds(b.lbph);
  if (lbph) out.lbph = { ...lbph, scale: 'lbph' };
  const embedding = ruleFromThresholds(b.embedding);
  const model = (b.embedding as { descriptor_model?: unknown } | undefined)?.descriptor_model;
  // The embedding distances belong to one descriptor model: the engine applies them to that model only, and scores
  // them on its scale (#36: the same similarity as the server's).
  const scale = similarityScaleOf('embedding', typeof model === 'string' ? model : undefined);
  if (embedding) out.embedding = typeof model === 'string' ? { ...embedding, scale, descriptorModel: model } : { ...embedding, scale };
  return out;
}
