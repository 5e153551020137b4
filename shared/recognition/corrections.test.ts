/**
 * The corrections' decision logic ("not this person"), shared by the server's workers and the browser's engine: a
 * face that would be named X is unknown (`corrected`) when one of X's corrections is at least as near as X's nearest
 * sample; everything else decides as before.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trainEmbedding } from '../embedding/matcher.js';
import { assignNames, type DecisionRule, decideFace } from './decision.js';
import {
  embeddingFeatureDistance,
  isCorrected,
  lbphFeatureDistance,
  nearestNegative,
  negativeCount,
  withCorrections,
} from './corrections.js';
import { faceResults } from './face-results.js';
import { FacePipeline } from './pipeline.js';
import type { PersonDistance } from './ranking.js';
import { similarity } from './similarity.js';
import { decideVerify } from './verify.js';

const RULE: DecisionRule = { min: 0, max: 0.5, sureMax: 0.4, nearMax: 0.6, ratioMax: null, verifyMax: 0.45 };
const v = (...xs: number[]) => Float32Array.from(xs);

describe('nearestNegative and isCorrected', () => {
  it('takes the nearest correction of the same size, Infinity without any', () => {
    expect(nearestNegative(v(0, 0), [v(3, 4), v(1, 0)], embeddingFeatureDistance)).toBe(1);
    expect(nearestNegative(v(0, 0), [v(1, 1, 1)], embeddingFeatureDistance)).toBe(Number.POSITIVE_INFINITY);
    expect(nearestNegative(v(0, 0), undefined, embeddingFeatureDistance)).toBe(Number.POSITIVE_INFINITY);
    expect(nearestNegative(v(1, 2), [v(1, 2)], lbphFeatureDistance)).toBe(0);
  });

  it('corrects when the correction is at least as near as the person (ties corrected)', () => {
    expect(isCorrected(0.3, 0.2)).toBe(true);
    expect(isCorrected(0.3, 0.3)).toBe(true);
    expect(isCorrected(0.3, 0.31)).toBe(false);
    expect(isCorrected(0.3, undefined)).toBe(false);
    expect(isCorrected(0.3, Number.POSITIVE_INFINITY)).toBe(false);
  });
});

describe('decideFace with corrections', () => {
  it('would-be name X with a nearer "not X" template: unknown, corrected, X as the candidate', () => {
    expect(decideFace([{ labelId: 2, distance: 0.3, correction: 0.1 }], RULE)).toEqual({
      known: false,
      reason: 'corrected',
      candidate: { labelId: 2, distance: 0.3, confidence: similarity(0.3, 'faceapi-128') },
    });
    expect(decideFace([{ labelId: 2, distance: 0.3, correction: 0.35 }], RULE)).toMatchObject({ known: true, labelId: 2 });
  });

  it('leaves every other reason as it was: a correction only stops a name', () => {
    expect(decideFace([{ labelId: 2, distance: 0.55, correction: 0.1 }], RULE)).toMatchObject({ reason: 'below_threshold' });
    expect(decideFace([{ labelId: 2, distance: 0.9, correction: 0.1 }], RULE)).toMatchObject({ reason: 'no_match' });
    const margin = { ...RULE, ratioMax: 0.85 };
    expect(
      decideFace(
        [
          { labelId: 2, distance: 0.3, correction: 0.1 },
          { labelId: 3, distance: 0.31 },
        ],
        margin,
      ),
    ).toMatchObject({ reason: 'ambiguous' });
  });

  it('is the plain rule wherever the correction is further than the person, or absent (property)', () => {
    const people = fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 3 }).chain((ids) =>
      fc
        .tuple(
          fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: ids.length, maxLength: ids.length }),
          fc.array(fc.option(fc.double({ min: 0, max: 1, noNaN: true })), { minLength: ids.length, maxLength: ids.length }),
        )
        .map(([ds, cs]) => {
          const sorted = [...ds].sort((a, b) => a - b);
          return ids.map(
            (labelId, i): PersonDistance => ({ labelId, distance: sorted[i], ...(cs[i] === null ? {} : { correction: cs[i]! }) }),
          );
        }),
    );
    fc.assert(
      fc.property(people, (ranked) => {
        const plain = decideFace(
          ranked.map(({ labelId, distance }) => ({ labelId, distance })),
          RULE,
        );
        const decided = decideFace(ranked, RULE);
        const c = ranked[0].correction;
        if (plain.known && c !== undefined && c <= ranked[0].distance) {
          expect(decided).toMatchObject({ known: false, reason: 'corrected', candidate: { labelId: plain.labelId } });
        } else {
          expect(decided).toEqual(plain);
        }
      }),
    );
  });
});

describe('assignNames with corrections', () => {
  it('a corrected face does not take the person: another face of the picture may be named them', () => {
    const decisions = assignNames(
      [[{ labelId: 1, distance: 0.2, correction: 0.05 }], [{ labelId: 1, distance: 0.3, correction: 0.4 }]],
      RULE,
    );
    expect(decisions[0]).toMatchObject({ known: false, reason: 'corrected' });
    expect(decisions[1]).toMatchObject({ known: true, labelId: 1 });
  });
});

describe('withCorrections', () => {
  const names = new Map([
    [0, 'ada'],
    [1, 'grace'],
  ]);
  it("adds each person's nearest correction, by name; people without any are left alone", () => {
    const ranked = [
      { labelId: 1, distance: 0.3 },
      { labelId: 0, distance: 0.5 },
    ];
    const negatives = new Map([['grace', [v(3, 4), v(0, 1)]]]);
    expect(withCorrections(ranked, v(0, 0), { names, negatives, distance: embeddingFeatureDistance })).toEqual([
      { labelId: 1, distance: 0.3, correction: 1 },
      { labelId: 0, distance: 0.5 },
    ]);
    expect(withCorrections(ranked, v(0, 0), null)).toBe(ranked);
    expect(negativeCount(negatives)).toBe(2);
  });
});

describe('the pipeline applies the corrections it holds (embedding, described by a stub)', () => {
  it('names grace until a "not grace" template of this face is installed, and again once it is cleared', async () => {
    const model = trainEmbedding(
      [
        { label: 0, descriptor: [1, 0] },
        { label: 1, descriptor: [0, 1] },
      ],
      2,
    );
    const face = v(0.1, 0.8);
    const pipeline = new FacePipeline({ describe: async (_rgb, boxes) => boxes.map(() => face) });
    pipeline.setModels({
      embedding: {
        model,
        names: new Map([
          [0, 'ada'],
          [1, 'grace'],
        ]),
      },
    });
    const rgb = { width: 4, height: 4, channels: 3 as const, data: new Uint8Array(48) };
    const box = { x: 0, y: 0, width: 4, height: 4 };
    const run = async () => (await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule: RULE, boxes: [box] })).faces[0];
    expect(await run()).toMatchObject({ label: 'grace' });
    pipeline.setNegatives({ embedding: new Map([['grace', [v(0.12, 0.78)]]]) });
    expect(await run()).toMatchObject({ label: 'unknown', reason: 'corrected', candidate: { label: 'grace' } });
    // The LBPH corrections are another recognizer's: they do not touch this one.
    pipeline.setNegatives({ lbph: new Map([['ada', [v(0.1, 0.8)]]]) });
    expect(await run()).toMatchObject({ reason: 'corrected' });
    pipeline.setNegatives({ embedding: new Map() });
    expect(await run()).toMatchObject({ label: 'grace' });
  });

  it('answers `corrected` in the API shape (face-results), with the distance to the person', () => {
    const faces = faceResults(
      [{ box: { x: 1, y: 2, width: 3, height: 4 }, ranked: [{ labelId: 1, distance: 0.3, correction: 0.2 }] }],
      new Map([[1, 'grace']]),
      RULE,
    );
    expect(faces).toEqual([
      {
        x: 1,
        y: 2,
        w: 3,
        h: 4,
        label: 'unknown',
        confidence: 0,
        distance: 0.3,
        reason: 'corrected',
        candidate: { label: 'grace', confidence: similarity(0.3, 'faceapi-128'), distance: 0.3 },
      },
    ]);
  });
});

describe('decideVerify with corrections', () => {
  it('never verifies a face at least as near to a correction; otherwise as before', () => {
    expect(decideVerify(0.3, RULE, 0.2)).toEqual({ match: false, reason: 'corrected' });
    expect(decideVerify(0.3, RULE, 0.3)).toEqual({ match: false, reason: 'corrected' });
    expect(decideVerify(0.3, RULE, 0.5)).toEqual({ match: true, reason: 'match' });
    expect(decideVerify(0.3, RULE, null)).toEqual({ match: true, reason: 'match' });
    expect(decideVerify(0.5, RULE, 0.1)).toEqual({ match: false, reason: 'below_threshold' });
  });
});
