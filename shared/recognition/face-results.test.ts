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
    });
    expect(toFaceResult({ box, labelId: 7, distance: 10 }, names, DEFAULT_LBPH_WINDOW)).toMatchObject({ label: 'unknown', distance: 10 });
  });

  it('reports no distance without a model or a match', () => {
    expect(toFaceResult({ box, labelId: 0, distance: 10 }, null, DEFAULT_LBPH_WINDOW)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'unknown',
      confidence: 0,
    });
    expect(toFaceResult({ box, labelId: null, distance: null }, names, DEFAULT_LBPH_WINDOW)).not.toHaveProperty('distance');
  });
});
