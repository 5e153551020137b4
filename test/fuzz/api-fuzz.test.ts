/**
 * Property-based fuzzing of every endpoint in the OpenAPI document (issue #16, item 6), against the real service
 * with every engine on (its LLM and PPE detector are healthy test doubles): random and mutated JSON, multipart,
 * headers, query strings, path parameters, labels and images (real photos truncated, flipped, resized in their
 * headers), then all routes interleaved, then raw HTTP over a socket. The invariants are in invariants.ts: no 5xx
 * at all here, answers as documented, nothing written outside DATA_DIR, stored files untouched by refused
 * requests, acknowledged uploads on disk, health after every batch.
 *
 * The seed is printed; `FUZZ_SEED=<seed> npx vitest run test/fuzz` replays a run, FUZZ_SCALE scales its size.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes, rootRoutes } from '../../shared/api/routes.js';
import type { FuzzRoute } from './routes.js';
import type { FuzzRequest } from './request.js';
import { fuzz, isolatedRoot, removeRoot, replayHint } from './runner.js';
import { FOREIGN_ORIGIN_RUNS, MIXED_RUNS, RAW_RUNS, RUNS, runs, SCALE, SEED } from './plan.js';

// Before anything below loads sharp or starts a worker: TMPDIR is then a folder this test watches.
const root = isolatedRoot();
const { startFuzzTarget } = await import('./target.js');
const { CaseChecker } = await import('./invariants.js');
const { fromAnotherPage, GENERATORS, undocumented } = await import('./routes.js');
const { imageSeeds } = await import('./images.js');
const { rawCase, sendRaw } = await import('./raw-http.js');

type Target = Awaited<ReturnType<typeof startFuzzTarget>>;
let target: Target;
let checker: InstanceType<typeof CaseChecker>;
let arbitraries: Record<FuzzRoute | 'undocumented', fc.Arbitrary<FuzzRequest>>;
let rawCases = 0;
const started = Date.now();

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (FUZZ_SEED=${SEED} npx vitest run test/fuzz replays it), scale ${SCALE}`);
  target = await startFuzzTarget({ root, engines: 'on' });
  checker = new CaseChecker(target, {});
  const ctx = { seeds: await imageSeeds() };
  arbitraries = {
    ...Object.fromEntries(Object.entries(GENERATORS).map(([name, g]) => [name, g(ctx)])),
    undocumented: undocumented(ctx),
  } as typeof arbitraries;
}, 180_000);

afterAll(async () => {
  if (checker) {
    const lines = [...checker.statuses].map(
      ([route, byStatus]) =>
        `  ${route}: ${[...byStatus]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}x${n}`)
          .join(' ')}`,
    );
    console.log(
      `fuzz: ${checker.cases + rawCases} cases (${checker.cases} in-process, ${rawCases} raw HTTP) in ${Math.round((Date.now() - started) / 1000)} s, seed ${SEED}\n${lines.join('\n')}`,
    );
  }
  await target?.close();
  removeRoot(root);
}, 60_000);

describe('fuzz: every documented route, engines on', () => {
  it('every operation of the served OpenAPI document has a generator', async () => {
    const doc = JSON.parse(
      (await target.send({ route: 'openapi', method: 'GET', path: '/api/openapi.json', headers: [], note: 'coverage' })).text,
    );
    const operations: string[] = [];
    for (const item of Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const op of Object.values(item)) operations.push(op.operationId);
    }
    expect(operations.sort()).toEqual([...Object.keys(apiRoutes), ...Object.keys(rootRoutes)].sort());
    expect(operations.filter((name) => !(name in GENERATORS))).toEqual([]);
  });

  const names = Object.keys(RUNS) as (FuzzRoute | 'undocumented')[];
  names.forEach((name, i) => {
    it(`${name}: ${runs(RUNS[name])} cases`, async () => {
      await fuzz(checker, `${name}: ${runs(RUNS[name])} cases`, arbitraries[name], runs(RUNS[name]), i);
    }, 600_000);
  });

  it(`another web page: ${runs(FOREIGN_ORIGIN_RUNS)} documented requests with a foreign Origin are refused`, async () => {
    const documented = fc.oneof(...(Object.keys(GENERATORS) as FuzzRoute[]).map((name) => arbitraries[name]));
    const test = `another web page: ${runs(FOREIGN_ORIGIN_RUNS)} documented requests with a foreign Origin are refused`;
    await fuzz(checker, test, fromAnotherPage(documented), runs(FOREIGN_ORIGIN_RUNS), names.length + 2);
  }, 600_000);

  it(`mixed: ${runs(MIXED_RUNS)} cases over every route interleaved`, async () => {
    // Weighted as the per-route runs, so uploads, deletes and trainings meet the readers in one sequence.
    const mixed = fc.oneof(...names.map((name) => ({ weight: RUNS[name], arbitrary: arbitraries[name] })));
    await fuzz(checker, `mixed: ${runs(MIXED_RUNS)} cases over every route interleaved`, mixed, runs(MIXED_RUNS), names.length);
  }, 600_000);

  it(`raw HTTP: ${runs(RAW_RUNS)} malformed requests over a socket`, async () => {
    const port = Number(new URL(target.url).port);
    const test = `raw HTTP: ${runs(RAW_RUNS)} malformed requests over a socket`;
    await fc
      .assert(
        fc.asyncProperty(rawCase(port), async (c) => {
          rawCases++;
          const answer = await sendRaw(port, c);
          const problems: string[] = [];
          if (answer.timedOut) problems.push('no answer within 10 s');
          if (answer.status !== null && answer.status >= 500) problems.push(`a ${answer.status}: ${answer.text.slice(0, 300)}`);
          if (answer.text.includes(target.canary) || answer.text.includes('"llama:install"'))
            problems.push('the answer leaks a file outside the app');
          // What the app itself answered (the client may have got Node's own 400 instead), and as documented.
          await target.settled();
          problems.push(...target.httpServerErrors.splice(0).map((p) => `the app answered ${p}`));
          problems.push(...target.httpProblems.splice(0).map((p) => p.slice(0, 300)));
          if (problems.length) throw new Error(`${c.note}\n${problems.join('\n')}`);
        }),
        { seed: SEED + names.length + 1, numRuns: runs(RAW_RUNS), includeErrorInReport: true },
      )
      .catch((err: Error) => {
        throw new Error(`${test} (${replayHint(test)})\n${err.message}`);
      });
    expect(await checker.batchProblems()).toEqual([]);
  }, 600_000);

  it('ran at least 10,000 cases (at FUZZ_SCALE 1)', () => {
    if (SCALE >= 1) expect(checker.cases + rawCases).toBeGreaterThanOrEqual(10_000);
  });
});
