import { describe, expect, it } from 'vitest';
import { euclideanDistance, trainEmbedding } from '../embedding/matcher.js';
import { chiSquareAlt, trainLbph } from '../lbph/lbph.js';
import type { DecisionRule } from './decision.js';
import { type PersonDistance, RANK_DEPTH } from './ranking.js';
import { leaveOneOutEmbedding, leaveOneOutLbph, previewEnrolled, previewRecent, storedNearest } from './threshold-preview.js';

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Brute force: sample i against every other sample, each person at their nearest, nearest first. */
function bruteForce(n: number, labels: ArrayLike<number>, distance: (i: number, j: number) => number): PersonDistance[][] {
  return Array.from({ length: n }, (_, i) => {
    const nearest = new Map<number, number>();
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const d = distance(i, j);
      if (d < (nearest.get(labels[j]) ?? Infinity)) nearest.set(labels[j], d);
    }
    return [...nearest]
      .map(([labelId, d]) => ({ labelId, distance: d }))
      .sort((a, b) => a.distance - b.distance || a.labelId - b.labelId)
      .slice(0, RANK_DEPTH);
  });
}

function clusteredEmbedding(people: number, perPerson: number[], dim: number, spread: number, seed: number) {
  const rnd = random(seed);
  const centres = Array.from({ length: people }, () => Array.from({ length: dim }, () => rnd() * 2 - 1));
  const samples: { label: number; descriptor: number[] }[] = [];
  for (let p = 0; p < people; p++) {
    for (let k = 0; k < perPerson[p]; k++) samples.push({ label: p, descriptor: centres[p].map((c) => c + (rnd() * 2 - 1) * spread) });
  }
  return { model: trainEmbedding(samples, dim), samples };
}

const RULE: DecisionRule = { min: 0, max: 1, sureMax: 0.8, nearMax: 1.5, ratioMax: null, verifyMax: 0.9 };

describe('leave-one-out', () => {
  it('ranks each embedding sample against all the others, as brute force does', async () => {
    const { model, samples } = clusteredEmbedding(5, [4, 3, 1, 5, 2], 16, 0.3, 7);
    const loo = await leaveOneOutEmbedding(model);
    const expected = bruteForce(samples.length, model.labels, (i, j) => euclideanDistance(samples[i].descriptor, samples[j].descriptor));
    expect(loo).toMatchObject({ samples: 15, people: 5 });
    // Evaluated in the spread order: every person's first sample (by index), then every person's second, ...
    const order = [0, 4, 7, 8, 13, 1, 5, 9, 14, 2, 6, 10, 3, 11, 12];
    expect(loo.heldOut.map((h) => h.labelId)).toEqual(order.map((i) => model.labels[i]));
    loo.heldOut.forEach((held, k) => {
      expect(held.ranked.map((r) => r.labelId)).toEqual(expected[order[k]].map((r) => r.labelId));
      for (const [m, r] of held.ranked.entries()) expect(r.distance).toBeCloseTo(expected[order[k]][m].distance, 5);
    });
    // Person 2 has one sample: it stands for a stranger, its own person absent from its ranking.
    const alone = loo.heldOut.filter((h) => h.alone);
    expect(alone).toHaveLength(1);
    expect(alone[0].labelId).toBe(2);
    expect(alone[0].ranked.map((r) => r.labelId)).not.toContain(2);
  });

  it('ranks each LBPH sample against all the others with the chi-square distance', async () => {
    const rnd = random(3);
    const base = Array.from({ length: 3 }, () => Uint8Array.from({ length: 32 * 32 }, () => Math.floor(rnd() * 256)));
    const images = [];
    const labels: number[] = [];
    for (let p = 0; p < 3; p++) {
      for (let k = 0; k < 3; k++) {
        images.push({ width: 32, height: 32, data: base[p].map((v) => Math.min(255, Math.max(0, v + Math.floor(rnd() * 40) - 20))) });
        labels.push(p * 10);
      }
    }
    const model = trainLbph(images, labels, { gridX: 4, gridY: 4 });
    const loo = await leaveOneOutLbph(model);
    const expected = bruteForce(9, model.labels, (i, j) => chiSquareAlt(model.histograms[j], model.histograms[i]));
    const order = [0, 3, 6, 1, 4, 7, 2, 5, 8];
    expect(loo.heldOut.map((h) => h.labelId)).toEqual(order.map((i) => labels[i]));
    loo.heldOut.forEach((held, k) => {
      expect(held.ranked.map((r) => r.labelId)).toEqual(expected[order[k]].map((r) => r.labelId));
      for (const [m, r] of held.ranked.entries()) expect(r.distance).toBeCloseTo(expected[order[k]][m].distance, 6);
    });
  });

  it('evaluates a share spread over every person when the model is large', async () => {
    const { model } = clusteredEmbedding(4, [10, 10, 10, 10], 8, 0.2, 11);
    // 40 samples, at most 400 pairs: 10 queries, every person's first two or three.
    const loo = await leaveOneOutEmbedding(model, { maxPairs: 400 });
    expect(loo.samples).toBe(40);
    expect(loo.heldOut).toHaveLength(10);
    expect(new Set(loo.heldOut.map((h) => h.labelId))).toEqual(new Set([0, 1, 2, 3]));
  });
});

