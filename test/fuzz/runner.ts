/**
 * Running generators against the service with fast-check: one property per batch of cases, with the seed in
 * every failure report, and the per-batch invariants checked every BATCH cases and at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { CaseChecker } from './invariants.js';
import { BATCH, SEED } from './plan.js';
import type { FuzzRequest } from './request.js';

/**
 * A fresh root folder for one fuzz test file, and this process's TMPDIR inside it, so any temporary file the
 * service leaves is seen. Call before loading anything that reads TMPDIR once (sharp, tsx in the workers).
 */
export function isolatedRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-fuzz-'));
  fs.mkdirSync(path.join(root, 'tmp'));
  process.env.TMPDIR = path.join(root, 'tmp');
  // tsx (which runs the workers' TypeScript in tests) would keep a transform cache in TMPDIR.
  process.env.TSX_DISABLE_CACHE = '1';
  return root;
}

/** Removes a root made by isolatedRoot (after the service in it closed). */
export function removeRoot(root: string): void {
  fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}

export function replayHint(test: string): string {
  return `replay: FUZZ_SEED=${SEED} npx vitest run test/fuzz -t ${JSON.stringify(test)}`;
}

/** Runs `numRuns` cases of `arb`; throws with every broken invariant, the shrunk case and the seed. */
export async function fuzz(
  checker: CaseChecker,
  test: string,
  arb: fc.Arbitrary<FuzzRequest>,
  numRuns: number,
  seedOffset: number,
): Promise<void> {
  let sinceBatch = 0;
  const seed = SEED + seedOffset;
  try {
    await fc.assert(
      fc.asyncProperty(arb, async (req) => {
        const problems = await checker.run(req);
        if (++sinceBatch >= BATCH) {
          sinceBatch = 0;
          const batch = await checker.batchProblems();
          if (batch.length) problems.push(`after the last ${BATCH} cases (this one the last):`, ...batch.map((p) => `  ! ${p}`));
        }
        if (problems.length) throw new Error(problems.join('\n'));
      }),
      { seed, numRuns, includeErrorInReport: true },
    );
  } catch (err) {
    throw new Error(`${test} (seed ${seed}; ${replayHint(test)})\n${err instanceof Error ? err.message : String(err)}`);
  }
  const batch = await checker.batchProblems();
  if (batch.length) throw new Error(`${test}: after the batch:\n${batch.join('\n')}\n${replayHint(test)}`);
}
