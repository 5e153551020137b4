/**
 * The soak run (issue #16, item 7): the real server as a process (dist/server/main.js, as `npm start` runs it) on
 * 127.0.0.1 with a fresh DATA_DIR and the OpenAI test double as its LLM, driven at a fixed rate per kind of
 * request for a while; meanwhile its resident memory is read from /proc every few seconds. At the end: every
 * acknowledged upload must be on disk (and nothing of a deleted label), no answer may have had a status its
 * request does not expect, the server must still answer and must have logged no ERROR, and its memory must
 * stay bounded and stop growing after the warm-up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { startOpenAIDouble } from '../../test/helpers/openai-double.js';
import { percentile, readRssMb, type RssSample, slopePerMinute, table } from './stats.js';
import { SOAK_ROUTES, type SoakImages, type SoakRoute, SoakState } from './traffic.js';

export interface SoakOptions {
  /** How long the traffic runs. */
  seconds: number;
  /** Multiplies every route's rate. */
  rate: number;
  /** Memory before this is warm-up: growth is judged after it. */
  warmupSeconds: number;
  /** How often the server's RSS is read. */
  sampleMs: number;
  /** Largest RSS allowed at any time, MiB. */
  maxRssMb: number;
  /** Largest RSS growth allowed after the warm-up (the fitted slope over the rest of the run), MiB. */
  maxGrowthMb: number;
  /** The repository root (dist/ and test/fixtures/images/ are read from it). */
  repoRoot: string;
  /** Progress lines (every sample); silent when absent. */
  progress?: (line: string) => void;
}

export interface RouteStats {
  name: string;
  count: number;
  /** Ticks skipped because 8 requests of this route were still waiting (the server fell behind the rate). */
  dropped: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  unexpected: number;
}

export interface SoakReport {
  ok: boolean;
  failures: string[];
  routes: RouteStats[];
  rss: { startMb: number; warmMb: number; maxMb: number; endMb: number; slopeMbPerMin: number; growthMb: number; samples: RssSample[] };
  uploads: { acknowledged: number; deletedLabels: number; checkedOnDisk: number };
  seconds: number;
  /** The whole report as printed. */
  text: string;
}

