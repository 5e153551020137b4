/**
 * The same fuzzing (issue #16, item 6) against the service with every optional engine switched off (no object
 * detector, no chat, no PPE checks, no embedding recognizer, one vision worker): the routes of a missing engine
 * must still answer as documented. The only 5xx allowed anywhere in the fuzz suite are these documented 503s:
 * `detector_unavailable` from POST /api/objects/detect, `chat_disabled` from POST /api/chat and `ppe_disabled`
 * from POST /api/ppe/detect, each for its engine being off. Everything else is as in api-fuzz.test.ts.
 */
import type fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { FuzzRoute } from './routes.js';
import { OFF_RUNS, RUNS, runs, SEED } from './plan.js';
import type { FuzzRequest } from './request.js';
import { fuzz, isolatedRoot, removeRoot } from './runner.js';

const root = isolatedRoot();
const { startFuzzTarget } = await import('./target.js');
const { CaseChecker } = await import('./invariants.js');
const { GENERATORS, undocumented } = await import('./routes.js');
const { imageSeeds } = await import('./images.js');

let target: Awaited<ReturnType<typeof startFuzzTarget>>;
let checker: InstanceType<typeof CaseChecker>;
let arbitraries: Record<FuzzRoute | 'undocumented', fc.Arbitrary<FuzzRequest>>;

beforeAll(async () => {
  console.log(`fuzz (engines off) seed ${SEED} (FUZZ_SEED=${SEED} npx vitest run test/fuzz replays it)`);
  target = await startFuzzTarget({ root, engines: 'off' });
  checker = new CaseChecker(target, { detectObjects: ['detector_unavailable'], chat: ['chat_disabled'], ppeDetect: ['ppe_disabled'] });
  const ctx = { seeds: await imageSeeds() };
  arbitraries = {
    ...Object.fromEntries(Object.entries(GENERATORS).map(([name, g]) => [name, g(ctx)])),
    undocumented: undocumented(ctx),
  } as typeof arbitraries;
}, 180_000);

afterAll(async () => {
  if (checker) console.log(`fuzz (engines off): ${checker.cases} cases, seed ${SEED}`);
  await target?.close();
  removeRoot(root);
}, 60_000);

describe('fuzz: every documented route, optional engines off', () => {
  const names = Object.keys(RUNS) as (FuzzRoute | 'undocumented')[];
  names.forEach((name, i) => {
    const n = runs(OFF_RUNS);
    it(`${name} (engines off): ${n} cases`, async () => {
      await fuzz(checker, `${name} (engines off): ${n} cases`, arbitraries[name], n, 1000 + i);
    }, 600_000);
  });
});
