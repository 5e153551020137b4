import { describe, expect, it } from 'vitest';
import { DEFAULT_EMBEDDING_WINDOW, DEFAULT_LBPH_WINDOW } from './confidence.js';
import { namesFromLabelIds, toFaceResult } from './face-results.js';

const box = { x: 10, y: 20, width: 30, height: 40 };

describe('toFaceResult', () => {
  const names = namesFromLabelIds({ ada: 0, grace: 1 });

  it('names a face inside the window with its score and rounded distance', () => {
    expect(toFaceResult({ box, labelId: 1, distance: 44.123456 }, names, DEFAULT_LBPH_WINDOW)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'grace',
      confidence: 80.2,
      distance: 44.1235,
    });
  });

  it('keeps the distance but says unknown outside the window or for a nameless id', () => {
    expect(toFaceResult({ box, labelId: 0, distance: 0.7 }, names, DEFAULT_EMBEDDING_WINDOW)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'unknown',
      confidence: 0,
      distance: 0.7,
      reason: 'no_match',
    });
    expect(toFaceResult({ box, labelId: 7, distance: 10 }, names, DEFAULT_LBPH_WINDOW)).toMatchObject({
      label: 'unknown',
      distance: 10,
      reason: 'no_match',
    });
  });

  it('calls a face closer than the window starts a copy of a training photo', () => {
    expect(toFaceResult({ box, labelId: 1, distance: 0 }, names, DEFAULT_LBPH_WINDOW)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'unknown',
      confidence: 0,
      distance: 0,
      reason: 'copy_of_training_image',
    });
    // The embedding window starts at 0: an identical descriptor is a match.
    expect(toFaceResult({ box, labelId: 1, distance: 0 }, names, DEFAULT_EMBEDDING_WINDOW)).toMatchObject({
      label: 'grace',
      confidence: 100,
    });
  });

  it('gives a reason on every unknown face and none on a known one', () => {
    const cases = [
      { face: { box, labelId: 1, distance: 44 }, names },
      { face: { box, labelId: 1, distance: 2 }, names },
      { face: { box, labelId: 1, distance: 90 }, names },
      { face: { box, labelId: 9, distance: 44 }, names },
      { face: { box, labelId: null, distance: null }, names },
      { face: { box, labelId: 1, distance: 44 }, names: null },
    ];
    for (const { face, names: n } of cases) {
      const r = toFaceResult(face, n, DEFAULT_LBPH_WINDOW);
      if (r.label === 'unknown') expect(r.reason, JSON.stringify(face)).toMatch(/^(not_trained|no_match|copy_of_training_image)$/);
      else expect(r).not.toHaveProperty('reason');
    }
  });

  it('reports no distance without a model or a match', () => {
    expect(toFaceResult({ box, labelId: 0, distance: 10 }, null, DEFAULT_LBPH_WINDOW)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'unknown',
      confidence: 0,
      reason: 'not_trained',
    });
    const unmatched = toFaceResult({ box, labelId: null, distance: null }, names, DEFAULT_LBPH_WINDOW);
    expect(unmatched).not.toHaveProperty('distance');
    expect(unmatched.reason).toBe('no_match');
  });
});
