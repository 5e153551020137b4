/** Verification's decision and a burst's verdict (shared/recognition/verify.ts), on exact distances. */
import { describe, expect, it } from 'vitest';
import type { VerifyFrame } from '../api/verify.js';
import { combineFrames, decideVerify, labelIdOf } from './verify.js';

const lbph = { min: 4, verifyMax: 76 };
const embedding = { min: 0, verifyMax: 0.46 };

describe('decideVerify', () => {
  it('matches up to verifyMax inclusive, and not past it', () => {
    expect(decideVerify(0.46, embedding)).toEqual({ match: true, reason: 'match' });
    expect(decideVerify(0.4601, embedding)).toEqual({ match: false, reason: 'below_threshold' });
    expect(decideVerify(0, embedding)).toEqual({ match: true, reason: 'match' });
  });

  it('refuses a distance under the window start as a copy of a training image (LBPH)', () => {
    expect(decideVerify(3.9, lbph)).toEqual({ match: false, reason: 'copy_of_training_image' });
    expect(decideVerify(4, lbph)).toEqual({ match: true, reason: 'match' });
  });

  it('never matches a distance that is not a number', () => {
    for (const d of [Number.POSITIVE_INFINITY, Number.NaN]) expect(decideVerify(d, embedding).match).toBe(false);
  });
});

describe('combineFrames', () => {
  const frame = (match: boolean, distance: number | null, confidence: number, reason: VerifyFrame['reason']): VerifyFrame => ({
    match,
    distance,
    confidence,
    reason,
    faces: 1,
  });

  it('a match only when every frame matches, at the least sure distance and score', () => {
    expect(combineFrames([frame(true, 0.3, 75, 'match'), frame(true, 0.41, 66, 'match')])).toEqual({
      match: true,
      reason: 'match',
      distance: 0.41,
      confidence: 66,
    });
  });

  it('the first failing frame gives the reason; a frame without a distance leaves none', () => {
    const burst = [frame(true, 0.3, 75, 'match'), frame(false, null, 0, 'no_face'), frame(false, 0.7, 20, 'below_threshold')];
    expect(combineFrames(burst)).toEqual({ match: false, reason: 'no_face', distance: null, confidence: 0 });
  });

  it('no frames is no match', () => {
    expect(combineFrames([]).match).toBe(false);
  });
});

describe('labelIdOf', () => {
  it("finds a label's id in a model's names, or null", () => {
    const names = new Map([
      [0, 'ada'],
      [1, 'bob'],
    ]);
    expect(labelIdOf(names, 'bob')).toBe(1);
    expect(labelIdOf(names, 'eve')).toBeNull();
  });
});
