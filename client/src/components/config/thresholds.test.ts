import { describe, expect, it } from 'vitest';
import {
  change,
  defaultText,
  fieldsFor,
  formValue,
  isOverridden,
  qualityWords,
  type RecognizerThresholds,
  resetOf,
  similarityText,
  updateOf,
} from './thresholds';

const lbph: RecognizerThresholds = {
  min: 4,
  max: 70,
  sure_max: 70,
  near_max: 100,
  ratio_max: null,
  verify_max: 70,
  defaults: { min: 4, max: 85, sure_max: 75, near_max: 100, ratio_max: null, verify_max: 75 },
  overridden: ['max'],
  bounds: { min: 4, max: 85, basis: 'calibrated' },
};

const embedding: RecognizerThresholds = {
  min: 0,
  max: 0.5,
  sure_max: 0.42,
  near_max: 0.6,
  ratio_max: 0.87,
  verify_max: 0.45,
  defaults: { min: 0, max: 0.5, sure_max: 0.42, near_max: 0.6, ratio_max: 0.87, verify_max: 0.45 },
  overridden: [],
  bounds: { min: 0, max: 0.55, basis: 'calibrated' },
  descriptor_model: 'faceapi-128',
};

const form = (entry: RecognizerThresholds, changes: Record<string, string> = {}) => ({
  max: formValue(entry, 'max'),
  sure_max: formValue(entry, 'sure_max'),
  ratio_max: formValue(entry, 'ratio_max'),
  verify_max: formValue(entry, 'verify_max'),
  ...changes,
});

describe('updateOf', () => {
  it('sends only what was changed, so bounds left alone follow a moved limit', () => {
    expect(updateOf('embedding', embedding, form(embedding, { max: '0.45' }))).toEqual({
      update: { recognizer: 'embedding', max: 0.45 },
      changed: 1,
    });
    expect(updateOf('lbph', lbph, form(lbph))).toEqual({ update: { recognizer: 'lbph' }, changed: 0 });
  });

  it('shows a margin rule that is off as 1, and sends 1 to switch it off', () => {
    expect(formValue(lbph, 'ratio_max')).toBe('1');
    expect(updateOf('embedding', embedding, form(embedding, { ratio_max: '1' }))).toMatchObject({ update: { ratio_max: 1 } });
  });

  it('says why a value cannot be sent', () => {
    expect(updateOf('lbph', lbph, form(lbph, { max: '' }))).toEqual({ problem: 'Limit must be a number of at least 0.' });
    expect(updateOf('lbph', lbph, form(lbph, { max: '-3' }))).toMatchObject({ problem: expect.stringMatching(/^Limit/) });
    expect(updateOf('embedding', embedding, form(embedding, { ratio_max: '1.5' }))).toMatchObject({
      problem: expect.stringMatching(/^Margin ratio must be above 0 and at most 1/),
    });
  });
});

describe('the limits in the units of a face’s percentage (#36)', () => {
  it('shows each distance as the similarity a face at that distance reads: the calibrated limits at 60%', () => {
    expect(similarityText('lbph', lbph, 'max', '80')).toBe('≈ 60% similarity');
    expect(similarityText('lbph', lbph, 'verify_max', '75')).toBe('≈ 63% similarity');
    expect(similarityText('embedding', embedding, 'max', '0.515')).toBe('≈ 60% similarity');
    // Each descriptor model its own scale: the same distance reads another figure under faceres.
    expect(similarityText('embedding', { descriptor_model: 'faceres-1024' }, 'max', '0.88')).toBe('≈ 60% similarity');
    expect(similarityText('embedding', { descriptor_model: 'faceres-1024' }, 'max', '0.515')).not.toBe('≈ 60% similarity');
  });

  it('follows the value typed, and says nothing for a ratio or for what is not a distance', () => {
    expect(similarityText('lbph', lbph, 'max', '42')).toBe('≈ 80% similarity');
    expect(similarityText('lbph', lbph, 'ratio_max', '0.9')).toBeNull();
    expect(similarityText('embedding', embedding, 'cohort_ratio', '1')).toBeNull();
    expect(similarityText('lbph', lbph, 'max', '')).toBeNull();
    expect(similarityText('lbph', lbph, 'max', 'far')).toBeNull();
  });

  it('sends a new limit alone: the verification limit is not part of the request', () => {
    expect(updateOf('lbph', lbph, form(lbph, { max: '45' }))).toEqual({ update: { recognizer: 'lbph', max: 45 }, changed: 1 });
  });
});

describe('words', () => {
  it('gives each value its default, and says which are the site’s own', () => {
    expect(defaultText(lbph, 'max')).toBe('Default: 85');
    expect(defaultText(lbph, 'ratio_max')).toBe('Default: off');
    expect(defaultText(embedding, 'ratio_max')).toBe('Default: 0.87');
    expect(isOverridden(lbph, 'max')).toBe(true);
    expect(isOverridden(lbph, 'sure_max')).toBe(false);
    expect(isOverridden({ ...embedding, overridden: ['verify_max'] }, 'verify_max')).toBe(true);
  });

  it('puts every value back to its default on reset', () => {
    expect(resetOf('lbph')).toEqual({ recognizer: 'lbph', max: null, sure_max: null, ratio_max: null, verify_max: null });
  });

  it('shows a preview count as before → after', () => {
    expect(change(12, 9)).toBe('12 → 9');
    expect(change(3, 3)).toBe('3, unchanged');
  });
});

describe('the per-person limit and the quality floors (#34)', () => {
  it('shows the per-person limit for the embedding recognizer only, and sends it like the others', () => {
    expect(fieldsFor('lbph').map((f) => f.key)).not.toContain('cohort_ratio');
    expect(fieldsFor('embedding').map((f) => f.key)).toContain('cohort_ratio');
    expect(resetOf('embedding')).toMatchObject({ cohort_ratio: null });
  });

  it('says the quality floors in words', () => {
    expect(qualityWords({ quality: { min_face_px: 32, min_sharpness: 0.004, sure_face_px: 60, sure_sharpness: 0.012 } })).toMatch(
      /narrower than 32 px.*under 60 px/,
    );
    expect(qualityWords({ quality: null })).toBeNull();
  });
});
