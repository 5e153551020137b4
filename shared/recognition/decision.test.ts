import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trainEmbedding, rankEmbedding, labelDistanceEmbedding, euclideanDistance } from '../embedding/matcher.js';
import { assignNames, decideFace, type DecisionRule, marginRatio, ruleProblem, scoreOf } from './decision.js';
import type { PersonDistance } from './ranking.js';
import { defaultRule, ruleWithOverrides } from './rules.js';
import { similarity } from './similarity.js';

const RULE: DecisionRule = { min: 0, max: 0.5, sureMax: 0.4, nearMax: 0.6, ratioMax: 0.85, verifyMax: 0.45 };

const ranking = fc
  .uniqueArray(fc.integer({ min: 0, max: 6 }), { maxLength: 4 })
  .chain((ids) =>
    fc
      .array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: ids.length, maxLength: ids.length })
      .map((ds) => ds.sort((a, b) => a - b).map((distance, i): PersonDistance => ({ labelId: ids[i], distance }))),
  );

describe('decideFace', () => {
  it('names within the limit, sure up to sureMax, and says why otherwise', () => {
    expect(decideFace([{ labelId: 3, distance: 0.3 }], RULE)).toEqual({
      known: true,
      labelId: 3,
      distance: 0.3,
      // #36: the similarity of 0.3 on the scale of this rule's distances (face-api's), whatever its limits.
      confidence: similarity(0.3, 'faceapi-128'),
      certainty: 'high',
    });
    expect(decideFace([{ labelId: 3, distance: 0.45 }], RULE)).toMatchObject({ known: true, certainty: 'unsure' });
    expect(decideFace([{ labelId: 3, distance: 0.55 }], RULE)).toMatchObject({
      known: false,
      reason: 'below_threshold',
      candidate: { labelId: 3 },
    });
    expect(decideFace([{ labelId: 3, distance: 0.61 }], RULE)).toMatchObject({
      known: false,
      reason: 'no_match',
      candidate: { labelId: 3 },
    });
    expect(decideFace([], RULE)).toEqual({ known: false, reason: 'no_match' });
    expect(decideFace([{ labelId: 3, distance: 3 }], { ...defaultRule('lbph') })).toMatchObject({ reason: 'copy_of_training_image' });
  });

  it('the margin rule: no name when the next person is about as near', () => {
    const close = [
      { labelId: 1, distance: 0.3 },
      { labelId: 2, distance: 0.34 },
    ];
    expect(marginRatio(close)).toBeCloseTo(0.882, 3);
    expect(decideFace(close, RULE)).toMatchObject({ known: false, reason: 'ambiguous', candidate: { labelId: 1 } });
    expect(decideFace(close, { ...RULE, ratioMax: null })).toMatchObject({ known: true, labelId: 1 });
    expect(decideFace(close, { ...RULE, ratioMax: 1 })).toMatchObject({ known: true, labelId: 1 });
    expect(decideFace([close[0], { labelId: 2, distance: 0.5 }], RULE)).toMatchObject({ known: true, labelId: 1 });
  });

  it('the score falls with the distance: 100 at 0, 60 at the calibrated limit (not this rule’s), 0 far past it', () => {
    expect(scoreOf(0, RULE)).toBe(100);
    expect(scoreOf(defaultRule('embedding').max, RULE)).toBe(60);
    expect(scoreOf(0.5, RULE)).toBe(scoreOf(0.5, defaultRule('embedding')));
    expect(scoreOf(5, RULE)).toBe(0);
    expect(scoreOf(Infinity, RULE)).toBe(0);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 2, noNaN: true }), fc.double({ min: 0, max: 2, noNaN: true }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        return scoreOf(lo, RULE) >= scoreOf(hi, RULE);
      }),
    );
  });

  it('a named face always passes every bound of the rule', () => {
    fc.assert(
      fc.property(ranking, (ranked) => {
        const d = decideFace(ranked, RULE);
        if (!d.known) return true;
        return d.distance <= RULE.max && d.distance >= RULE.min && marginRatio(ranked) <= (RULE.ratioMax ?? 1);
      }),
    );
  });
});

describe('assignNames', () => {
  it('names each person at most once per picture, and never names a face the rule alone would not', () => {
    fc.assert(
      fc.property(fc.array(ranking, { maxLength: 6 }), (rankings) => {
        const out = assignNames(rankings, RULE);
        const named = out.flatMap((d) => (d.known ? [d.labelId] : []));
        if (new Set(named).size !== named.length) return false;
        return out.every((d, i) => !d.known || rankings[i].some((p) => p.labelId === d.labelId && p.distance <= RULE.max));
      }),
    );
  });

  it('keeps a picture of one face exactly as decideFace decides it', () => {
    fc.assert(
      fc.property(ranking, (ranked) => {
        expect(assignNames([ranked], RULE)[0]).toEqual(decideFace(ranked, RULE));
      }),
    );
  });
});

