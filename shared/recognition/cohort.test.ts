import { describe, expect, it } from 'vitest';
import { trainEmbedding } from '../embedding/matcher.js';
import {
  boundsFor,
  COHORT_RANK,
  type Cohort,
  cohortBound,
  encodeCohort,
  parseCohort,
  withCohortBounds,
  withCorrectionFaces,
} from './cohort.js';

/** A unit-free vector along the first axis at `d` (distances between such vectors are differences of d). */
const along = (d: number, dim = 4) => {
  const v = new Float32Array(dim);
  v[0] = d;
  return v;
};
const cohortOf = (ds: number[], dim = 4): Cohort => {
  const descriptors = new Float32Array(ds.length * dim);
  for (const [i, d] of ds.entries()) descriptors.set(along(d, dim), i * dim);
  return { descriptorModel: 'test', dim, descriptors };
};

describe('cohortBound', () => {
  it('is the third nearest cohort face to the nearest of the person’s samples', () => {
    const cohort = cohortOf([0.9, 0.6, 0.7, 0.65, 1.2, 1.1]);
    expect(COHORT_RANK).toBe(3);
    expect(cohortBound([along(0)], cohort)).toBeCloseTo(0.7, 6);
    // A second sample nearer to the cohort lowers the bound.
    expect(cohortBound([along(0), along(0.2)], cohort)).toBeCloseTo(0.5, 6);
  });

  it('skips cohort faces so near that they are the person themself', () => {
    // 0.05 and 0.1 are under half the median (0.7): the same person, not impostors.
    expect(cohortBound([along(0)], cohortOf([0.05, 0.1, 0.6, 0.65, 0.7, 0.9, 1.0]))).toBeCloseTo(0.7, 6);
  });

  it('is Infinity with too few faces or no samples', () => {
    expect(cohortBound([along(0)], cohortOf([0.5, 0.6]))).toBe(Infinity);
    expect(cohortBound([], cohortOf([0.5, 0.6, 0.7]))).toBe(Infinity);
  });
});

describe('bounds of a model', () => {
  it('are computed per person on first use and attached to a ranking', () => {
    const model = trainEmbedding(
      [
        { label: 0, descriptor: along(0) },
        { label: 1, descriptor: along(2) },
      ],
      4,
    );
    const cohort = cohortOf([0.6, 0.7, 0.8, 0.9]);
    const bounds = boundsFor(model, cohort);
    expect(boundsFor(model, cohort)).toBe(bounds);
    const ranked = withCohortBounds(
      [
        { labelId: 0, distance: 0.3 },
        { labelId: 1, distance: 1.5 },
      ],
      bounds,
    );
    expect(ranked[0].bound).toBeCloseTo(0.8, 6);
    expect(ranked[1].bound).toBeCloseTo(1.3, 6);
    // A cohort of another descriptor size gives no bound (never a bound on another scale).
    expect(boundsFor(model, cohortOf([0.6, 0.7, 0.8], 8)).of(0)).toBe(Infinity);
  });
});

describe('cohort files', () => {
  it('round-trip, and a torn file is refused', () => {
    const cohort = cohortOf([0.1, 0.2, 0.3], 128);
    const bytes = encodeCohort(cohort);
    expect(parseCohort(bytes, 'test', 128).descriptors).toEqual(cohort.descriptors);
    expect(() => parseCohort(bytes.subarray(0, bytes.length - 2), 'test', 128)).toThrow(/whole number/);
  });
});

describe('the cohort with the site’s corrections', () => {
  it('adds every correction of the cohort’s size, once per set of corrections', () => {
    const cohort = cohortOf([0.6, 0.7, 0.8]);
    const negatives = new Map([
      ['ada', [along(0.3)]],
      ['bob', [along(0.35), new Float32Array(8)]],
    ]);
    const grown = withCorrectionFaces(cohort, negatives);
    expect(grown.descriptors.length).toBe(5 * 4);
    expect(withCorrectionFaces(cohort, negatives)).toBe(grown);
    expect(withCorrectionFaces(cohort, new Map())).toBe(cohort);
    expect(cohortBound([along(0)], grown)).toBeCloseTo(0.6, 6);
  });
});