describe('previewEnrolled', () => {
  it('counts right, wrong, unsure and unknown before and after, and the changes by person', () => {
    const loo = {
      samples: 5,
      people: 3,
      heldOut: [
        // Alice, near herself: named right at 0.5 (high); unsure once the sure bound is under 0.5.
        {
          labelId: 1,
          ranked: [
            { labelId: 1, distance: 0.5 },
            { labelId: 2, distance: 1.2 },
          ],
          alone: false,
        },
        // Alice, nearer to Bob than to herself: named wrong.
        {
          labelId: 1,
          ranked: [
            { labelId: 2, distance: 0.7 },
            { labelId: 1, distance: 0.9 },
          ],
          alone: false,
        },
        // Bob, far: below the threshold (1 < 1.2 <= 1.5).
        {
          labelId: 2,
          ranked: [
            { labelId: 2, distance: 1.2 },
            { labelId: 1, distance: 1.4 },
          ],
          alone: false,
        },
        // Carol, alone: any name is wrong.
        { labelId: 3, ranked: [{ labelId: 1, distance: 0.95 }], alone: true },
        // Bob, nobody near.
        { labelId: 2, ranked: [{ labelId: 1, distance: 3 }], alone: false },
      ],
    };
    const names = new Map([
      [1, 'alice'],
      [2, 'bob'],
      [3, 'carol'],
    ]);
    const stricter: DecisionRule = { ...RULE, max: 0.6, sureMax: 0.4 };
    const out = previewEnrolled(loo, RULE, stricter, (id) => names.get(id)!);
    expect(out.before).toEqual({
      named_right: 1,
      named_wrong: 1,
      unsure: 1,
      unsure_wrong: 1,
      unknown: 2,
      unknown_reasons: { below_threshold: 1, no_match: 1 },
    });
    expect(out.after).toEqual({
      named_right: 0,
      named_wrong: 0,
      unsure: 1,
      unsure_wrong: 0,
      unknown: 4,
      unknown_reasons: { below_threshold: 3, no_match: 1 },
    });
    expect(out.changes).toEqual([
      { label: 'alice', before: 'named_right', after: 'unsure_right', count: 1 },
      { label: 'alice', before: 'named_wrong', after: 'unknown', count: 1 },
      { label: 'carol', before: 'unsure_wrong', after: 'unknown', count: 1 },
    ]);
  });

  it('applies the margin rule with the next person of the held-out ranking', () => {
    const loo = {
      samples: 2,
      people: 2,
      heldOut: [
        {
          labelId: 1,
          ranked: [
            { labelId: 1, distance: 0.5 },
            { labelId: 2, distance: 0.52 },
          ],
          alone: false,
        },
      ],
    };
    const out = previewEnrolled(loo, RULE, { ...RULE, ratioMax: 0.9 }, String);
    expect(out.before.named_right).toBe(1);
    expect(out.after).toMatchObject({ unknown: 1, unknown_reasons: { ambiguous: 1 } });
  });
});

