import { describe, expect, it } from 'vitest';
import { adviceFor, isGood, readCheckAnswer, verdictText, verdictTone } from './photo-check';

describe('photo check words', () => {
  it('reads the server answer: verdict, words, faces', () => {
    const r = readCheckAnswer({
      check: { verdict: 'several_faces', words: 'Two faces were found.', faces: 2 },
      faces: [
        { x: 1, y: 2, w: 30, h: 30 },
        { x: 50, y: 2, w: 30, h: 30 },
      ],
    });
    expect(r).toEqual({
      verdict: 'several_faces',
      detail: 'Two faces were found.',
      faces: [
        { x: 1, y: 2, w: 30, h: 30 },
        { x: 50, y: 2, w: 30, h: 30 },
      ],
    });
    expect(verdictText(r, false)).toBe('Two faces: pick one');
    expect(verdictTone(r, false)).toBe('error');
    expect(isGood(r, false)).toBe(false);
    expect(verdictText(r, true)).toBe('Face picked (of two)');
    expect(isGood(r, true)).toBe(true);
    expect(adviceFor(r, false)).toContain('Pick the face');
  });
  it('takes reasons as words, and a missing verdict from the face count', () => {
    const r = readCheckAnswer({ check: { reasons: [{ code: 'x', words: 'Too dark.' }, 'Small.'] }, faces: [] });
    expect(r.verdict).toBe('no_face');
    expect(r.detail).toBe('Too dark. Small.');
    expect(verdictText(r, false)).toBe('No face');
  });
  it('names each flaw in a few words', () => {
    const words = (verdict: string) => verdictText(readCheckAnswer({ check: { verdict }, faces: [{ x: 0, y: 0, w: 9, h: 9 }] }), false);
    expect(words('too_small')).toBe('Too small');
    expect(words('blurred')).toBe('Blurred');
    expect(words('ok')).toBe('Good photo');
    expect(verdictTone(readCheckAnswer({ check: { verdict: 'blurred' }, faces: [] }), false)).toBe('warn');
  });
});
