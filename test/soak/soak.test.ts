/**
 * The soak harness (`npm run soak`, bench/soak/harness.ts) run for 15 s at a low rate, so it keeps working between
 * the 10-minute runs recorded in bench/RESULTS.md: the server as a process (the dist/ build), every kind of
 * request answered as expected, acknowledged uploads on disk, deleted labels gone, memory read over time.
 */
import { describe, expect, it } from 'vitest';
import { runSoak } from '../../bench/soak/harness.js';
import { REPO_ROOT } from '../helpers/test-server.js';

describe('soak harness', () => {
  it('15 s of mixed traffic at a low rate: every invariant holds and every route was driven', async () => {
    const report = await runSoak({
      seconds: 15,
      rate: 0.5,
      warmupSeconds: 5,
      sampleMs: 1000,
      maxRssMb: 2048,
      // 15 s is too short to judge growth; the 10-minute run does that.
      maxGrowthMb: 4096,
      repoRoot: REPO_ROOT,
    });
    expect(report.failures, report.text).toEqual([]);
    expect(report.ok).toBe(true);
    for (const route of report.routes) expect(route.count, `${route.name} was never sent`).toBeGreaterThan(0);
    expect(report.routes.find((r) => r.name === 'DELETE /api/images/{label}')!.statuses['200']).toBeGreaterThan(0);
    expect(report.uploads.checkedOnDisk).toBeGreaterThan(0);
    expect(report.rss.samples.length).toBeGreaterThanOrEqual(10);
    expect(report.text).toMatch(/p99 ms/);
  }, 240_000);
});
