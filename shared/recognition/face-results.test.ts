import { describe, expect, it } from 'vitest';
import { UNKNOWN_REASONS } from '../api/common.js';
import { faceResult } from '../api/common.js';
import type { DecisionRule } from './decision.js';
import { faceResults, namesFromLabelIds } from './face-results.js';
import { defaultRule } from './rules.js';
import { similarity } from './similarity.js';

const box = { x: 10, y: 20, width: 30, height: 40 };
const LBPH = defaultRule('lbph');
const EMB: DecisionRule = { min: 0, max: 0.5, sureMax: 0.4, nearMax: 0.6, ratioMax: 0.85, verifyMax: 0.45 };
const names = namesFromLabelIds({ ada: 0, grace: 1, joan: 2 });
const one = (ranked: { labelId: number; distance: number }[] | null, rule: DecisionRule = LBPH, n = names) =>
  faceResults([{ box, ranked }], n, rule)[0];

describe('faceResults', () => {
  it('names a face inside the limit with its score, rounded distance and certainty', () => {
    expect(one([{ labelId: 1, distance: 44.123456 }])).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'grace',
      confidence: 78.9,
      distance: 44.1235,
      certainty: 'high',
    });
    expect(one([{ labelId: 1, distance: 80 }])).toMatchObject({ label: 'grace', certainty: 'unsure' });
  });

  it('keeps the nearest person as the candidate of an unknown face, with a true reason', () => {
    expect(one([{ labelId: 0, distance: 0.55 }], EMB)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'unknown',
      confidence: 0,
      distance: 0.55,
      reason: 'below_threshold',
      candidate: { label: 'ada', confidence: similarity(0.55, 'faceapi-128'), distance: 0.55 },
    });
    expect(one([{ labelId: 0, distance: 0.9 }], EMB)).toMatchObject({
      reason: 'no_match',
      candidate: { label: 'ada', confidence: similarity(0.9, 'faceapi-128') },
    });
    expect(one([{ labelId: 1, distance: 2 }])).toMatchObject({ reason: 'copy_of_training_image', candidate: { label: 'grace' } });
    expect(
      one(
        [
          { labelId: 1, distance: 0.3 },
          { labelId: 2, distance: 0.33 },
        ],
        EMB,
      ),
    ).toMatchObject({ label: 'unknown', reason: 'ambiguous', candidate: { label: 'grace' } });
  });

  it('never names an id the model has no name for, and drops a nameless candidate', () => {
    expect(one([{ labelId: 7, distance: 10 }])).toMatchObject({ label: 'unknown', distance: 10, reason: 'no_match' });
    const r = one([{ labelId: 7, distance: 200 }]);
    expect(r.reason).toBe('no_match');
    expect(r).not.toHaveProperty('candidate');
  });

  it('gives one person to at most one face of a picture, the nearest', () => {
    const faces = faceResults(
      [
        {
          box,
          ranked: [
            { labelId: 1, distance: 0.35 },
            { labelId: 2, distance: 0.9 },
          ],
        },
        {
          box,
          ranked: [
            { labelId: 1, distance: 0.2 },
            { labelId: 0, distance: 0.8 },
          ],
        },
        {
          box,
          ranked: [
            { labelId: 1, distance: 0.3 },
            { labelId: 0, distance: 0.45 },
            { labelId: 2, distance: 1 },
          ],
        },
      ],
      names,
      EMB,
    );
    expect(faces.map((f) => f.label)).toEqual(['unknown', 'grace', 'ada']);
    expect(faces[0]).toMatchObject({ reason: 'given_to_another_face', candidate: { label: 'grace', distance: 0.35 } });
    // The third face's nearest went to the second; its next person is near enough, so named, but only "probably".
    expect(faces[2]).toMatchObject({ label: 'ada', certainty: 'unsure', distance: 0.45 });
  });

  it('says not_trained with no distance without a model, and no_match for a face nobody was compared with', () => {
    expect(one([{ labelId: 0, distance: 10 }], LBPH, null as never)).toEqual({
      x: 10,
      y: 20,
      w: 30,
      h: 40,
      label: 'unknown',
      confidence: 0,
      reason: 'not_trained',
    });
    const unmatched = one([]);
    expect(unmatched).not.toHaveProperty('distance');
    expect(unmatched.reason).toBe('no_match');
  });

  it('answers only what the API schema allows: a reason and candidate on unknown faces, certainty on named ones', () => {
    const cases = [
      [{ labelId: 1, distance: 44 }],
      [{ labelId: 1, distance: 2 }],
      [{ labelId: 1, distance: 90 }],
      [{ labelId: 9, distance: 44 }],
      [],
      null,
    ];
    for (const ranked of cases) {
      const r = one(ranked, LBPH, ranked === null ? (null as never) : names);
      expect(faceResult.safeParse(r).success, JSON.stringify(r)).toBe(true);
      if (r.label === 'unknown') {
        expect(Object.keys(UNKNOWN_REASONS)).toContain(r.reason);
        expect(r).not.toHaveProperty('certainty');
      } else {
        expect(r).not.toHaveProperty('reason');
        expect(r).not.toHaveProperty('candidate');
        expect(r.certainty).toMatch(/^(high|unsure)$/);
      }
    }
  });
});
