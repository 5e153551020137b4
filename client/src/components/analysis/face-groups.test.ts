import { describe, expect, it } from 'vitest';
import type { FaceResult } from '../../../../shared/api/index';
import { groupFaces } from './face-groups';

const face = (label: string, reason?: FaceResult['reason']): FaceResult => ({
  x: 0,
  y: 0,
  w: 10,
  h: 10,
  label,
  confidence: label === 'unknown' ? 0 : 80,
  ...(reason ? { reason } : {}),
});

describe('groupFaces', () => {
  it('gathers identical unknown faces into one group per reason, after the known ones', () => {
    const faces = [
      face('unknown', 'no_match'),
      face('ada'),
      face('unknown', 'no_match'),
      face('unknown', 'copy_of_training_image'),
      face('unknown', 'no_match'),
    ];
    const entries = groupFaces(faces);
    expect(entries.map((e) => (e.kind === 'face' ? `${e.face.label}#${e.index}` : `${e.reason}x${e.faces.length}`))).toEqual([
      'ada#1',
      'no_matchx3',
      'unknown#3',
    ]);
    const group = entries[1];
    expect(group.kind === 'group' && group.faces.map((m) => m.index)).toEqual([0, 2, 4]);
  });

  it('leaves a single unknown face and every known one on its own', () => {
    expect(groupFaces([face('ada'), face('ada'), face('unknown', 'not_trained')]).every((e) => e.kind === 'face')).toBe(true);
    expect(groupFaces([])).toEqual([]);
  });

  it('takes a face without a reason (a result stored before reasons) as no match', () => {
    const entries = groupFaces([face('unknown'), face('unknown', 'no_match')]);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'group', reason: 'no_match' });
  });

  it('lists each unknown face that names a nearest person on its own: two strangers are not one row (#36)', () => {
    const near = (label: string, reason: FaceResult['reason']): FaceResult => ({
      ...face('unknown', reason),
      candidate: { label, confidence: 59, distance: 90 },
    });
    const entries = groupFaces([
      face('ada'),
      near('ada', 'given_to_another_face'),
      near('ada', 'given_to_another_face'),
      near('bob', 'below_threshold'),
      face('unknown', 'no_match'),
      face('unknown', 'no_match'),
    ]);
    expect(entries.map((e) => (e.kind === 'face' ? `${e.face.label}#${e.index}` : `${e.reason}x${e.faces.length}`))).toEqual([
      'ada#0',
      'unknown#1',
      'unknown#2',
      'unknown#3',
      'no_matchx2',
    ]);
  });
});
