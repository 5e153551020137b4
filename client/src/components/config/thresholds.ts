/**
 * The recognizers' thresholds on the Models page, apart from the markup so they are tested on their own: the
 * editable fields with their words, the form's values read back as the request (only what was changed; null puts a
 * value back to its default), and a preview's counts as "before -> after".

 */
import type {
  EnrolledCounts,
  RecentCounts,
  RecognitionModel,
  RecognizerThresholds,
  ThresholdKey,
  ThresholdsPreviewResponse,
  ThresholdsRequest,
  ThresholdValues,
} from '../../../../shared/api/index';
import { similarity, similarityScaleOf } from '../../../../shared/recognition/similarity';

export type { RecognizerThresholds, ThresholdKey, ThresholdsPreviewResponse, ThresholdsRequest };

export interface ThresholdField {
  key: ThresholdKey;
  label: string;
  hint: string;
  /** Shown for this recognizer only (absent: for both). */
  only?: RecognitionModel;
}

/** The fields in the order shown, with words for people (distances: lower is closer). */
export const THRESHOLD_FIELDS: readonly ThresholdField[] = [
  { key: 'max', label: 'Limit', hint: 'The largest distance at which a face is still named. Lower: fewer strangers named.' },
  {
    key: 'sure_max',
    label: 'Sure up to',
    hint: 'Named faces up to here are sure (green); between here and the limit, "probably" (amber).',
  },
  {
    key: 'ratio_max',
    label: 'Margin ratio',
    hint: 'A name only when the nearest person is clearly nearer than the next: nearest / next at most this. 1 switches it off.',
  },
  {
    key: 'verify_max',
    label: 'Verification limit',
    hint: 'For checking one claimed person (sign-in), set on its own: a change of the limit leaves it as it is.',
  },
  {
    key: 'cohort_ratio',
    label: 'Per-person limit',
    hint: "A person is named only within this share of the distance from their photos to the strangers' faces nearest them (a background set shipped with Lookout): stricter for people who look like many others. 1.5: the limit alone.",
    only: 'embedding',
  },
];

/** The fields a recognizer shows (LBPH has no background cohort, so no per-person limit). */
export function fieldsFor(recognizer: RecognitionModel): readonly ThresholdField[] {
  return THRESHOLD_FIELDS.filter((f) => !f.only || f.only === recognizer);
}

/** The quality floors of a recognizer's rule in words, or null when it has none. */
export function qualityWords(entry: Pick<RecognizerThresholds, 'quality'>): string | null {
  const q = entry.quality;
  if (!q) return null;
  return `Faces narrower than ${q.min_face_px} px or blurred (sharpness under ${q.min_sharpness}) are not named ("too small or too blurred"); under ${q.sure_face_px} px or ${q.sure_sharpness} they are named "probably" at most.`;
}

/** Steps of the number inputs: LBPH distances are in the tens, embedding distances below 2. */
export function stepOf(recognizer: RecognitionModel, key: ThresholdKey): number {
  if (key === 'ratio_max' || key === 'cohort_ratio') return 0.01;
  return recognizer === 'lbph' ? 1 : 0.01;
}

/** The distances shown with their similarity too (#36): the limits, not the ratios. */
const DISTANCE_KEYS: readonly ThresholdKey[] = ['max', 'sure_max', 'verify_max'];

/**
 * "≈ 60% similarity": a distance of the form in the units of the percentage a face shows (its similarity,
 * shared/recognition/similarity.ts, the same function the server and the browser's engine score faces with), so a
 * setting reads against the figures on the faces. Null for a ratio or a value that is not a number.
 */
export function similarityText(
  recognizer: RecognitionModel,
  entry: Pick<RecognizerThresholds, 'descriptor_model'>,
  key: ThresholdKey,
  value: string | undefined,
): string | null {
  const text = value?.trim() ?? '';
  const distance = Number(text);
  if (!DISTANCE_KEYS.includes(key) || text === '' || !Number.isFinite(distance) || distance < 0) return null;
  return `≈ ${Math.round(similarity(distance, similarityScaleOf(recognizer, entry.descriptor_model)))}% similarity`;
}

