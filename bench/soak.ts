/**
 * `npm run soak`: ten minutes (SOAK_SECONDS) of mixed traffic against the server as a process, then a report of
 * latency per route, memory over time, unexpected answers and the uploads on disk (bench/soak/harness.ts). Exits
 * 1 when an invariant broke. Run from the repository root.
 *
 * Settings: SOAK_SECONDS (600), SOAK_RATE (1: every route's rate multiplied), SOAK_WARMUP_SECONDS (the smaller
 * of 120 and a fifth of the run), SOAK_SAMPLE_MS (5000), SOAK_MAX_RSS_MB (2048), SOAK_MAX_GROWTH_MB (64).
 */
import { runSoak } from './soak/harness.js';

function numberSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a positive number, not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return value;
}

const seconds = numberSetting('SOAK_SECONDS', 600);
const report = await runSoak({
  seconds,
  rate: numberSetting('SOAK_RATE', 1),
  warmupSeconds: numberSetting('SOAK_WARMUP_SECONDS', Math.min(120, seconds / 5)),
  sampleMs: numberSetting('SOAK_SAMPLE_MS', 5000),
  maxRssMb: numberSetting('SOAK_MAX_RSS_MB', 2048),
  maxGrowthMb: numberSetting('SOAK_MAX_GROWTH_MB', 64),
  repoRoot: process.cwd(),
  progress: (line) => console.log(line),
});
console.log(`\n${report.text}`);
process.exit(report.ok ? 0 : 1);
