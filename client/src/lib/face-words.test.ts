import { describe, expect, it } from 'vitest';
import { type FaceResult, UNKNOWN_REASONS } from '../../../shared/api/index';
import { candidateText, matchText, nameText, overlayText, REASON_WORDS, reasonWords, TONE_COLORS, toneOf } from './face-words';

const face = (label: string, more: Partial<FaceResult> = {}): FaceResult => ({
  x: 0,
  y: 0,
  w: 10,
  h: 10,
  label,
  confidence: label === 'unknown' ? 0 : 80,
  ...more,
});

/** WCAG 2 contrast ratio of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe('toneOf', () => {
  it('shows a sure name as named, an unsure one as unsure, and a face without a name as unknown', () => {
    expect(toneOf(face('ada', { certainty: 'high' }))).toBe('named');
    expect(toneOf(face('ada', { certainty: 'unsure' }))).toBe('unsure');
    expect(toneOf(face('unknown', { reason: 'below_threshold' }))).toBe('unknown');
  });

  it('takes a named face from an answer before certainty existed as sure', () => {
    expect(toneOf(face('ada'))).toBe('named');
  });
});

describe('TONE_COLORS', () => {
  it('keeps every label readable: text on its fill at 4.5:1 or more (WCAG AA)', () => {
    for (const [tone, { fill, text }] of Object.entries(TONE_COLORS)) {
      expect(contrast(fill, text), tone).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('gives the three tones three different colours: green, amber, grey', () => {
    const hue = (hex: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
      return { r, g, b };
    };
    const named = hue(TONE_COLORS.named.fill);
    expect(named.g).toBeGreaterThan(named.r);
    expect(named.g).toBeGreaterThan(named.b);
    const unsure = hue(TONE_COLORS.unsure.fill);
    expect(unsure.r).toBeGreaterThan(unsure.b + 100);
    expect(unsure.g).toBeGreaterThan(unsure.b + 50);
    const grey = hue(TONE_COLORS.unknown.fill);
    expect(Math.max(grey.r, grey.g, grey.b) - Math.min(grey.r, grey.g, grey.b)).toBeLessThan(40);
  });
});

describe('reason words', () => {
  it('has short words for every reason the API gives', () => {
    expect(Object.keys(REASON_WORDS).sort()).toEqual(Object.keys(UNKNOWN_REASONS).sort());
    for (const words of Object.values(REASON_WORDS)) {
      expect(words.length).toBeLessThan(110);
      expect(words).not.toMatch(/`|POST|PUT|distance/); // for people, not developers
    }
  });

  it('says why in words, and takes a face without a reason (stored before reasons) as no match', () => {
    expect(reasonWords(face('unknown', { reason: 'below_threshold' }))).toBe(REASON_WORDS.below_threshold);
    expect(reasonWords(face('unknown', { reason: 'ambiguous' }))).toMatch(/two people/);
    expect(reasonWords(face('unknown', { reason: 'given_to_another_face' }))).toMatch(/already named/);
    expect(reasonWords(face('unknown'))).toBe('Not anyone the model was trained on.');
    expect(reasonWords(face('unknown', { reason: 'not_trained' }))).toMatch(/not been trained/);
    expect(reasonWords(face('unknown', { reason: 'copy_of_training_image' }))).toBe(
      'This looks like an exact copy of a training photo; Lookout does not accept copies. Show a live face.',
    );
  });
});

describe('names and labels', () => {
  it('names an unsure face as "probably"', () => {
    const f = face('ada', { certainty: 'unsure', confidence: 63.6 });
    expect(nameText(f)).toBe('probably ada');
    expect(overlayText(f)).toBe('probably ada 64%');
    expect(overlayText(face('ada', { certainty: 'high', confidence: 91 }))).toBe('ada 91%');
  });

  it('gives an unknown face its nearest person, without a percentage that would read as a match (#36)', () => {
    const f = face('unknown', { reason: 'below_threshold', candidate: { label: 'bob', confidence: 48.2, distance: 0.55 } });
    expect(candidateText(f)).toBe('nearest: bob');
    expect(overlayText(f)).toBe('unknown (nearest: bob)');
    expect(matchText(f)).toBeNull();
    expect(candidateText(face('unknown', { reason: 'not_trained' }))).toBeNull();
    expect(overlayText(face('unknown', { reason: 'not_trained' }))).toBe('unknown');
  });

  it('keeps a stranger nobody is near to plain "unknown" on the picture, the nearest person only in the list', () => {
    const far = face('unknown', { reason: 'no_match', candidate: { label: 'bob', confidence: 0, distance: 130 } });
    expect(overlayText(far)).toBe('unknown');
    expect(candidateText(far)).toBe('nearest: bob');
    const ambiguous = face('unknown', { reason: 'ambiguous', candidate: { label: 'bob', confidence: 70, distance: 0.4 } });
    expect(overlayText(ambiguous)).toBe('unknown (nearest: bob)');
  });

  it('shows one figure, the same on the picture and in the list: "87% match" on a named face, none on an unknown one (#36)', () => {
    const named = face('ada', { certainty: 'high', confidence: 86.6 });
    expect(matchText(named)).toBe('87% match');
    expect(overlayText(named)).toBe('ada 87%');
    // "unknown 0% match" read as a score; an unknown face shows no percentage anywhere.
    for (const reason of ['no_match', 'below_threshold', 'ambiguous', 'not_trained'] as const) {
      const unknown = face('unknown', { reason, confidence: 0, candidate: { label: 'bob', confidence: 59, distance: 90 } });
      expect(matchText(unknown)).toBeNull();
      expect(overlayText(unknown)).not.toMatch(/%/);
      expect(candidateText(unknown) ?? '').not.toMatch(/%/);
    }
  });

  it('never shows a candidate on a named face', () => {
    expect(candidateText(face('ada', { candidate: { label: 'bob', confidence: 50, distance: 1 } }))).toBeNull();
  });
});
