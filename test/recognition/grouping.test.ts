/**
 * Grouping regression (#36 section 1): on the grouping benchmark's faces (bench/grouping-features.ts: the open-set
 * benchmark's built-in set, clean and in 3 degraded camera views each; faceapi-128 descriptors made by the product's
 * nets and committed in test/fixtures/grouping), the product's grouping (server/review/grouping.ts at the shipped
 * shares of faceapi-128's recognition limit) keeps pairwise precision and recall at what bench/RESULTS.md reports
 * less a margin, and far above the grouping before #36 (greedy against a running mean) in precision. No model runs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupStream, halves, type PairScore, pairScore, pooled, streamOf } from '../../bench/grouping-eval.js';
import { decodeFixture } from '../../bench/grouping-features.js';
import { type GroupingOptions, groupingOptions } from '../../server/review/grouping.js';
import { defaultRule } from '../../shared/recognition/rules.js';

const faces = decodeFixture(readFileSync(path.join(import.meta.dirname, '../fixtures/grouping/faceapi-128.json'), 'utf8'));
const MODEL = 'faceapi-128';
const limit = defaultRule('embedding', MODEL).max;

/** Measured (bench/RESULTS.md, every face at the shipped shares) and the floors this test holds them to. */
const FLOORS = {
  clean: { precision: 0.95, recall: 0.9 }, // measured 1.000 / 0.989
  camera: { precision: 0.95, recall: 0.8 }, // 0.978 / 0.877
  all: { precision: 0.95, recall: 0.85 }, // 0.982 / 0.926
} as const;

describe('grouping real descriptors (faceapi-128)', () => {
  for (const stream of ['clean', 'camera', 'all'] as const) {
    it(`${stream}: pairwise precision and recall hold, in every order of arrival, far above the running mean's precision`, () => {
      for (const seed of [1, 2, 3]) {
        const shown = streamOf(faces, stream, MODEL, seed);
        const people = shown.map((f) => f.person);
        const now = pairScore(people, groupStream(shown, MODEL, 'linkage', groupingOptions(limit)));
        const before = pairScore(people, groupStream(shown, MODEL, 'mean', { max: limit, link: limit }));
        expect(now.precision, `seed ${seed}`).toBeGreaterThanOrEqual(FLOORS[stream].precision);
        expect(now.recall, `seed ${seed}`).toBeGreaterThanOrEqual(FLOORS[stream].recall);
        expect(now.precision - before.precision, `seed ${seed}`).toBeGreaterThan(0.05);
      }
    });
  }

  it("holds the issue's target out of sample: precision >= 0.95 with recall >= 0.7 on people the limits were not fitted on", () => {
    // As bench/grouping.bench.ts measures it: the people split in halves (seeded), the single-linkage share of the
    // shipped options fitted on one half (the most recall with precision >= 0.97), measured on the other, both ways
    // pooled; the median over the splits. The bounds (the average at the limit, the cap) stay the product's: the
    // halves without the man seen 19 times cannot tell them apart, and fitting them there took the tightest on a tie,
    // which split his camera views (held-out recall 0.50 camera, 0.69 all). With the average at 0.95 this fails.
    const shipped = groupingOptions(limit);
    const candidates: GroupingOptions[] = [0.7, 0.75, 0.8, 0.85, 0.9, 0.95].map((near) => ({ ...shipped, near: limit * near }));
    const score = (people: Set<string>, stream: 'camera' | 'all', seed: number, options: GroupingOptions) => {
      const shown = streamOf(
        faces.filter((f) => people.has(f.person)),
        stream,
        MODEL,
        seed,
      );
      return pairScore(
        shown.map((f) => f.person),
        groupStream(shown, MODEL, 'linkage', options),
      );
    };
    const held: Record<'camera' | 'all', PairScore[]> = { camera: [], all: [] };
    for (let seed = 1; seed <= 5; seed++) {
      const [a, b] = halves(faces, 1000 + seed);
      const per: Record<'camera' | 'all', PairScore[]> = { camera: [], all: [] };
      for (const [fitOn, testOn] of [
        [a, b],
        [b, a],
      ]) {
        let best: { options: GroupingOptions; s: PairScore } | null = null;
        for (const options of candidates) {
          const s = score(fitOn, 'all', seed, options);
          if (s.precision >= 0.97 && (!best || s.recall > best.s.recall)) best = { options, s };
        }
        const chosen = best?.options ?? candidates[0];
        for (const stream of ['camera', 'all'] as const) per[stream].push(score(testOn, stream, seed, chosen));
      }
      for (const stream of ['camera', 'all'] as const) held[stream].push(pooled(per[stream]));
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1];
    for (const stream of ['camera', 'all'] as const) {
      expect(median(held[stream].map((s) => s.precision)), `${stream} precision`).toBeGreaterThanOrEqual(0.95);
      expect(median(held[stream].map((s) => s.recall)), `${stream} recall`).toBeGreaterThanOrEqual(0.7);
    }
  });

  it('has the faces it says: 102 faces of 76 people, 4 views each, every view described', () => {
    expect(faces).toHaveLength(408);
    expect(new Set(faces.map((f) => f.person)).size).toBe(76);
    expect(faces.every((f) => f.descriptors[MODEL]?.length === 128)).toBe(true);
  });
});