describe('rankEmbedding', () => {
  it('ranks people by their nearest sample, one entry a person, like a brute-force search', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            label: fc.integer({ min: 0, max: 5 }),
            v: fc.array(fc.float({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
          }),
          {
            minLength: 1,
            maxLength: 20,
          },
        ),
        fc.array(fc.float({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
        (samples, q) => {
          const model = trainEmbedding(
            samples.map((s) => ({ label: s.label, descriptor: s.v })),
            4,
          );
          const brute = new Map<number, number>();
          for (const s of samples) {
            const d = euclideanDistance(Float32Array.from(s.v), q);
            brute.set(s.label, Math.min(brute.get(s.label) ?? Infinity, d));
          }
          const ranked = rankEmbedding(model, q, 10);
          expect(ranked.length).toBe(brute.size);
          for (let i = 0; i < ranked.length; i++) {
            expect(ranked[i].distance).toBeCloseTo(brute.get(ranked[i].labelId)!, 5);
            expect(labelDistanceEmbedding(model, q, ranked[i].labelId)).toBeCloseTo(ranked[i].distance, 5);
            if (i > 0) expect(ranked[i].distance).toBeGreaterThanOrEqual(ranked[i - 1].distance);
          }
          expect(labelDistanceEmbedding(model, q, 99)).toBe(Infinity);
          // A shallower ranking is the head of the deeper one (the bound never drops a person that belongs in it).
          expect(rankEmbedding(model, q, 2)).toEqual(ranked.slice(0, 2));
        },
      ),
    );
  });
});

describe('rules', () => {
  it('every default rule is usable, and embedding defaults depend on the descriptor model', () => {
    for (const r of [defaultRule('lbph'), defaultRule('embedding'), defaultRule('embedding', 'faceres-1024')])
      expect(ruleProblem(r)).toBeNull();
    expect(defaultRule('embedding', 'faceres-1024')).not.toEqual(defaultRule('embedding', 'faceapi-128'));
    expect(defaultRule('embedding', 'no-such-model')).toEqual(defaultRule('embedding'));
  });

  it('overrides replace keys, null keeps the default, a moved limit drags the sure bound (never the verification limit), nonsense is refused', () => {
    const base = defaultRule('embedding');
    expect(ruleWithOverrides(base, { max: null, ratioMax: null })).toEqual(base);
    const tighter = ruleWithOverrides(base, { max: 0.3 });
    // #36: 1:1 verification is its own decision: a new limit once moved it unasked (75 -> 45).
    expect(tighter).toMatchObject({ max: 0.3, sureMax: 0.3, verifyMax: base.verifyMax, scale: 'faceapi-128' });
    expect(ruleWithOverrides(base, { ratioMax: 1 }).ratioMax).toBe(1);
    expect(() => ruleWithOverrides(base, { sureMax: 0.9 })).toThrow(/sureMax/);
    expect(() => ruleWithOverrides(base, { ratioMax: 1.5 })).toThrow(/ratioMax/);
    expect(() => ruleWithOverrides(base, { max: Number.NaN })).toThrow(/max/);
  });
});

