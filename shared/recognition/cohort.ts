/**
 * Per-person calibration against impostors (#34 section 2). A background cohort is a set of faces of people nobody
 * enrolled; for each enrolled person, their distance to the cohort says how crowded their part of face space is.
 * A "magnet" (a template that sits near many faces) has cohort faces close by, so a stranger lands near them
 * easily: such a person gets a stricter limit.
 *
 *   bound(p)  = the COHORT_RANK-th smallest distance from p's samples (their nearest sample) to the cohort's faces
 *   limit(p)  = min(rule.max, rule.cohortRatio * bound(p))                             (decision.ts)
 *
 * i.e. a face is named p only when it is clearly nearer to p than the faces of strangers nearest to p are. This is
 * the margin rule (nearest against next enrolled person) made independent of the gallery: with 5 people enrolled
 * the next person is far away and the margin rule holds little back, while the cohort is always there. Cohort
 * faces nearer to p than COHORT_SELF_SHARE of their median distance are taken for p themself (a person who is also
 * in the cohort) and skipped.
 *
 * The cohort grows with the site: every "not this person" correction (corrections.ts) is a face of someone who is
 * not the person it was taken for, so the corrections join the shipped faces (withCorrectionFaces below). Unknown
 * sightings do not: an unknown sighting may be an enrolled person seen poorly (a near miss), and counting it would
 * tighten that very person's limit, so the next sighting of them would be unknown too.
 *
 * One implementation for the server and the browser. The bound of a person is computed the first time a face
 * ranks them (samples x cohort distances: microseconds at a cohort of a hundred) and kept per model, so a gallery
 * of 10,000 people costs nothing at load and a training invalidates by replacing the model.
 */
import { type EmbeddingModel, euclideanDistance } from '../embedding/matcher.js';
import type { PersonDistance } from './ranking.js';

/** Which smallest cohort distance is the bound (3: the third nearest stranger, less noisy than the nearest). */
export const COHORT_RANK = 3;

/** Cohort faces nearer than this share of the median cohort distance are skipped as the person themself (see above). */
export const COHORT_SELF_SHARE = 0.5;

/** Cohort faces of one descriptor model, row after row. */
export interface Cohort {
  /** The descriptor model the faces were described with (a bound needs the same distance scale). */
  descriptorModel: string;
  dim: number;
  descriptors: Float32Array;
}

export function cohortSize(cohort: Cohort): number {
  return cohort.dim > 0 ? Math.floor(cohort.descriptors.length / cohort.dim) : 0;
}

/**
 * The bound of a set of samples: their nearest-sample distance to each cohort face, sorted, skipping faces nearer
 * than COHORT_SELF_SHARE of the median (the person themself), then the COHORT_RANK-th. Infinity with too few faces.
 */
export function cohortBound(samples: readonly Float32Array[], cohort: Cohort, rank: number = COHORT_RANK): number {
  const n = cohortSize(cohort);
  if (!samples.length || n < rank) return Infinity;
  const nearest = new Float64Array(n);
  for (let c = 0; c < n; c++) {
    const face = cohort.descriptors.subarray(c * cohort.dim, (c + 1) * cohort.dim);
    let best = Infinity;
    for (const s of samples) best = Math.min(best, euclideanDistance(s, face));
    nearest[c] = best;
  }
  nearest.sort();
  const median = nearest[Math.floor(n / 2)];
  let seen = 0;
  for (let c = 0; c < n; c++) {
    if (nearest[c] < COHORT_SELF_SHARE * median) continue;
    if (++seen === rank) return nearest[c];
  }
  return Infinity;
}

/**
 * The cohort with the site's corrections added (every label's "not this person" faces of the cohort's size); the
 * same object when there are none, and one object per (cohort, corrections) pair, so the bounds cached for it
 * (boundsFor) are computed again only when the corrections change.
 */
export function withCorrectionFaces(cohort: Cohort, negatives: ReadonlyMap<string, readonly Float32Array[]>): Cohort {
  // Asked on every recognition: the corrections are gathered once per (cohort, corrections) pair, not each time.
  let byNegatives = grown.get(cohort);
  if (!byNegatives) {
    byNegatives = new WeakMap();
    grown.set(cohort, byNegatives);
  }
  const known = byNegatives.get(negatives);
  if (known) return known;
  const faces: Float32Array[] = [];
  for (const list of negatives.values()) for (const f of list) if (f.length === cohort.dim) faces.push(f);
  let out = cohort;
  if (faces.length) {
    const descriptors = new Float32Array(cohort.descriptors.length + faces.length * cohort.dim);
    descriptors.set(cohort.descriptors);
    for (const [i, f] of faces.entries()) descriptors.set(f, cohort.descriptors.length + i * cohort.dim);
    out = { descriptorModel: cohort.descriptorModel, dim: cohort.dim, descriptors };
  }
  byNegatives.set(negatives, out);
  return out;
}

