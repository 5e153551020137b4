import { describe, expect, it } from 'vitest';
import {
  adviceFor,
  checkSentence,
  detectionReason,
  detectionShort,
  detectionText,
  isGood,
  readCheckAnswer,
  verdictText,
  verdictTone,
} from './photo-check';

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
  it('says which detector checked: remote by name, a fallback with the server reason, the selected local one not at all', () => {
    const face = [{ x: 0, y: 0, w: 90, h: 90 }];
    const local = readCheckAnswer({ check: { verdict: 'ok', detection_method: 'local' }, faces: face });
    expect(local.method).toBe('local');
    expect(local.note).toBeUndefined();
    expect([detectionText(local), detectionShort(local)]).toEqual(['', '']);

    const remote = readCheckAnswer({ check: { verdict: 'ok', detection_method: 'remote' }, faces: face });
    expect([detectionText(remote), detectionShort(remote)]).toEqual(['Checked with remote detection.', 'Remote detection']);

    // As server/people/photo-checker.ts words it when the model server is down.
    const note =
      'remote detection is selected but unavailable (connection refused); checked with the local detector instead (training will use remote detection once it is back)';
    const fallback = readCheckAnswer({ check: { verdict: 'blurred', detection_method: 'local', detection_note: note }, faces: face });
    expect(fallback).toMatchObject({ verdict: 'blurred', method: 'local', note });
    expect(detectionText(fallback)).toBe('Checked with the local detector: remote detection could not be used.');
    expect(detectionShort(fallback)).toBe('Local detection: remote could not be used');
    expect(detectionReason(fallback)).toBe(
      'Remote detection is selected but unavailable (connection refused); checked with the local detector instead (training will use remote detection once it is back).',
    );
    expect(detectionReason(remote)).toBe('');
    expect(detectionReason(local)).toBe('');

    // The browser's own check, or an older server: no method, nothing said; unknown values are not shown.
    const old = readCheckAnswer({ check: { verdict: 'ok', detection_method: 'cloud', detection_note: '  ' }, faces: face });
    expect(old.method).toBeUndefined();
    expect(old.note).toBeUndefined();
    expect(detectionText(old)).toBe('');
  });

  it('says one sentence under a flaw, about the photo for a file and about the camera for a capture (#36)', () => {
    const answer = (verdict: string, detail: string) =>
      readCheckAnswer({ check: { verdict, message: detail, measures: { face_px: 48 } }, faces: [{ x: 0, y: 0, w: 48, h: 48 }] });
    const blurred = answer('blurred', 'Blurred: hold the camera still and let it focus on the face.');
    expect(checkSentence(blurred, false, 'file')).toBe('The face is blurred in this photo: choose a sharper one.');
    expect(checkSentence(blurred, false, 'camera')).toBe('The face is blurred: hold still, or take it again.');
    const small = answer('too_small', 'Too small: the face is 48 px wide, at least 80 px recognises well; come closer.');
    expect(checkSentence(small, false, 'file')).toBe('The face is 48 px wide; 80 px or more recognises well: choose a photo taken closer.');
    for (const verdict of ['no_face', 'too_small', 'blurred', 'too_dark', 'too_bright', 'not_frontal']) {
      const said = checkSentence(answer(verdict, 'The server says so.'), false, 'file');
      expect(said, verdict).not.toMatch(/camera|hold still|The server says so/);
    }
    expect(checkSentence(answer('ok', 'Good photo: one clear face.'), false, 'file')).toBe('');
  });
});