describe('per-person limits and face quality (#34)', () => {
  const COHORT: DecisionRule = { ...RULE, max: 0.55, sureMax: 0.45, cohortRatio: 0.8 };
  const FLOORS = { minFacePx: 32, minSharpness: 0.004, sureFacePx: 60, sureSharpness: 0.012 };
  const GOOD = { facePx: 120, sharpness: 0.05, highlights: 200, clipped: 0 };

  it('holds a magnet (a person near many strangers) to a stricter limit than a person far from them', () => {
    // The same face at 0.44 from two people: one whose cohort bound is 0.65 (limit 0.52), one at 0.5 (limit 0.40).
    expect(decideFace([{ labelId: 1, distance: 0.44, bound: 0.65 }], COHORT)).toMatchObject({ known: true, labelId: 1 });
    expect(decideFace([{ labelId: 2, distance: 0.44, bound: 0.5 }], COHORT)).toMatchObject({
      known: false,
      reason: 'below_threshold',
      candidate: { labelId: 2 },
    });
    // Never past max however far the cohort is.
    expect(decideFace([{ labelId: 1, distance: 0.56, bound: 5 }], COHORT)).toMatchObject({ known: false, reason: 'below_threshold' });
    // Without a bound (no cohort on this host) the sure bound is the limit: stricter, never looser.
    expect(decideFace([{ labelId: 1, distance: 0.46 }], COHORT)).toMatchObject({ known: false, reason: 'below_threshold' });
    expect(decideFace([{ labelId: 1, distance: 0.44 }], COHORT)).toMatchObject({ known: true });
  });

  it('scales certainty with the person; the score is the similarity of the distance, whoever they are (#36)', () => {
    const a = decideFace([{ labelId: 1, distance: 0.4, bound: 0.5 }], COHORT);
    const b = decideFace([{ labelId: 1, distance: 0.52, bound: 0.65 }], COHORT);
    expect(a).toMatchObject({ known: true, confidence: similarity(0.4, 'faceapi-128'), certainty: 'unsure' });
    expect(b).toMatchObject({ known: true, confidence: similarity(0.52, 'faceapi-128'), certainty: 'unsure' });
    // Sure up to sureMax scaled like the limit (0.45 * 0.40 / 0.55 = 0.327 for the magnet).
    expect(decideFace([{ labelId: 1, distance: 0.32, bound: 0.5 }], COHORT)).toMatchObject({ certainty: 'high' });
    expect(decideFace([{ labelId: 1, distance: 0.34, bound: 0.5 }], COHORT)).toMatchObject({ certainty: 'unsure' });
    // A caller's fixed 65 admits one distance whoever the person is, and nothing the rule leaves unknown.
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.2, max: 1, noNaN: true }), (d, bound) => {
        const decision = decideFace([{ labelId: 1, distance: d, bound }], COHORT);
        const confidence = decision.known ? decision.confidence : 0;
        if (confidence >= 65) expect(d).toBeLessThanOrEqual(Math.min(personLimitOf(bound), 0.4507));
      }),
    );
  });

  it('counts the nearest face of the cohort as a next person in the margin rule (however few are enrolled)', () => {
    const alone = [{ labelId: 1, distance: 0.4, bound: 0.65 }];
    expect(decideFace(alone, COHORT)).toMatchObject({ known: true });
    // A stranger of the cohort at 0.42: 0.4 / 0.42 = 0.95 > 0.85, two faces about equally near.
    expect(decideFace(alone, COHORT, { cohortDistance: 0.42 })).toMatchObject({
      known: false,
      reason: 'ambiguous',
      candidate: { labelId: 1 },
    });
    expect(decideFace(alone, COHORT, { cohortDistance: 0.6 })).toMatchObject({ known: true });
    // Without a per-person limit the cohort takes no part.
    expect(decideFace([{ labelId: 1, distance: 0.4 }], RULE, { cohortDistance: 0.42 })).toMatchObject({ known: true });
  });

  it('a face under the quality floors is low_quality with its candidate; a poor one is never high', () => {
    const rule: DecisionRule = { ...RULE, quality: FLOORS };
    const near = [{ labelId: 4, distance: 0.1 }];
    expect(decideFace(near, rule, { quality: GOOD })).toMatchObject({ known: true, certainty: 'high' });
    expect(decideFace(near, rule, { quality: { ...GOOD, facePx: 30 } })).toEqual({
      known: false,
      reason: 'low_quality',
      candidate: { labelId: 4, distance: 0.1, confidence: similarity(0.1, 'faceapi-128') },
    });
    expect(decideFace(near, rule, { quality: { ...GOOD, sharpness: 0.003 } })).toMatchObject({ known: false, reason: 'low_quality' });
    for (const poor of [{ facePx: 50 }, { sharpness: 0.01 }, { highlights: 60 }, { clipped: 0.3 }, { frontal: false }]) {
      expect(decideFace(near, rule, { quality: { ...GOOD, ...poor } })).toMatchObject({ known: true, certainty: 'unsure' });
    }
    // No measures (a host that did not measure), or no floors: quality plays no part.
    expect(decideFace(near, rule)).toMatchObject({ certainty: 'high' });
    expect(decideFace(near, RULE, { quality: { ...GOOD, facePx: 10 } })).toMatchObject({ certainty: 'high' });
    // In a picture, each face by its own quality.
    const both = assignNames([near, [{ labelId: 5, distance: 0.1 }]], rule, [{ quality: GOOD }, { quality: { ...GOOD, facePx: 20 } }]);
    expect(both.map((d) => (d.known ? 'named' : d.reason))).toEqual(['named', 'low_quality']);
  });

  it('refuses per-person and quality settings that cannot work', () => {
    expect(ruleProblem({ ...RULE, cohortRatio: 0 })).toMatch(/cohortRatio/);
    expect(ruleProblem({ ...RULE, cohortRatio: 3 })).toMatch(/cohortRatio/);
    expect(ruleProblem({ ...RULE, quality: { ...FLOORS, minFacePx: -1 } })).toMatch(/quality.minFacePx/);
    expect(ruleProblem({ ...RULE, quality: { ...FLOORS, sureFacePx: 10 } })).toMatch(/certainty high/);
    expect(ruleProblem({ ...RULE, cohortRatio: 0.8, quality: FLOORS })).toBeNull();
    expect(ruleProblem(defaultRule('embedding'))).toBeNull();
    expect(ruleProblem(defaultRule('embedding', 'faceres-1024'))).toBeNull();
  });

  function personLimitOf(bound: number): number {
    return Math.min(COHORT.max, (COHORT.cohortRatio ?? 1) * bound);
  }
});