const MAX_IN_FLIGHT = 8;
const REQUEST_TIMEOUT_MS = 60_000;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, ms: number, child: ChildProcess, output: () => string) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the server exited (${child.exitCode}) while waiting for ${what}: ${output().slice(-2000)}`);
    try {
      if (await check()) return;
    } catch {
      // not answering yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms: ${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Camera-sized frames (640x480 JPEG) made from the test photos. */
async function soakImages(repoRoot: string): Promise<SoakImages> {
  const dir = path.join(repoRoot, 'test/fixtures/images');
  const frame = (rel: string) => sharp(path.join(dir, rel)).resize(640, 480, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
  return {
    faces: await Promise.all(['faces/sample1.jpg', 'faces/grace_hopper.jpg', 'faces/messi5.jpg'].map(frame)),
    objects: await frame('objects/chelsea.png'),
  };
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const main = path.join(options.repoRoot, 'dist/server/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build first`);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-soak-'));
  const llm = await startOpenAIDouble();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [main], {
    cwd: options.repoRoot,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, CHAT_ENDPOINT: llm.url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const output = () => log;

  try {
    const getJson = async (p: string) => (await fetch(`${base}${p}`)).json() as Promise<Record<string, unknown>>;
    await waitFor('the server to answer /api/health', async () => (await fetch(`${base}/api/health`)).ok, 60_000, child, output);
    // The clock starts once everything the traffic uses answers (#38 2: the object detector loads on its first
    // request, within the warm-up).
    await waitFor(
      'the object detector to answer',
      async () => (await getJson('/api/objects/status')).available === true,
      180_000,
      child,
      output,
    );
    await waitFor(
      'the LLM double to be reachable',
      async () => (await getJson('/api/chat/status')).reachable === true,
      60_000,
      child,
      output,
    );
    const images = await soakImages(options.repoRoot);
    return await drive(options, base, child, dataDir, images, output);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    await llm.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

async function drive(
  options: SoakOptions,
  base: string,
  child: ChildProcess,
  dataDir: string,
  images: SoakImages,
  output: () => string,
): Promise<SoakReport> {
  const state = new SoakState();
  const stats = new Map<
    SoakRoute,
    { times: number[]; statuses: Map<string, number>; fired: number; dropped: number; inFlight: number; unexpected: number }
  >();
  for (const r of SOAK_ROUTES) stats.set(r, { times: [], statuses: new Map(), fired: 0, dropped: 0, inFlight: 0, unexpected: 0 });
  const unexpected: string[] = [];
  const pending = new Set<Promise<void>>();
  const samples: RssSample[] = [];
  const epochSeconds = Math.max(5, Math.min(30, options.seconds / 6));
  const start = performance.now();
  const elapsed = () => (performance.now() - start) / 1000;

  /** Sends the route's next request; false when it has nothing to send yet (its tick stays due). */
  const fire = (route: SoakRoute): boolean => {
    const s = stats.get(route)!;
    if (s.inFlight >= MAX_IN_FLIGHT) {
      s.fired++;
      s.dropped++;
      return true;
    }
    const prepared = route.prepare(base, state, images, s.fired);
    // A delete with no label due yet: the tick waits for one (on a slow machine the uploads of two epochs back may
    // still be in flight at the tick), rather than being lost, so every route is driven even in a short run.
    if (!prepared) return false;
    s.fired++;
    s.inFlight++;
    const t0 = performance.now();
    const run = (async () => {
      try {
        const res = await fetch(prepared.url, { ...prepared.init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const text = await res.text();
        s.times.push(performance.now() - t0);
        s.statuses.set(String(res.status), (s.statuses.get(String(res.status)) ?? 0) + 1);
        if (!route.expected.includes(res.status)) {
          s.unexpected++;
          unexpected.push(`${route.name} -> ${res.status} ${text.slice(0, 200)}`);
        } else {
          try {
            prepared.after?.(res.status, text);
          } catch (err) {
            state.problems.push(`${route.name}: could not read the answer (${(err as Error).message}): ${text.slice(0, 200)}`);
          }
        }
      } catch (err) {
        s.statuses.set('error', (s.statuses.get('error') ?? 0) + 1);
        s.unexpected++;
        unexpected.push(`${route.name}: ${failureOf(err)} after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      } finally {
        s.inFlight--;
        prepared.done?.();
      }
    })();
    pending.add(run);
    void run.finally(() => pending.delete(run));
    return true;
  };

  const sample = async () => {
    const mb = await readRssMb(child.pid!, (f) => fs.readFile(f, 'utf8'));
    if (mb !== null) samples.push({ t: elapsed(), mb });
    options.progress?.(
      `t=${elapsed().toFixed(0)}s rss=${mb?.toFixed(0) ?? '-'} MiB in flight=${[...stats.values()].reduce((a, s) => a + s.inFlight, 0)} unexpected=${unexpected.length}`,
    );
  };
  await sample();
  let nextSample = options.sampleMs / 1000;
  // Open loop: each route fires on its own clock whatever the answers take (up to MAX_IN_FLIGHT waiting).
  while (elapsed() < options.seconds) {
    const t = elapsed();
    state.epoch = Math.floor(t / epochSeconds);
    for (const route of SOAK_ROUTES) {
      // The first request of each route at t=0, then one every 1/rate seconds.
      const due = Math.floor(t * route.rate * options.rate) + 1;
      const s = stats.get(route)!;
      while (s.fired < due && fire(route)) {}
    }
    if (t >= nextSample) {
      nextSample += options.sampleMs / 1000;
      await sample();
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.race([Promise.all([...pending]), new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS + 5000))]);
  await sample();
  const seconds = elapsed();

  const failures: string[] = [];
  if (unexpected.length) failures.push(`${unexpected.length} answers not expected: ${unexpected.slice(0, 10).join(' | ')}`);
  failures.push(...state.problems.slice(0, 20));
  const health = await fetch(`${base}/api/health`).then(
    (r) => r.status,
    (e: Error) => e.message,
  );
  if (health !== 200) failures.push(`/api/health answers ${health} after the run`);
  const disk = await uploadsOnDisk(dataDir, state);
  failures.push(...disk.problems);
  const errors = output()
    .split('\n')
    .filter((line) => /\bERROR\b|"level":"error"/.test(line));
  if (errors.length) failures.push(`the server logged ${errors.length} ERROR lines: ${errors.slice(0, 3).join(' | ')}`);

  const warm = samples.filter((s) => s.t >= options.warmupSeconds);
  const slope = slopePerMinute(warm);
  const growth = warm.length >= 2 ? (slope * (warm[warm.length - 1].t - warm[0].t)) / 60 : 0;
  const rss = {
    startMb: samples[0]?.mb ?? Number.NaN,
    warmMb: warm[0]?.mb ?? Number.NaN,
    maxMb: Math.max(...samples.map((s) => s.mb)),
    endMb: samples[samples.length - 1]?.mb ?? Number.NaN,
    slopeMbPerMin: slope,
    growthMb: growth,
    samples,
  };
  if (rss.maxMb > options.maxRssMb) failures.push(`RSS reached ${rss.maxMb.toFixed(0)} MiB (SOAK_MAX_RSS_MB ${options.maxRssMb})`);
  if (growth > options.maxGrowthMb) {
    failures.push(
      `RSS grew ${growth.toFixed(0)} MiB after the warm-up (${slope.toFixed(2)} MiB/min; SOAK_MAX_GROWTH_MB ${options.maxGrowthMb})`,
    );
  }

  const routes: RouteStats[] = SOAK_ROUTES.map((r) => {
    const s = stats.get(r)!;
    return {
      name: r.name,
      count: s.times.length + (s.statuses.get('error') ?? 0),
      dropped: s.dropped,
      p50: percentile(s.times, 50),
      p99: percentile(s.times, 99),
      statuses: Object.fromEntries([...s.statuses].sort()),
      unexpected: s.unexpected,
    };
  });
  const acknowledged = [...state.acknowledged.values()].reduce((a, f) => a + f.size, 0);
  const report: Omit<SoakReport, 'text'> = {
    ok: failures.length === 0,
    failures,
    routes,
    rss,
    uploads: { acknowledged, deletedLabels: state.deleted.size, checkedOnDisk: disk.checked },
    seconds,
  };
  return { ...report, text: formatReport(report, options) };
}

/** A failed fetch in words: undici says only "fetch failed", the cause says why (a reset, a closed socket, a timeout). */
function failureOf(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const cause = e.cause ? ` (${[e.cause.code, e.cause.message].filter(Boolean).join(': ')})` : '';
  return `${e.message}${cause}`;
}

/** Every acknowledged upload of a label not deleted is on disk, with nothing else beside it; deleted labels are gone. */
async function uploadsOnDisk(dataDir: string, state: SoakState): Promise<{ problems: string[]; checked: number }> {
  const problems: string[] = [];
  let checked = 0;
  for (const [label, files] of state.acknowledged) {
    const dir = path.join(dataDir, 'images', label);
    const present = existsSync(dir) ? (await fs.readdir(dir)).filter((f) => !f.startsWith('.')) : [];
    if (state.deleted.has(label)) {
      if (present.length) problems.push(`deleted label ${label} still has ${present.length} files`);
      continue;
    }
    for (const f of files) {
      checked++;
      if (!present.includes(f)) problems.push(`acknowledged upload ${label}/${f} is not on disk`);
    }
    const extra = present.filter((f) => !files.has(f));
    if (extra.length) problems.push(`${label} holds files never acknowledged: ${extra.slice(0, 5).join(', ')}`);
  }
  return { problems: problems.slice(0, 20), checked };
}

function formatReport(r: Omit<SoakReport, 'text'>, o: SoakOptions): string {
  const lines: string[] = [];
  lines.push(
    `Soak: ${r.seconds.toFixed(0)} s of mixed traffic at SOAK_RATE ${o.rate} on ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'} (load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}), Node ${process.version}`,
  );
  lines.push('');
  lines.push(
    table(
      ['route', 'rate/s', 'count', 'dropped', 'p50 ms', 'p99 ms', 'statuses', 'unexpected'],
      r.routes.map((x) => {
        const rate = (SOAK_ROUTES.find((s) => s.name === x.name)?.rate ?? 0) * o.rate;
        return [
          x.name,
          Number(rate.toFixed(3)),
          x.count,
          x.dropped,
          x.p50,
          x.p99,
          Object.entries(x.statuses)
            .map(([s, n]) => `${s}x${n}`)
            .join(' '),
          x.unexpected,
        ];
      }),
    ),
  );
  lines.push('');
  const mb = (v: number) => `${v.toFixed(0)} MiB`;
  lines.push(
    `RSS: start ${mb(r.rss.startMb)}, after the ${o.warmupSeconds} s warm-up ${mb(r.rss.warmMb)}, max ${mb(r.rss.maxMb)}, end ${mb(r.rss.endMb)}; ` +
      `slope after warm-up ${r.rss.slopeMbPerMin.toFixed(2)} MiB/min (${r.rss.growthMb.toFixed(1)} MiB over the rest of the run; limits ${o.maxGrowthMb} MiB growth, ${o.maxRssMb} MiB max)`,
  );
  const every = Math.max(1, Math.ceil(r.rss.samples.length / 12));
  lines.push(
    `RSS over time: ${r.rss.samples
      .filter((_, i) => i % every === 0 || i === r.rss.samples.length - 1)
      .map((s) => `${s.t.toFixed(0)}s ${s.mb.toFixed(0)}`)
      .join(', ')}`,
  );
  const totals = r.routes.reduce((a, x) => a + x.count, 0);
  const unexpected = r.routes.reduce((a, x) => a + x.unexpected, 0);
  lines.push(`Answers: ${totals}, unexpected ${unexpected} (the expected 4xx are the refused requests' and training's 409/422)`);
  lines.push(
    `Uploads: ${r.uploads.acknowledged} acknowledged, ${r.uploads.deletedLabels} labels deleted, ${r.uploads.checkedOnDisk} checked on disk (the rest were deleted with their label)`,
  );
  lines.push(r.ok ? 'Soak: every invariant held.' : `Soak FAILED:\n- ${r.failures.join('\n- ')}`);
  return lines.join('\n');
}