describe('previewRecent', () => {
  it('decides stored faces again from their nearest distance, and says which cannot be', () => {
    const faces = [
      { label: 'alice', confidence: 70, distance: 0.7 },
      { label: 'alice', confidence: 90, distance: 0.2, certainty: 'high' as const },
      {
        label: 'unknown',
        confidence: 0,
        distance: 1.1,
        reason: 'below_threshold' as const,
        candidate: { label: 'bob', confidence: 55, distance: 1.1 },
      },
      { label: 'unknown', confidence: 0, reason: 'ambiguous' as const, candidate: { label: 'bob', confidence: 70, distance: 0.6 } },
      {
        label: 'unknown',
        confidence: 0,
        reason: 'given_to_another_face' as const,
        candidate: { label: 'bob', confidence: 70, distance: 0.6 },
      },
      { label: 'unknown', confidence: 0, reason: 'not_trained' as const },
      { label: 'unknown', confidence: 0, distance: 2, reason: 'no_match' as const },
      { label: 'carol', confidence: 80 },
    ];
    const out = previewRecent(faces, RULE, { ...RULE, max: 1.2, sureMax: 0.5 });
    expect(out).toMatchObject({ faces: 8, evaluated: 3, notEvaluated: { margin: 2, not_trained: 1, no_candidate: 1, no_distance: 1 } });
    expect(out.before).toEqual({ named: 2, unsure: 0, unknown: 1, unknown_reasons: { below_threshold: 1 } });
    expect(out.after).toEqual({ named: 1, unsure: 2, unknown: 0, unknown_reasons: {} });
    expect(out.changes).toEqual([
      { label: 'alice', before: 'named', after: 'unsure', count: 1 },
      { label: 'bob', before: 'unknown', after: 'unsure', count: 1 },
    ]);
  });

  it('reads the candidate of an unknown face and the distance of a named one', () => {
    expect(storedNearest({ label: 'x', distance: 3 })).toEqual({ label: 'x', distance: 3 });
    expect(
      storedNearest({ label: 'unknown', reason: 'copy_of_training_image', candidate: { label: 'y', confidence: 100, distance: 1 } }),
    ).toEqual({
      label: 'y',
      distance: 1,
    });
    expect(storedNearest({ label: 'unknown' })).toBe('no_candidate');
  });
});

describe('the preview with a background cohort (#34)', () => {
  it('ranks with each person’s cohort bound and the sample’s nearest cohort face, as recognition does', async () => {
    const v = (x: number, y: number) => {
      const d = new Float32Array(4);
      d[0] = x;
      d[1] = y;
      return d;
    };
    // Two people, two samples each; cohort faces near ada (a magnet) and far from bob.
    const model = trainEmbedding(
      [
        { label: 0, descriptor: v(0, 0) },
        { label: 0, descriptor: v(0.3, 0) },
        { label: 1, descriptor: v(5, 5) },
        { label: 1, descriptor: v(5.3, 5) },
      ],
      4,
    );
    const cohort = { descriptorModel: 'test', dim: 4, descriptors: new Float32Array([0, 0.5, 0, 0, 0, 0.55, 0, 0, 0, 0.6, 0, 0]) };
    const plain = await leaveOneOutEmbedding(model);
    const loo = await leaveOneOutEmbedding(model, { cohort });
    expect(plain.heldOut[0].ranked[0].bound).toBeUndefined();
    const ada = loo.heldOut.find((s) => s.labelId === 0)!;
    expect(ada.ranked.find((p) => p.labelId === 0)?.bound).toBeCloseTo(0.6, 5);
    expect(ada.cohortDistance).toBeGreaterThan(0);
    // A per-person limit of 0.4 x 0.6 = 0.24 leaves ada's other sample (0.3 away) unknown; without the cohort, named.
    const rule: DecisionRule = { min: 0, max: 1, sureMax: 1, nearMax: 2, ratioMax: null, verifyMax: 1, cohortRatio: 0.4 };
    const named = (l: typeof loo) => previewEnrolled(l, rule, rule, String).after.named_right;
    expect(named(loo)).toBeLessThan(
      named({ ...loo, heldOut: loo.heldOut.map((s) => ({ ...s, ranked: s.ranked.map(({ bound: _, ...p }) => p) })) }),
    );
  });
});

describe('previewRecent with per-person limits and low_quality (#34)', () => {
  const rule: DecisionRule = { min: 0, max: 0.6, sureMax: 0.5, nearMax: 0.8, ratioMax: null, verifyMax: 0.5, cohortRatio: 1 };
  it('applies each person’s bound, and keeps a low_quality face unknown whatever the thresholds', () => {
    const faces = [
      { label: 'ada', distance: 0.45, confidence: 70 },
      { label: 'unknown', reason: 'low_quality' as const, candidate: { label: 'ada', confidence: 90, distance: 0.1 } },
    ];
    // ada's bound 0.4: her limit is 0.4, so the stored 0.45 is not named again; without a bound (no cohort) the
    // sure bound 0.5 is the limit and she is.
    const withBound = previewRecent(faces, rule, rule, { boundOf: (label) => (label === 'ada' ? 0.4 : undefined) });
    expect(withBound.after).toMatchObject({ named: 0, unsure: 0, unknown: 2, unknown_reasons: { below_threshold: 1, low_quality: 1 } });
    const without = previewRecent(faces, rule, rule);
    expect(without.after).toMatchObject({ unknown: 1, unknown_reasons: { low_quality: 1 } });
  });
});
