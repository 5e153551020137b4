/**
 * The kiosk in the browser (#38 part 3): Live recognition in headless Chromium on WASM, its memory and the
 * time to its first answer after a cold start with the models from the offline cache, and a soak of the live
 * page on the fake camera (does a page left open grow?).
 *
 * Setup: the real service on 127.0.0.1 serving the built app, one person trained; Chromium (the benches'
 * flags, plus --disable-3d-apis: no WebGL/WebGPU, so the engine's `auto` lands on WASM, as on a kiosk without
 * a GPU; the bench checks the page says WASM) with a persistent profile. A first visit installs the service
 * worker (app and model files precached) and recognises once. Each cold start is a new browser process on that
 * profile, with the server refusing every /models/ and /assets/ download (503, counted: the figures are only
 * reported when none was asked for, so the models came from the offline cache). The API stays up (the kiosk's
 * server is there, only the files come from the device).
 *
 * Figures: navigation start to the trained person named on the page (the first answer); the process figures
 * at that moment; and memory KIOSK_SETTLE_S (30) after it: the JS heaps of the page and of its workers (performance.measureUserAgentSpecificMemory,
 * eager, so measured after a garbage collection; the page is cross-origin isolated), the page's renderer
 * process RSS and all Chromium processes' PSS (/proc). Medians over KIOSK_COLD_STARTS starts.
 *
 * The soak (`npm run bench kiosk-soak`): the live page recognising for KIOSK_SOAK_SECONDS (600), sampled every
 * KIOSK_SOAK_SAMPLE_S (15); growth per hour is the least-squares slope over the second half (after warm-up),
 * with the frames the page sent to its engine, so a day can be extrapolated.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.js';
import { chromiumInstalled, startBenchServer, trainPerson, type BenchServer } from './browser.js';
import { makeY4m } from './fake-camera.js';
import { slopePerMinute } from './soak/stats.js';
import { median, type BenchRow } from './types.js';

const PERSON = 'grace';
const MiB = 1024 * 1024;

function numberSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`);
  return value;
}

/** The server's side of a cold start: downloads of app and model files refused (and counted) while `blocked`. */
class FileGate {
  blocked = false;
  refused: string[] = [];
  intercept = (req: Request): Response | null => {
    const { pathname } = new URL(req.url);
    if (!this.blocked || !/^\/(models|assets)\//.test(pathname)) return null;
    this.refused.push(pathname);
    return new Response('refused by the kiosk bench: this file must come from the offline cache', { status: 503 });
  };
}

interface Memory {
  /** JS heap of the page (Window), bytes; null when the page is not cross-origin isolated. */
  pageHeap: number | null;
  /** JS heap of the page's dedicated workers (the engine, cascade lanes...), bytes. */
  workerHeap: number | null;
  workers: number;
  /** Worker heaps by script (the build hash left off), bytes. */
  byWorker: Record<string, number>;
  /** The whole measurement (page, workers, shared), bytes. */
  totalHeap: number | null;
  /** The main thread's JSHeapUsedSize (CDP Performance.getMetrics), bytes: a cross-check without isolation. */
  cdpMainHeap: number;
  /** RSS of the largest renderer process (the page's; the service worker shares its process), bytes. */
  rendererRss: number;
  /** PSS of every Chromium process (browser, GPU, utilities, renderers), bytes. */
  chromiumPss: number;
}

/** In the page (a string: this file is compiled without the DOM's types); eager via ForceEagerMeasureMemory. */
const MEASURE_HEAPS = `(async () => {
  if (!self.crossOriginIsolated || !performance.measureUserAgentSpecificMemory) return null;
  const m = await performance.measureUserAgentSpecificMemory();
  let page = 0, workers = 0;
  const byWorker = {};
  for (const b of m.breakdown) {
    const scopes = b.attribution.map((a) => a.scope);
    if (scopes.includes('Window')) page += b.bytes;
    else if (scopes.includes('DedicatedWorkerGlobalScope')) {
      workers += b.bytes;
      for (const a of b.attribution) {
        const name = a.url.replace(/^.*\\//, '').replace(/-[\\w-]{8}\\.js$/, '');
        byWorker[name] = (byWorker[name] ?? 0) + b.bytes / b.attribution.length;
      }
    }
  }
  return { total: m.bytes, page, workers, count: m.breakdown.filter((b) => b.attribution.some((a) => a.scope === 'DedicatedWorkerGlobalScope')).length, byWorker };
})()`;

interface Proc {
  pid: number;
  ppid: number;
  cmdline: string;
}

async function processes(): Promise<Proc[]> {
  const out: Proc[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = (await fs.readFile(`/proc/${name}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      out.push({ pid: Number(name), ppid, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Chromium's processes for the profile in `userDataDir`: its browser process and every descendant. */
async function chromiumProcesses(userDataDir: string): Promise<Proc[]> {
  const all = await processes();
  const root = all.find((p) => p.cmdline.includes(`--user-data-dir=${userDataDir}`) && !p.cmdline.includes('--type='));
  if (!root) throw new Error(`no Chromium browser process for ${userDataDir}`);
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const p of all) if (p.ppid === found[i].pid) found.push(p);
  return found;
}

async function kb(file: string, field: string): Promise<number> {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(await fs.readFile(file, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

type Heaps = { total: number; page: number; workers: number; count: number; byWorker: Record<string, number> };

/**
 * The JS heaps by measureUserAgentSpecificMemory. Eager as it is asked to be, it still answers only after about
 * 60 s on the live page (a busy WASM thread does not reach the point where its isolate is measured before the
 * browser's timeout; an idle page answers in milliseconds), hence sampled apart from the process figures.
 */
function measureHeaps(page: Page): Promise<Heaps | null> {
  return page.evaluate<Heaps | null>(MEASURE_HEAPS);
}

/** The process figures (cheap): RSS of the page's renderer, PSS of all Chromium, the main thread's heap. */
async function measureProcesses(page: Page, userDataDir: string): Promise<Memory> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = (await cdp.send('Performance.getMetrics')).metrics;
  await cdp.detach();
  const procs = await chromiumProcesses(userDataDir);
  const renderers = procs.filter((p) => p.cmdline.includes('--type=renderer'));
  const rss = await Promise.all(renderers.map((p) => kb(`/proc/${p.pid}/status`, 'VmRSS')));
  const pss = await Promise.all(procs.map((p) => kb(`/proc/${p.pid}/smaps_rollup`, 'Pss')));
  return {
    pageHeap: null,
    workerHeap: null,
    workers: 0,
    byWorker: {},
    totalHeap: null,
    cdpMainHeap: metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0,
    rendererRss: Math.max(0, ...rss),
    chromiumPss: pss.reduce((a, b) => a + b, 0),
  };
}

function withHeaps(memory: Memory, heaps: Heaps | null): Memory {
  return {
    ...memory,
    pageHeap: heaps?.page ?? null,
    workerHeap: heaps?.workers ?? null,
    workers: heaps?.count ?? 0,
    byWorker: heaps?.byWorker ?? {},
    totalHeap: heaps?.total ?? null,
  };
}

function openProfile(userDataDir: string, y4m: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      ...CHROMIUM_ARGS,
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-video-capture=${y4m}`,
      // No WebGL, no WebGPU: the engine's `auto` choice is WASM, as on a kiosk without a GPU.
      '--disable-3d-apis',
      // measureUserAgentSpecificMemory at once (after a GC) instead of at the next one, up to 20 s later.
      '--enable-blink-features=ForceEagerMeasureMemory',
    ],
  });
}

// Counts the frames the page hands its engine worker (the `recognize` op of engine/ops-worker.ts).
const COUNT_FRAMES = `(() => {
  const post = Worker.prototype.postMessage;
  globalThis.__kioskFrames = 0;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message && message.op === 'recognize') globalThis.__kioskFrames++;
    return post.call(this, message, ...rest);
  };
})()`;

/** Navigation start to the person named on the page, ms (performance.now() in the page at that moment). */
async function firstAnswerMs(page: Page): Promise<number> {
  // A function, not a string: the app's CSP forbids eval. No DOM types here, hence the casts.
  type Doc = { querySelector(s: string): { textContent: string | null } | null };
  const handle = await page.waitForFunction(
    (person) => {
      const r = (globalThis as unknown as { document: Doc }).document.querySelector('[data-testid="face-result"]');
      return r?.textContent?.includes(person) ? performance.now() : 0;
    },
    PERSON,
    { timeout: 180_000, polling: 20 },
  );
  return (await handle.jsonValue()) as number;
}

async function engineStatus(page: Page): Promise<string> {
  const status = page.getByTestId('engine-status');
  await status.filter({ hasText: /Running in this browser on/ }).waitFor({ timeout: 60_000 });
  return (await status.textContent()) ?? '';
}

/**
 * Empties Chromium's HTTP cache (not the service worker's Cache Storage) before the profile is closed: the next
 * start then has the offline cache alone to take files from.
 */
async function clearHttpCache(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.clearBrowserCache');
  await cdp.detach();
}

/** Counts the model files the page and its workers received, and how many of them the service worker answered. */
function watchModelFiles(page: Page): { fromServiceWorker: number; total: number } {
  const seen = { fromServiceWorker: 0, total: 0 };
  page.on('response', (res) => {
    if (!new URL(res.url()).pathname.startsWith('/models/')) return;
    seen.total++;
    if (res.fromServiceWorker()) seen.fromServiceWorker++;
  });
  return seen;
}

/** The first visit: the service worker installs (app and models precached) and the page recognises once. */
async function install(server: BenchServer, userDataDir: string, y4m: string): Promise<void> {
  const context = await openProfile(userDataDir, y4m);
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${server.url}/recognize`);
    await page.evaluate('navigator.serviceWorker.ready.then(() => undefined)');
    if (!(await page.evaluate<boolean>('navigator.serviceWorker.controller !== null'))) await page.reload();
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { navigator: { serviceWorker: { controller: unknown } } }).navigator.serviceWorker.controller !== null,
    );
    await firstAnswerMs(page);
    const caches = await page.evaluate<string[]>('caches.keys()');
    if (!caches.some((c) => c.startsWith('lookout-models-'))) throw new Error(`no model cache after the first visit: ${caches.join(', ')}`);
    await clearHttpCache(page);
  } finally {
    await context.close();
  }
}

interface ColdStart {
  launchToAnswerMs: number;
  navigationToAnswerMs: number;
  backend: string;
  crossOriginIsolated: boolean;
  /** Model files received, every one from the service worker. */
  modelFiles: number;
  /** The process figures at the first answer (the heaps are not: measuring them takes a minute). */
  atAnswer: Memory;
  /** Everything, `settleS` after the first answer. */
  memory: Memory;
}

async function coldStart(server: BenchServer, gate: FileGate, userDataDir: string, y4m: string, settleS: number): Promise<ColdStart> {
  gate.blocked = true;
  gate.refused = [];
  const t0 = performance.now();
  const context = await openProfile(userDataDir, y4m);
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const modelFiles = watchModelFiles(page);
    await page.goto(`${server.url}/recognize`);
    const navigationToAnswerMs = await firstAnswerMs(page);
    const launchToAnswerMs = performance.now() - t0;
    const atAnswer = await measureProcesses(page, userDataDir);
    const backend = await engineStatus(page);
    await page.waitForTimeout(settleS * 1000);
    const memory = withHeaps(await measureProcesses(page, userDataDir), await measureHeaps(page));
    const crossOriginIsolated = await page.evaluate<boolean>('self.crossOriginIsolated === true');
    if (gate.refused.length) {
      throw new Error(
        `the cold start asked the server for ${gate.refused.length} files (${[...new Set(gate.refused)].join(', ')}): not from the offline cache`,
      );
    }
    if (modelFiles.total !== modelFiles.fromServiceWorker) {
      throw new Error(
        `${modelFiles.total - modelFiles.fromServiceWorker} of ${modelFiles.total} model files did not come from the service worker`,
      );
    }
    await clearHttpCache(page);
    return { launchToAnswerMs, navigationToAnswerMs, backend, crossOriginIsolated, modelFiles: modelFiles.total, atAnswer, memory };
  } finally {
    gate.blocked = false;
    await context.close();
  }
}

interface Kiosk {
  server: BenchServer;
  gate: FileGate;
  userDataDir: string;
  y4m: string;
  close(): Promise<void>;
}

async function setUpKiosk(repoRoot: string): Promise<Kiosk> {
  const gate = new FileGate();
  const server = await startBenchServer(repoRoot, {}, gate.intercept);
  const photo = path.join(repoRoot, 'test/fixtures/images/faces/grace_hopper.jpg');
  const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-kiosk-profile-'));
  try {
    await trainPerson(server, photo, PERSON);
    const y4m = await makeY4m(photo);
    await install(server, userDataDir, y4m);
    return {
      server,
      gate,
      userDataDir,
      y4m,
      async close() {
        await server.close();
        await fs.rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await server.close();
    await fs.rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
}

const mib = (bytes: number) => bytes / MiB;

export async function benchKioskFootprint(repoRoot: string): Promise<BenchRow[]> {
  if (!(await chromiumInstalled())) {
    console.log('kiosk footprint: skipped, Chromium is not installed (apt-get install -y chromium)');
    return [];
  }
  const starts = numberSetting('KIOSK_COLD_STARTS', 5);
  // The renderer grows for some 20 s after the first answer (300 -> 740 MiB here): measured once it has settled.
  const settleS = numberSetting('KIOSK_SETTLE_S', 30);
  const kiosk = await setUpKiosk(repoRoot);
  try {
    const runs: ColdStart[] = [];
    for (let i = 0; i < starts; i++) {
      const run = await coldStart(kiosk.server, kiosk.gate, kiosk.userDataDir, kiosk.y4m, settleS);
      if (!/WASM/.test(run.backend)) throw new Error(`the page ran on something else than WASM: ${run.backend}`);
      if (process.env.BENCH_VERBOSE) console.log(JSON.stringify(run));
      runs.push(run);
    }
    const backend = runs[0].backend.replace(/\s+/g, ' ').trim();
    const isolated = runs.every((r) => r.crossOriginIsolated);
    const heapRow = (what: string, pick: (m: Memory) => number | null): BenchRow[] => {
      const values = runs.map((r) => pick(r.memory)).filter((v): v is number => v !== null);
      return values.length
        ? [{ name: `kiosk cold start on WASM, ${settleS} s after the first answer: ${what}`, unit: 'MiB', lookout: mib(median(values)) }]
        : [];
    };
    const where = `${starts} cold starts, models from the service worker's cache (0 model or asset downloads from the server), ${backend}`;
    return [
      {
        name: `kiosk cold start on WASM: navigation to the first recognition answer (${where})`,
        unit: 'ms',
        lookout: median(runs.map((r) => r.navigationToAnswerMs)),
      },
      {
        name: 'kiosk cold start on WASM: browser launch to the first recognition answer',
        unit: 'ms',
        lookout: median(runs.map((r) => r.launchToAnswerMs)),
      },
      ...heapRow(`JS heap of the page${isolated ? '' : ' (not measured: the page is not cross-origin isolated)'}`, (m) => m.pageHeap),
      ...heapRow(`JS heap of the page's workers (${runs[0].memory.workers} workers)`, (m) => m.workerHeap),
      ...heapRow('JS heap in all (measureUserAgentSpecificMemory)', (m) => m.totalHeap),
      ...heapRow('main thread JSHeapUsedSize (CDP)', (m) => m.cdpMainHeap),
      {
        name: "kiosk cold start on WASM, at the first answer: renderer process RSS (the page's)",
        unit: 'MiB',
        lookout: mib(median(runs.map((r) => r.atAnswer.rendererRss))),
      },
      {
        name: 'kiosk cold start on WASM, at the first answer: all Chromium processes PSS',
        unit: 'MiB',
        lookout: mib(median(runs.map((r) => r.atAnswer.chromiumPss))),
      },
      ...heapRow("renderer process RSS (the page's)", (m) => m.rendererRss),
      ...heapRow('all Chromium processes PSS', (m) => m.chromiumPss),
    ];
  } finally {
    await kiosk.close();
  }
}

