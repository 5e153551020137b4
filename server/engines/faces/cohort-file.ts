/**
 * The background cohort file of a descriptor model (shared/recognition/cohort.ts): `<dir>/<descriptor>.f32`, read by
 * the embedding worker (recognition) and the main thread (1:1 verification). A missing or damaged file is not
 * fatal: without a cohort the rule holds every person to its sure bound (decision.ts personLimit), stricter.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Cohort, cohortSize, parseCohort } from '../../../shared/recognition/cohort.js';

/** Descriptor length per descriptor model. */
const DIMS: Record<string, number> = { 'faceapi-128': 128, 'faceres-1024': 1024 };

export function readCohortFile(dir: string, descriptor: string): { cohort: Cohort | null; problem?: string } {
  const file = path.join(dir, `${descriptor}.f32`);
  const dim = DIMS[descriptor];
  if (!dim) return { cohort: null, problem: `no cohort is known for descriptor model ${descriptor}` };
  try {
    const cohort = parseCohort(readFileSync(file), descriptor, dim);
    return cohortSize(cohort) > 0 ? { cohort } : { cohort: null, problem: `${file} holds no faces` };
  } catch (err) {
    return { cohort: null, problem: `${file}: ${(err as Error).message}` };
  }
}
