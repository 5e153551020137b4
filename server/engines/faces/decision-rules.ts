/**
 * The decision rule each recognizer starts with on this server: the calibrated default of its model
 * (shared/recognition/rules.ts) with the deployment's settings over it (LBPH_DISTANCE_MIN/MAX,
 * EMBEDDING_DISTANCE_MAX). A site's saved thresholds go over this in turn (the runtime store).
 */
import type { RecognitionModel } from '../../../shared/api/index.js';
import type { DecisionRule } from '../../../shared/recognition/decision.js';
import { defaultRule, ruleWithOverrides } from '../../../shared/recognition/rules.js';
import type { Settings } from '../../config/settings.js';

export function settingsRule(
  settings: Pick<Settings, 'lbphDistanceMin' | 'lbphDistanceMax' | 'embeddingDistanceMax'>,
  recognizer: RecognitionModel,
  descriptorModel?: string,
): DecisionRule {
  if (recognizer === 'lbph')
    return ruleWithOverrides(defaultRule('lbph'), {
      min: settings.lbphDistanceMin,
      max: settings.lbphDistanceMax === '' ? null : settings.lbphDistanceMax,
    });
  const max = settings.embeddingDistanceMax;
  return ruleWithOverrides(defaultRule('embedding', descriptorModel), { max: max === '' ? null : max });
}
