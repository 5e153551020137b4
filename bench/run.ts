/**
 * `npm run bench`: every benchmark, each printing Lookout's figure beside a reference measured in the same
 * run on this machine, and the ratio. Run from the repository root (test images come from test/fixtures/images).
 * Results are also written to bench/results.json for the record.
 */
// First: before anything can load onnxruntime-node.
import '../server/telemetry-off.js';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { benchAppLoad } from './app-load.bench.js';
import { benchBrowserEngines } from './browser-engines.bench.js';
import { benchCascade } from './cascade.bench.js';
import { benchChat } from './chat.bench.js';
import { benchEmbedding } from './embedding.bench.js';
import { benchEvents } from './events.bench.js';
import { benchFootprint } from './footprint.bench.js';
import { benchIdpToken } from './idp-token.bench.js';
import { benchLbph } from './lbph.bench.js';
import { benchLbphRobustness } from './lbph-robustness.bench.js';
import { benchObjects } from './objects.bench.js';
import { benchOpenSet } from './open-set.bench.js';
import { benchPpe } from './ppe.bench.js';
import { benchRecognize } from './recognize.bench.js';
import { benchRankingScale } from './ranking-scale.bench.js';
import { benchReplicas } from './replicas.bench.js';
import { benchSecondFactor } from './second-factor.bench.js';
import { benchSightings } from './sightings.bench.js';
import { benchStorage } from './storage.bench.js';
import { benchRemote } from './remote.bench.js';
import type { BenchRow } from './types.js';

const repoRoot = process.cwd();
const testdata = path.resolve(repoRoot, 'test/fixtures/images');

function format(row: BenchRow): string {
  const n = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
  const parts = [`${row.name}: Lookout ${n(row.lookout)} ${row.unit}`];
  if (row.reference !== undefined) parts.push(`${row.referenceName ?? 'reference'} ${n(row.reference)} ${row.unit}`);
  if (row.ratio !== undefined) parts.push(`ratio ${row.ratio.toFixed(2)}`);
  if (row.goal) parts.push(`goal: ${row.goal}`);
  return parts.join(' | ');
}

/** The 640x480 photo with faces used by the cascade and API benchmarks. */
async function photo640(): Promise<Buffer> {
  return sharp(path.join(testdata, 'faces/sample1.jpg')).resize(640, 480, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
}

const rows: BenchRow[] = [];
const suites: [string, () => Promise<BenchRow[]>][] = [
  ['cascade', () => benchCascade()],
  ['lbph', () => benchLbph()],
  ['lbph-robustness', () => benchLbphRobustness()],
  ['recognize', async () => benchRecognize(repoRoot, testdata, await photo640())],
  ['sightings', async () => benchSightings(repoRoot, testdata, await photo640())],
  ['replicas', async () => benchReplicas(repoRoot, testdata, await photo640())],
  ['storage', () => benchStorage()],
  ['embedding', () => benchEmbedding()],
  ['open-set', () => benchOpenSet(repoRoot)],
  ['ranking', () => benchRankingScale(repoRoot)],
  ['second-factor', () => benchSecondFactor(repoRoot)],
  ['idp-token', () => benchIdpToken(repoRoot)],
  ['remote', () => benchRemote()],
  ['objects', () => benchObjects()],
  ['chat', async () => benchChat(repoRoot, await photo640())],
  ['events', () => benchEvents(repoRoot)],
  ['ppe', () => benchPpe(repoRoot)],
  ['footprint', () => benchFootprint(repoRoot, testdata)],
  ['app', () => benchAppLoad(repoRoot)],
  ['browser', () => benchBrowserEngines(repoRoot, testdata)],
  ['kiosk', async () => (await import('./kiosk-footprint.bench.js')).benchKioskFootprint(repoRoot)],
  ['kiosk-soak', async () => (await import('./kiosk-footprint.bench.js')).benchKioskSoak(repoRoot)],
  ['scale', async () => (await import('./scale.bench.js')).benchScale(repoRoot)],
  ['precision', async () => (await import('./descriptor-precision.bench.js')).benchDescriptorPrecision(repoRoot)],
  ['grouping', async () => (await import('./grouping.bench.js')).benchGrouping(repoRoot)],
];
const only = process.argv.slice(2);
// Ten minutes of a page left open: run when named (`npm run bench kiosk-soak`), not in every full run.
const namedOnly = new Set(['kiosk-soak']);
console.log(`Lookout benchmarks on ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`);
for (const [name, run] of suites) {
  if (only.length ? !only.includes(name) : namedOnly.has(name)) continue;
  const found = await run();
  for (const row of found) console.log(format(row));
  rows.push(...found);
}
await fs.writeFile(path.join(repoRoot, 'bench/results.json'), `${JSON.stringify({ at: new Date().toISOString(), rows }, null, 2)}\n`);
