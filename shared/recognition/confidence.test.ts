import { describe, expect, it } from 'vitest';
import { decide, DEFAULT_EMBEDDING_WINDOW, DEFAULT_LBPH_WINDOW, EDGE_SCORE } from './confidence.js';

describe('decide (docs/ARCHITECTURE.md#confidence)', () => {
  it('LBPH: known only inside the spec window 4 to 85, inclusive', () => {
    expect(decide(3.99, DEFAULT_LBPH_WINDOW)).toEqual({ known: false, confidence: 0, reason: 'copy_of_training_image' });
    expect(decide(4, DEFAULT_LBPH_WINDOW)).toEqual({ known: true, confidence: 100 });
    expect(decide(85, DEFAULT_LBPH_WINDOW)).toEqual({ known: true, confidence: EDGE_SCORE });
    expect(decide(85.01, DEFAULT_LBPH_WINDOW)).toEqual({ known: false, confidence: 0, reason: 'no_match' });
  });

  it('says why a distance is unknown: below the window a copy of a training photo, above it no match', () => {
    // Distance 0: the training photo's own pixels (the same photo, a still camera frame).
    expect(decide(0, DEFAULT_LBPH_WINDOW)).toMatchObject({ known: false, reason: 'copy_of_training_image' });
    expect(decide(400, DEFAULT_LBPH_WINDOW)).toMatchObject({ known: false, reason: 'no_match' });
    // A window from 0 has nothing below it: the embedding recognizer never calls a face a copy.
    expect(decide(0, DEFAULT_EMBEDDING_WINDOW)).toEqual({ known: true, confidence: 100 });
    expect(decide(1.2, DEFAULT_EMBEDDING_WINDOW)).toMatchObject({ known: false, reason: 'no_match' });
  });

  it('the score falls monotonically with the distance', () => {
    let previous = Infinity;
    for (let d = 4; d <= 85; d += 0.5) {
      const { confidence } = decide(d, DEFAULT_LBPH_WINDOW);
      expect(confidence).toBeLessThanOrEqual(previous);
      previous = confidence;
    }
  });

  it('the second factor default (65%) accepts LBPH distances up to about 75', () => {
    expect(decide(74, DEFAULT_LBPH_WINDOW).confidence).toBeGreaterThanOrEqual(65);
    expect(decide(76, DEFAULT_LBPH_WINDOW).confidence).toBeLessThan(65);
  });

  it('embedding: known within euclidean 0.6', () => {
    expect(decide(0, DEFAULT_EMBEDDING_WINDOW).confidence).toBe(100);
    expect(decide(0.6, DEFAULT_EMBEDDING_WINDOW).known).toBe(true);
    expect(decide(0.61, DEFAULT_EMBEDDING_WINDOW).known).toBe(false);
  });

  it('non-finite distances are unknown', () => {
    expect(decide(Number.NaN, DEFAULT_LBPH_WINDOW)).toMatchObject({ known: false, reason: 'no_match' });
    expect(decide(Number.POSITIVE_INFINITY, DEFAULT_LBPH_WINDOW)).toMatchObject({ known: false, reason: 'no_match' });
    expect(decide(Number.NEGATIVE_INFINITY, DEFAULT_LBPH_WINDOW)).toMatchObject({ known: false, reason: 'no_match' });
  });
});
