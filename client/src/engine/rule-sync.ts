/**
 * The decision rules the in-browser engine names faces with: the server's (GET /api/models/thresholds, a site's
 * thresholds over the calibrated defaults), so this browser and the server give the same names, candidates and
 * reasons for the same photo. The last answer is kept on the device (localStorage), so a kiosk without its server
 * keeps the site's thresholds; before any answer the engine uses the defaults (shared/recognition/rules.ts).
 */
import type { RecognitionModel } from '../../../shared/api/index';
import { type DecisionRule, ruleProblem } from '../../../shared/recognition/decision';
import { defaultRule } from '../../../shared/recognition/rules';
import type { EngineRules } from './protocol';

export const THRESHOLDS_URL = '/api/models/thresholds';
export const RULES_KEY = 'lookout.decisionRules';

/** The rule per recognizer; a recognizer left out decides with its default. */
export type { EngineRules };

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
export function rulesFromThresholds(body: unknown): EngineRules {
  const out: EngineRules = {};
  if (typeof body !== 'object' || body === null) return out;
  const b = body as Record<string, unknown>;
  const lbph = ruleFromThresholds(b.lbph);
  if (lbph) out.lbph = lbph;
  const embedding = ruleFromThresholds(b.embedding);
  const model = (b.embedding as { descriptor_model?: unknown } | undefined)?.descriptor_model;
  // The embedding distances belong to one descriptor model: the engine applies them to that model only.
  if (embedding) out.embedding = typeof model === 'string' ? { ...embedding, descriptorModel: model } : embedding;
  return out;
}

/**
 * The rule a recognition here decides with: the server's where given, else the default. An embedding rule applies
 * only to the descriptor model it was set for (`running`: the one this engine computes; unknown while no embedding
 * model is trained, when no face gets that far): a distance scale means nothing for another model.
 */
export function engineRule(recognizer: RecognitionModel, rules: EngineRules = {}, running?: string): DecisionRule {
  if (recognizer === 'lbph') return rules.lbph ?? defaultRule('lbph');
  const given = rules.embedding;
  if (given && (!given.descriptorModel || !running || given.descriptorModel === running)) return given;
  return defaultRule('embedding', running);
}

export interface RuleSyncOptions {
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /** Where the last answer is kept (localStorage in the app); without it, it lasts for the page. */
  storage?: Pick<Storage, 'getItem' | 'setItem'> | null;
  url?: string;
  /** Told when the rules change. */
  onRules?(rules: EngineRules): void;
}

export class RuleSync {
  private current: EngineRules;
  private checking: Promise<EngineRules> | null = null;
  private first: Promise<EngineRules> | null = null;

  constructor(private readonly options: RuleSyncOptions = {}) {
    this.current = this.kept();
  }

  /** The rules now: the server's last answer, the kept copy offline, or none (the defaults). */
  get rules(): EngineRules {
    return this.current;
  }

  /** Resolves once the server was asked once (answered or not); never rejects. */
  ensureChecked(): Promise<EngineRules> {
    this.first ??= this.check();
    return this.first;
  }

  /** Asks the server now (joined with a check under way); an unreachable or refusing server keeps what is known. */
  check(): Promise<EngineRules> {
    this.checking ??= this.run().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private kept(): EngineRules {
    try {
      const text = this.options.storage?.getItem(RULES_KEY);
      return text ? rulesFromThresholds(JSON.parse(text)) : {};
    } catch {
      return {};
    }
  }

  private async run(): Promise<EngineRules> {
    let body: unknown;
    try {
      const res = await (this.options.fetch ?? fetch)(this.options.url ?? THRESHOLDS_URL, { cache: 'no-store' });
      if (!res.ok) return this.current;
      body = await res.json();
    } catch {
      return this.current; // offline: the kept rules stay
    }
    const rules = rulesFromThresholds(body);
    try {
      this.options.storage?.setItem(RULES_KEY, JSON.stringify(body));
    } catch {
      // Storage full or refused: the rules still apply for this page.
    }
    if (JSON.stringify(rules) !== JSON.stringify(this.current)) {
      this.current = rules;
      this.options.onRules?.(rules);
    }
    return this.current;
  }
}