/** A value as the form shows it ("" for a margin rule that is off). */
export function shown(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : String(Math.round(value * 1000) / 1000);
}

/** The margin rule off reads as 1 in the form (d1 / d2 never exceeds 1), as the server takes it. */
export function formValue(entry: Pick<ThresholdValues, ThresholdKey>, key: ThresholdKey): string {
  return key === 'ratio_max' && entry.ratio_max === null ? '1' : shown(entry[key]);
}

export function isOverridden(entry: RecognizerThresholds, key: ThresholdKey): boolean {
  return entry.overridden.includes(key);
}

export function anyOverridden(entry: RecognizerThresholds): boolean {
  return THRESHOLD_FIELDS.some((f) => isOverridden(entry, f.key));
}

/** "Default: 85" (or "Default: off" for a margin rule that is off by default). */
export function defaultText(entry: RecognizerThresholds, key: ThresholdKey): string {
  const d = entry.defaults[key];
  if (key === 'ratio_max' && (d === null || d === 1)) return 'Default: off';
  return `Default: ${shown(d)}`;
}

/**
 * The request for the form's values: only the fields changed from what the server holds (so an untouched bound
 * follows a moved limit), or why the form cannot be sent.
 */
export function updateOf(
  recognizer: RecognitionModel,
  entry: RecognizerThresholds,
  form: Partial<Record<ThresholdKey, string>>,
): { update: ThresholdsRequest; changed: number } | { problem: string } {
  const update: ThresholdsRequest = { recognizer };
  let changed = 0;
  for (const { key, label } of fieldsFor(recognizer)) {
    const text = form[key]?.trim();
    if (text === undefined || text === formValue(entry, key)) continue;
    const value = Number(text);
    if (text === '' || !Number.isFinite(value) || value < 0) return { problem: `${label} must be a number of at least 0.` };
    if (key === 'ratio_max' && !(value > 0 && value <= 1)) return { problem: `${label} must be above 0 and at most 1 (1: off).` };
    if (key === 'cohort_ratio' && !(value > 0 && value <= 1.5)) return { problem: `${label} must be above 0 and at most 1.5.` };
    update[key] = value;
    changed += 1;
  }
  return { update, changed };
}

/** Every value back to its default. */
export function resetOf(recognizer: RecognitionModel): ThresholdsRequest {
  const all: ThresholdsRequest = { recognizer, max: null, sure_max: null, ratio_max: null, verify_max: null };
  return recognizer === 'embedding' ? { ...all, cohort_ratio: null } : all;
}

/** The rows of the enrolled people's table: each training photo decided against all the others. */
export const ENROLLED_ROWS: readonly { key: Exclude<keyof EnrolledCounts, 'unknown_reasons'>; label: string }[] = [
  { key: 'named_right', label: 'Named right' },
  { key: 'named_wrong', label: 'Named as someone else' },
  { key: 'unsure', label: 'Unsure ("probably …")' },
  { key: 'unknown', label: 'Unknown' },
];

/** The rows of the recent recognitions' table. */
export const RECENT_ROWS: readonly { key: Exclude<keyof RecentCounts, 'unknown_reasons'>; label: string }[] = [
  { key: 'named', label: 'Named' },
  { key: 'unsure', label: 'Unsure ("probably …")' },
  { key: 'unknown', label: 'Unknown' },
];

/** Faces that could not be decided again, in all. */
export function notEvaluated(recent: ThresholdsPreviewResponse['recent']): number {
  return Object.values(recent.not_evaluated).reduce((a, b) => a + b, 0);
}

/** "12 → 9" (or "12, unchanged"). */
export function change(before: number, after: number): string {
  return before === after ? `${before}, unchanged` : `${before} → ${after}`;
}