interface SoakSample {
  t: number;
  frames: number;
  memory: Memory;
}

/**
 * MiB per hour, the least-squares slope over the second half of the samples, with its standard error (what a
 * run this short can tell apart from no growth at all).
 */
function growthPerHour(samples: SoakSample[], pick: (m: Memory) => number | null): { slope: number; stderr: number } | null {
  const points = samples.flatMap((s) => {
    const v = pick(s.memory);
    return v === null ? [] : [{ t: s.t, mb: mib(v) }];
  });
  const half = points.slice(Math.floor(points.length / 2));
  if (half.length < 3) return null;
  const perSecond = slopePerMinute(half) / 60;
  const mt = half.reduce((a, p) => a + p.t, 0) / half.length;
  const mm = half.reduce((a, p) => a + p.mb, 0) / half.length;
  const sxx = half.reduce((a, p) => a + (p.t - mt) ** 2, 0);
  const residuals = half.reduce((a, p) => a + (p.mb - mm - perSecond * (p.t - mt)) ** 2, 0);
  const stderr = sxx > 0 ? Math.sqrt(residuals / (half.length - 2) / sxx) : 0;
  return { slope: perSecond * 3600, stderr: stderr * 3600 };
}

export async function benchKioskSoak(repoRoot: string): Promise<BenchRow[]> {
  if (!(await chromiumInstalled())) {
    console.log('kiosk soak: skipped, Chromium is not installed (apt-get install -y chromium)');
    return [];
  }
  const seconds = numberSetting('KIOSK_SOAK_SECONDS', 600);
  const sampleS = numberSetting('KIOSK_SOAK_SAMPLE_S', 15);
  const kiosk = await setUpKiosk(repoRoot);
  const context = await openProfile(kiosk.userDataDir, kiosk.y4m);
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.addInitScript(COUNT_FRAMES);
    await page.goto(`${kiosk.server.url}/recognize`);
    await firstAnswerMs(page);
    const backend = (await engineStatus(page)).replace(/\s+/g, ' ').trim();
    const frames = () => page.evaluate<number>('globalThis.__kioskFrames');
    const t0 = performance.now();
    const since = () => (performance.now() - t0) / 1000;
    const f0 = await frames();
    const end = t0 + seconds * 1000;
    // Process figures every sampleS; the JS heaps back to back beside them (each takes about a minute).
    const samples: SoakSample[] = [];
    const heapSamples: SoakSample[] = [];
    const heapLoop = (async () => {
      while (performance.now() < end) {
        const heaps = await measureHeaps(page);
        const t = since();
        heapSamples.push({ t, frames: (await frames()) - f0, memory: withHeaps(await measureProcesses(page, kiosk.userDataDir), heaps) });
        const m = heapSamples[heapSamples.length - 1].memory;
        console.log(
          `kiosk soak ${t.toFixed(0)} s: JS heap of the page ${mib(m.pageHeap ?? 0).toFixed(1)} MiB, workers ${mib(m.workerHeap ?? 0).toFixed(1)} MiB`,
        );
      }
    })();
    for (;;) {
      const t = since();
      samples.push({ t, frames: (await frames()) - f0, memory: await measureProcesses(page, kiosk.userDataDir) });
      const m = samples[samples.length - 1];
      console.log(
        `kiosk soak ${t.toFixed(0)} s: ${m.frames} frames, renderer RSS ${mib(m.memory.rendererRss).toFixed(1)} MiB, Chromium PSS ${mib(m.memory.chromiumPss).toFixed(1)} MiB, main thread heap ${mib(m.memory.cdpMainHeap).toFixed(1)} MiB`,
      );
      if (t >= seconds) break;
      await page.waitForTimeout(Math.min(sampleS, seconds - t) * 1000);
    }
    await heapLoop;
    // Still answering at the end: the person named.
    const named = await page.getByTestId('face-result').first().textContent();
    if (!named?.includes(PERSON)) throw new Error(`after the soak the page shows ${JSON.stringify(named)}`);
    const last = samples[samples.length - 1];
    const duration = last.t;
    const what = `${(duration / 60).toFixed(0)} min soak of the live page on WASM (${backend}), ${last.frames} frames (${(last.frames / duration).toFixed(1)} fps), slope over the second half`;
    const rows: BenchRow[] = [];
    const growth = (name: string, from: SoakSample[], pick: (m: Memory) => number | null) => {
      const g = growthPerHour(from, pick);
      const values = from.map((x) => pick(x.memory)).filter((v): v is number => v !== null);
      if (g === null || values.length < 2) return;
      const range = `${from.length} samples, ${mib(values[0]).toFixed(1)} MiB first, ${mib(values[values.length - 1]).toFixed(1)} MiB last, ${mib(Math.min(...values)).toFixed(1)}..${mib(Math.max(...values)).toFixed(1)} MiB`;
      rows.push({
        name: `${what}: ${name} growth (${range}; standard error of the slope ${g.stderr.toFixed(1)} MiB/h)`,
        unit: 'MiB/h',
        lookout: g.slope,
        goal: '~0 (a day open does not grow)',
      });
    };
    growth('JS heap of the page', heapSamples, (m) => m.pageHeap);
    growth("JS heap of the page's workers", heapSamples, (m) => m.workerHeap);
    growth('main thread JSHeapUsedSize (CDP)', samples, (m) => m.cdpMainHeap);
    growth('renderer RSS', samples, (m) => m.rendererRss);
    growth('all Chromium PSS', samples, (m) => m.chromiumPss);
    if (process.env.KIOSK_SOAK_CSV) {
      const all = [...samples, ...heapSamples].sort((x, y) => x.t - y.t);
      const csv = ['t_s,frames,page_heap,worker_heap,total_heap,cdp_main_heap,renderer_rss,chromium_pss']
        .concat(
          all.map((x) =>
            [
              x.t.toFixed(1),
              x.frames,
              x.memory.pageHeap,
              x.memory.workerHeap,
              x.memory.totalHeap,
              x.memory.cdpMainHeap,
              x.memory.rendererRss,
              x.memory.chromiumPss,
            ].join(','),
          ),
        )
        .join('\n');
      await fs.writeFile(process.env.KIOSK_SOAK_CSV, `${csv}\n`);
    }
    return rows;
  } finally {
    await context.close();
    await kiosk.close();
  }
}
