/**
 * The decision rules the in-browser engine names faces with: the server's (GET /api/models/thresholds, a site's
 * thresholds over the calibrated defaults), so this browser and the server give the same names, candidates and
 * reasons for the same photo. The last answer is kept on the device (localStorage), so a kiosk without its server
 * keeps the site's thresholds; before any answer the engine uses the defaults (shared/recognition/rules.ts).
 */
import type { RecognitionModel } from '../../../shared/api/index';
import type { DecisionRule } from '../../../shared/recognition/decision';
import { ruleFromThresholds, rulesFromThresholds } from '../../../shared/recognition/rule-wire';
import { defaultRule } from '../../../shared/recognition/rules';
import { similarityScaleOf } from '../../../shared/recognition/similarity';
import type { EngineRules } from './protocol';

export const THRESHOLDS_URL = '/api/models/thresholds';
export const RULES_KEY = 'lookout.decisionRules';

/** The rule per recognizer; a recognizer left out decides with its default. */
export type { EngineRules };
/** The thresholds answer read as rules: shared/recognition/rule-wire.ts. */
export { ruleFromThresholds, rulesFromThresholds };

/**
 * The rule a recognition here decides with: the server's where given, else the default. An embedding rule applies
 * only to the descriptor model it was set for (`running`: the one this engine computes; unknown while no embedding
 * model is trained, when no face gets that far): a distance scale means nothing for another model.
 */
export function engineRule(recognizer: RecognitionModel, rules: EngineRules = {}, running?: string): DecisionRule {
  if (recognizer === 'lbph') return rules.lbph ?? defaultRule('lbph');
  const given = rules.embedding;
  // A rule without its descriptor model is scored on the running model's scale (#36: similarity.ts).
  if (given && (!given.descriptorModel || !running || given.descriptorModel === running))
    return given.descriptorModel || !running ? given : { ...given, scale: similarityScaleOf('embedding', running) };
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
