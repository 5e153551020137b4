import { describe, expect, it } from 'vitest';
import { decideFace, type DecisionRule, scoreOf } from './decision.js';
import { DESCRIPTOR_MODELS, defaultRule, limitBound, ruleWithOverrides } from './rules.js';
import { SIMILARITY_SCALES, scaleOfRule, similarity, similarityAnchors, similarityScaleOf } from './similarity.js';

describe('similarity (#36: one figure per face)', () => {
  it('falls monotonically with the distance on every scale, from 100 to 0', () => {
    for (const scale of SIMILARITY_SCALES) {
      const anchors = similarityAnchors(scale);
      const end = anchors.at(-1)?.distance as number;
      let previous = Infinity;
      for (let i = 0; i <= 2000; i++) {
        const s = similarity((end * 1.2 * i) / 2000, scale);
        expect(s).toBeLessThanOrEqual(previous);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(100);
        previous = s;
      }
      expect(similarity(0, scale)).toBe(100);
      expect(similarity(end * 2, scale)).toBe(0);
    }
  });

  it('reads its anchors exactly: 100 at the same photo, 60 at the calibrated limit, 50 at 1% of impostor pairs, 0 at their median', () => {
    expect(similarityAnchors('lbph')).toEqual([
      { distance: 4, percent: 100 },
      { distance: 80, percent: 60 },
      { distance: 84, percent: 50 },
      { distance: 117, percent: 0 },
    ]);
    for (const scale of SIMILARITY_SCALES)
      for (const { distance, percent } of similarityAnchors(scale)) expect(similarity(distance, scale)).toBe(percent);
    // Between anchors, linear: halfway from LBPH's copy floor to its limit is 80.
    expect(similarity(42, 'lbph')).toBe(80);
  });

  it('sits on the calibration it names: each calibrated limit is the 60% anchor, each limit bound about 50%', () => {
    expect(similarity(defaultRule('lbph').max, 'lbph')).toBe(60);
    expect(similarity(limitBound('lbph').max, 'lbph')).toBeCloseTo(48.5, 1);
    for (const model of DESCRIPTOR_MODELS) {
      const scale = similarityScaleOf('embedding', model);
      expect(scale).toBe(model);
      expect(similarity(defaultRule('embedding', model).max, scale)).toBe(60);
      expect(Math.abs(similarity(limitBound('embedding', model).max, scale) - 50)).toBeLessThan(1.5);
    }
  });

  it('no distance, no similarity', () => {
    expect(similarity(Number.NaN, 'lbph')).toBe(0);
    expect(similarity(Number.POSITIVE_INFINITY, 'faceapi-128')).toBe(0);
  });

  it('is the same for the same distance whatever the thresholds (the score of decideFace and of scoreOf)', () => {
    const ranked = [{ labelId: 1, distance: 50 }];
    const rule = defaultRule('lbph');
    const named = decideFace(ranked, rule);
    const lowered = decideFace(ranked, ruleWithOverrides(rule, { max: 55, sureMax: 55, verifyMax: 55 }));
    const raised = decideFace(ranked, ruleWithOverrides(rule, { max: 85 }));
    // Before #36 the same face read 65.8 at the defaults and 61.9 at a limit of 55.
    for (const d of [named, lowered, raised]) expect(d).toMatchObject({ known: true, confidence: similarity(50, 'lbph') });
    // Past a lowered limit the candidate keeps the very figure it had when named.
    const unknown = decideFace(ranked, ruleWithOverrides(rule, { max: 45, sureMax: 45, verifyMax: 45 }));
    expect(unknown).toMatchObject({ known: false, candidate: { confidence: similarity(50, 'lbph') } });
    expect(scoreOf(50, { ...rule, max: 45 })).toBe(scoreOf(50, rule));
  });

  it('takes the scale from the rule (the descriptor model), guessing only for a rule made by hand', () => {
    expect(scaleOfRule(defaultRule('embedding', 'faceres-1024'))).toBe('faceres-1024');
    expect(scaleOfRule(defaultRule('embedding'))).toBe('faceapi-128');
    expect(scaleOfRule(defaultRule('lbph'))).toBe('lbph');
    const byHand: DecisionRule = { min: 4, max: 85, sureMax: 75, nearMax: 100, ratioMax: null, verifyMax: 75 };
    expect(scaleOfRule(byHand)).toBe('lbph');
    const embeddingByHand: DecisionRule = { ...byHand, min: 0, max: 0.5, sureMax: 0.4, nearMax: 0.6, verifyMax: 0.4 };
    expect(scaleOfRule(embeddingByHand)).toBe('faceapi-128');
    // The same distance reads differently on two descriptor models' scales: each has its own.
    expect(similarity(0.8, 'faceapi-128')).toBe(0);
    expect(similarity(0.8, 'faceres-1024')).toBeGreaterThan(60);
  });
});