const grown = new WeakMap<Cohort, WeakMap<object, Cohort>>();

/** A face's distance to the nearest face of the cohort (Infinity for an empty one). */
export function nearestCohortDistance(descriptor: ArrayLike<number>, cohort: Cohort): number {
  let best = Infinity;
  const n = cohortSize(cohort);
  for (let c = 0; c < n; c++)
    best = Math.min(best, euclideanDistance(descriptor, cohort.descriptors.subarray(c * cohort.dim, (c + 1) * cohort.dim)));
  return best;
}

/**
 * The bounds of one model's people against one cohort, computed when first asked and kept: a model is immutable
 * (a training installs a new one), so the cache lives as long as the model. Each person's samples are found through
 * an index of the labels made once (at 10,000 people a scan of every label per person would cost more than the bound).
 */
export class CohortBounds {
  private readonly bounds = new Map<number, number>();
  private samples: Map<number, number[]> | null = null;

  constructor(
    private readonly model: EmbeddingModel,
    private readonly cohort: Cohort | null,
  ) {}

  /** The person's bound; Infinity without a usable cohort (no per-person limit then). */
  of(labelId: number): number {
    const cohort = this.cohort;
    if (!cohort || cohort.dim !== this.model.dim) return Infinity;
    let b = this.bounds.get(labelId);
    if (b === undefined) {
      b = cohortBound(this.samplesOf(labelId), cohort);
      this.bounds.set(labelId, b);
    }
    return b;
  }

  private samplesOf(labelId: number): Float32Array[] {
    const { labels, descriptors, dim } = this.model;
    if (!this.samples) {
      this.samples = new Map();
      for (let i = 0; i < labels.length; i++) {
        const list = this.samples.get(labels[i]);
        if (list) list.push(i);
        else this.samples.set(labels[i], [i]);
      }
    }
    return (this.samples.get(labelId) ?? []).map((i) => descriptors.subarray(i * dim, (i + 1) * dim));
  }
}

const boundsByModel = new WeakMap<EmbeddingModel, WeakMap<Cohort, CohortBounds>>();

/** The (cached) bounds of a model's people against a cohort. */
export function boundsFor(model: EmbeddingModel, cohort: Cohort): CohortBounds {
  let perCohort = boundsByModel.get(model);
  if (!perCohort) {
    perCohort = new WeakMap();
    boundsByModel.set(model, perCohort);
  }
  let bounds = perCohort.get(cohort);
  if (!bounds) {
    bounds = new CohortBounds(model, cohort);
    perCohort.set(cohort, bounds);
  }
  return bounds;
}

/** The ranking with each person's cohort bound attached (the rule's per-person limit reads it). */
export function withCohortBounds(ranked: PersonDistance[], bounds: CohortBounds | null): PersonDistance[] {
  if (!bounds) return ranked;
  return ranked.map((p) => {
    const bound = bounds.of(p.labelId);
    return Number.isFinite(bound) ? { ...p, bound } : p;
  });
}

/** Reads a cohort file: little-endian float32 rows of `dim` values (public/models/cohort/<model>.f32). */
export function parseCohort(bytes: Uint8Array, descriptorModel: string, dim: number): Cohort {
  if (bytes.byteLength % (4 * dim) !== 0)
    throw new RangeError(`cohort file for ${descriptorModel}: ${bytes.byteLength} bytes is not a whole number of ${dim}-d rows`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const descriptors = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < descriptors.length; i++) descriptors[i] = view.getFloat32(i * 4, true);
  return { descriptorModel, dim, descriptors };
}

/** A cohort as file bytes (parseCohort's format). */
export function encodeCohort(cohort: Cohort): Uint8Array {
  const out = new Uint8Array(cohort.descriptors.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < cohort.descriptors.length; i++) view.setFloat32(i * 4, cohort.descriptors[i], true);
  return out;
}
