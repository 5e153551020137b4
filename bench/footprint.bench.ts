/**
 * Footprint (issue #38, part 1): resident memory and start-to-ready time of each Lookout process, the API server
 * broken down by component. Every process is started as a real child (`node dist/server/...`) with a fresh
 * temporary data folder on 127.0.0.1 and a free port; start-to-ready is the time from spawn to the first 200 of its
 * readiness probe (API server `/api/ready`, IdP and processor `/ready`, model server `/v2/health/ready`), polled
 * every 50 ms. Memory is read from /proc/<pid>/status (VmRSS, with RssAnon, RssFile, VmHWM and Threads), summed
 * over the process and its children (the API server's embedded database runs in a child process), and as the
 * resident pages of them all with each physical page counted once (`uniqueResident`, root only): "idle"
 * is read 15 s after spawn, as the issue measured (later if the background loads, the embedded database's open
 * and the object detector, have not finished by then); "after a burst" is read 2 s after 3 photos were uploaded,
 * a training and 50 recognitions of a 640x480 photo of the trained person over HTTP (each must name her).
 *
 * Linux counts RSS per process, not per thread, so a component's share is measured by configuration difference:
 * RSS at defaults minus RSS with that component off (EMBEDDING_ENABLED=false, OBJECT_DETECTION_ENABLED=false,
 * SIGHTINGS_ENABLED=false, CHAT_ENABLED=false; one vision worker: defaults minus WORKERS=1, which is the cost of each
 * worker past the first; the embedded database: defaults minus DATABASE_URL at a throwaway PostgreSQL, when
 * Debian's PostgreSQL is installed). Shares are differences of single runs and do not add up exactly (allocator
 * and V8 heap sizing are not additive). The main thread's own V8 heap comes from the server's `/metrics`
 * (prom-client's nodejs_* figures describe the main thread only; workers report none).
 *
 * MB here is 10^6 bytes, as in the issue's targets.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { type BenchRow, median } from './types.js';
import { postgresInstalled, startPostgresCluster } from '../test/helpers/postgres-cluster.js';
import { freePort } from '../test/helpers/server-process.js';

const IDLE_AT_MS = 15_000;
const START_TIMEOUT_MS = 120_000;
const SETTLE_TIMEOUT_MS = 90_000;
const BURST = 50;
const TARGET_DEFAULTS_MB = 350;
const TARGET_ALL_OFF_MB = 250;
const TARGET_READY_MS = 3000;

const MB = 1e6;
/** Rounds over all the API server configurations; each figure is the median of the rounds. */
const RUNS = Math.max(1, Number(process.env.FOOTPRINT_RUNS ?? 2) || 2);

interface Memory {
  rss: number;
  anon: number;
  file: number;
  hwm: number;
  threads: number;
  /** How many processes the figures add up (the server and its embedded database's process). */
  processes: number;
  /**
   * Resident pages of all those processes, each physical page counted once (`uniqueResident`): what the server
   * holds in RAM. null where page frames cannot be read (not root).
   */
  unique: number | null;
}

interface Running {
  child: ChildProcess;
  url: string;
  spawnedAt: number;
  /** ms from spawn to the first 200 of the readiness probe. */
  readyMs: number;
  /** Lines the process wrote (stdout and stderr). */
  lines: string[];
}

/** Every child started here, killed at the end whatever happens (and on exit of the bench process). */
const children = new Set<ChildProcess>();
const killAll = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `pid` and every process it started, and theirs (the API server's embedded database runs in a child). */
function processTree(pid: number): number[] {
  const children = (p: number): number[] => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((tid) =>
        readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      return [];
    }
  };
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...children(all[i]));
  return all;
}

const PAGE = 4096;

/**
 * The bytes of RAM that `pids` hold together: the physical pages resident in any of them, each counted once. Summed
 * RSS counts a page that two processes map (the node binary's code, which the server and its database process both
 * run: about 50 MB) once per process; this counts it once, as RSS does for one process. Read from
 * /proc/<pid>/pagemap (one 64-bit entry per virtual page: bit 63 present, bits 0-54 the page frame), only over
 * the mappings smaps shows resident (WebAssembly reserves gigabytes it never touches). Page frames read as 0
 * without CAP_SYS_ADMIN: then null.
 */
function uniqueResident(pids: number[]): number | null {
  const frames = new Set<number>();
  let present = 0;
  for (const pid of pids) {
    let smaps: string;
    let fd: number;
    try {
      smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
      fd = openSync(`/proc/${pid}/pagemap`, 'r');
    } catch {
      continue;
    }
    try {
      let range: [number, number] | null = null;
      for (const line of smaps.split('\n')) {
        const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
        if (m) range = [Number.parseInt(m[1], 16), Number.parseInt(m[2], 16)];
        else if (range && line.startsWith('Rss:') && Number(line.split(/\s+/)[1]) > 0) {
          const pages = (range[1] - range[0]) / PAGE;
          const buf = Buffer.alloc(pages * 8);
          const read = readSync(fd, buf, 0, buf.length, (range[0] / PAGE) * 8);
          for (let at = 0; at + 8 <= read; at += 8) {
            const high = buf.readUInt32LE(at + 4);
            if (high >>> 31 === 0) continue; // not present (or swapped out)
            present++;
            frames.add((high & 0x7fffff) * 2 ** 32 + buf.readUInt32LE(at));
          }
          range = null;
        }
      }
    } finally {
      closeSync(fd);
    }
  }
  if (present > 0 && frames.size === 1 && frames.has(0)) return null;
  return frames.size * PAGE;
}

/**
 * The memory of `pid` with its child processes, summed: RSS counts the pages a child shares with its parent (the
 * node binary's, for one) in both, so the sum is what the processes hold at most; VmHWM summed is likewise at
 * least their common peak.
 */
function readMemory(pid: number): Memory {
  const tree = processTree(pid);
  const sum: Memory = { rss: 0, anon: 0, file: 0, hwm: 0, threads: 0, processes: 0, unique: uniqueResident(tree) };
  for (const p of tree) {
    let status: string;
    try {
      status = readFileSync(`/proc/${p}/status`, 'utf8');
    } catch {
      continue;
    }
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
    sum.rss += kb('VmRSS');
    sum.anon += kb('RssAnon');
    sum.file += kb('RssFile');
    sum.hwm += kb('VmHWM');
    sum.threads += kb('Threads') / 1024;
    sum.processes += 1;
  }
  return sum;
}

async function ok(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** A configuration's marker (not passed on): start `node <script>` without the npm script's options. */
const PLAIN_NODE = 'BENCH_FOOTPRINT_PLAIN_NODE';

/**
 * How package.json's npm script runs `script` (`MALLOC_ARENA_MAX=2 node --max-semi-space-size=2 dist/server/main.js`):
 * its environment assignments and Node's options, so the bench measures the process as `npm start` starts it.
 */
async function launchOf(repoRoot: string, script: string): Promise<{ env: Record<string, string>; nodeArgs: string[] }> {
  const pkg = JSON.parse(await fs.readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const line = Object.values(pkg.scripts).find((cmd) => cmd.trim().split(/\s+/).at(-1) === script);
  if (!line) throw new Error(`bench footprint: no npm script runs ${script}`);
  const words = line.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length && /^[A-Z_]+=/.test(words[0])) {
    const [name, ...value] = (words.shift() as string).split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`bench footprint: the npm script for ${script} does not run node: ${line}`);
  return { env, nodeArgs: words.slice(0, -1) };
}

/** Spawns `script` as its npm script does and waits for `readyPath` to answer 200. */
async function start(repoRoot: string, script: string, env: Record<string, string>, port: number, readyPath: string): Promise<Running> {
  const lines: string[] = [];
  // The bench's own marker: the process as `node <script>` alone starts it (no options of the npm script), to compare.
  const { [PLAIN_NODE]: plain, ...ownEnv } = env;
  const launch = plain ? { env: {}, nodeArgs: [] } : await launchOf(repoRoot, script);
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...launch.nodeArgs, path.join(repoRoot, script)], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', LOG_FORMAT: 'text', ...launch.env, ...ownEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) if (lines.length < 2000) lines.push(line);
    });
  }
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`bench footprint: ${script} exited with ${child.exitCode}: ${lines.slice(-5).join(' / ')}`);
    if (await ok(`${url}${readyPath}`)) return { child, url, spawnedAt, readyMs: performance.now() - spawnedAt, lines };
    if (performance.now() - spawnedAt > START_TIMEOUT_MS) throw new Error(`bench footprint: ${script} was not ready in time`);
    await sleep(50);
  }
}

async function stop(r: Running): Promise<void> {
  const { child } = r;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 8000);
    await exited;
    clearTimeout(late);
  }
  children.delete(child);
}

/** Waits until `IDLE_AT_MS` after spawn and `settled()` (polled), then reads the memory. */
async function idleMemory(r: Running, settled: () => Promise<boolean>): Promise<Memory> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  while (!(await settled()) && performance.now() < deadline) await sleep(200);
  const wait = r.spawnedAt + IDLE_AT_MS - performance.now();
  if (wait > 0) await sleep(wait);
  return readMemory(r.child.pid as number);
}

interface ApiFigures {
  name: string;
  readyMs: number;
  dbOpenMs: number | null;
  objectsReadyMs: number | null;
  idle: Memory;
  burst: Memory;
  heapUsed: number;
  heapTotal: number;
  external: number;
  workers: number;
}

function metric(text: string, name: string): number {
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

async function measureApi(
  repoRoot: string,
  name: string,
  env: Record<string, string>,
  face: Buffer,
  frameBody: string,
): Promise<ApiFigures> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-footprint-'));
  const port = await freePort();
  let r: Running | null = null;
  try {
    r = await start(
      repoRoot,
      'dist/server/main.js',
      { PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
      port,
      '/api/ready',
    );
    const running = r;
    let objectsReadyMs: number | null = null;
    const dbOpen = () => {
      for (const line of running.lines) {
        const m = /database \((?:embedded|postgres\w*)\) open in (\d+) ms/.exec(line);
        if (m) return Number(m[1]);
      }
      return null;
    };
    const idle = await idleMemory(running, async () => {
      const ready = (await (await fetch(`${running.url}/api/ready`)).json()) as { object_detection_state?: string };
      const objects = ready.object_detection_state !== 'loading';
      if (objects && objectsReadyMs === null && ready.object_detection_state === 'ready')
        objectsReadyMs = performance.now() - running.spawnedAt;
      return objects && dbOpen() !== null;
    });
    const readyBody = (await (await fetch(`${running.url}/api/ready`)).json()) as { workers?: number };
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    // The burst: enrol the person, train, then 50 recognitions of her in a 640x480 frame.
    for (let n = 0; n < 3; n++) {
      const form = new FormData();
      form.set('label', 'grace');
      form.set('file', new Blob([new Uint8Array(face)]), `grace-${n}.jpg`);
      const res = await fetch(`${running.url}/api/images`, { method: 'POST', body: form });
      if (!res.ok) throw new Error(`bench footprint: upload answered ${res.status}`);
    }
    const trained = await fetch(`${running.url}/api/train`, { method: 'POST' });
    if (!trained.ok) throw new Error(`bench footprint: training answered ${trained.status}`);
    for (let i = 0; i < BURST; i++) {
      const res = await fetch(`${running.url}/api/recognize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: frameBody,
      });
      const answer = (await res.json()) as { faces?: { label: string }[] };
      if (!res.ok || !answer.faces?.some((f) => f.label === 'grace')) throw new Error(`bench footprint: recognize answered ${res.status}`);
    }
    await sleep(2000);
    const burst = readMemory(running.child.pid as number);
    const figures: ApiFigures = {
      name,
      readyMs: running.readyMs,
      dbOpenMs: dbOpen(),
      objectsReadyMs,
      idle,
      burst,
      heapUsed: metric(metrics, 'nodejs_heap_size_used_bytes'),
      heapTotal: metric(metrics, 'nodejs_heap_size_total_bytes'),
      external: metric(metrics, 'nodejs_external_memory_bytes'),
      workers: readyBody.workers ?? 0,
    };
    const f = (v: number) => (v / MB).toFixed(0);
    console.log(
      `  footprint ${name}: ready ${running.readyMs.toFixed(0)} ms (${figures.workers} vision workers)` +
        `${figures.dbOpenMs !== null ? `, database open in ${figures.dbOpenMs} ms` : ''}` +
        `${objectsReadyMs !== null ? `, object detector ready at ${(objectsReadyMs as number).toFixed(0)} ms` : ''}; idle RSS ${f(idle.rss)} MB ` +
        `(anon ${f(idle.anon)}, file ${f(idle.file)}, ${idle.threads} threads in ${idle.processes} processes; each page counted once ${idle.unique !== null ? f(idle.unique) : 'n/a'} MB), main-thread V8 heap ${f(figures.heapUsed)}/${f(figures.heapTotal)} MB, ` +
        `external ${f(figures.external)} MB; after the burst RSS ${f(burst.rss)} MB (anon ${f(burst.anon)}; once ${burst.unique !== null ? f(burst.unique) : 'n/a'}), peak ${f(burst.hwm)} MB`,
    );
    return figures;
  } finally {
    if (r) await stop(r);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** The IdP, the processor and the model server: start-to-ready and idle RSS. */
async function measureOther(
  repoRoot: string,
  name: string,
  script: string,
  env: (port: number, dir: string) => Record<string, string>,
  readyPath: string,
): Promise<{ readyMs: number; idle: Memory }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-footprint-'));
  const port = await freePort();
  let r: Running | null = null;
  try {
    r = await start(repoRoot, script, { LOG_LEVEL: 'warn', ...env(port, dir) }, port, readyPath);
    const idle = await idleMemory(r, async () => true);
    console.log(
      `  footprint ${name}: ready ${r.readyMs.toFixed(0)} ms; idle RSS ${(idle.rss / MB).toFixed(0)} MB (anon ${(idle.anon / MB).toFixed(0)}, ${idle.threads} threads)`,
    );
    return { readyMs: r.readyMs, idle };
  } finally {
    if (r) await stop(r);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function benchFootprint(repoRoot: string, testdata: string): Promise<BenchRow[]> {
  process.on('exit', killAll);
  try {
    const face = await fs.readFile(path.join(testdata, 'faces/grace_hopper.jpg'));
    const frame = await sharp(face).resize(640, 480, { fit: 'contain', background: '#808080' }).jpeg({ quality: 90 }).toBuffer();
    const body = JSON.stringify({ image: frame.toString('base64') });
    const allOff = {
      EMBEDDING_ENABLED: 'false',
      OBJECT_DETECTION_ENABLED: 'false',
      SIGHTINGS_ENABLED: 'false',
      CHAT_ENABLED: 'false',
      REMOTE_DETECTOR_ENABLED: 'false',
    };
    const api = async (name: string, env: Record<string, string>) => measureApi(repoRoot, name, env, face, body);
    const configs: [string, Record<string, string>][] = [
      ['defaults', {}],
      ['defaults, plain `node dist/server/main.js`', { [PLAIN_NODE]: '1' }],
      ['EMBEDDING_ENABLED=false', { EMBEDDING_ENABLED: 'false' }],
      ['OBJECT_DETECTION_ENABLED=false', { OBJECT_DETECTION_ENABLED: 'false' }],
      ['SIGHTINGS_ENABLED=false', { SIGHTINGS_ENABLED: 'false' }],
      ['CHAT_ENABLED=false', { CHAT_ENABLED: 'false' }],
      ['WORKERS=1', { WORKERS: '1' }],
      ['all optional engines off', allOff],
    ];
    let cluster: { url: string; stop(): Promise<void> } | null = null;
    const found = new Map<string, ApiFigures[]>();
    try {
      if (postgresInstalled()) {
        cluster = await startPostgresCluster();
        configs.push(['DATABASE_URL=PostgreSQL', { DATABASE_URL: cluster.url }]);
      } else
        console.log('  footprint: no PostgreSQL installed (apt-get install -y postgresql): the embedded database share is not measured');
      // The configurations in turn, RUNS times over, so that a change in the machine's load falls on all of them.
      for (let run = 0; run < RUNS; run++)
        for (const [name, env] of configs) found.set(name, [...(found.get(name) ?? []), await api(name, env)]);
    } finally {
      await cluster?.stop();
    }
    const agg = (name: string): ApiFigures => {
      const all = found.get(name) as ApiFigures[];
      const m = (pick: (f: ApiFigures) => number) => median(all.map(pick));
      const mem = (pick: (f: ApiFigures) => Memory): Memory => ({
        rss: m((f) => pick(f).rss),
        anon: m((f) => pick(f).anon),
        file: m((f) => pick(f).file),
        hwm: m((f) => pick(f).hwm),
        threads: m((f) => pick(f).threads),
        processes: m((f) => pick(f).processes),
        unique: all.every((f) => pick(f).unique !== null) ? m((f) => pick(f).unique as number) : null,
      });
      const db = all.map((f) => f.dbOpenMs).filter((v): v is number => v !== null);
      return {
        name,
        readyMs: m((f) => f.readyMs),
        dbOpenMs: db.length ? median(db) : null,
        objectsReadyMs: null,
        idle: mem((f) => f.idle),
        burst: mem((f) => f.burst),
        heapUsed: m((f) => f.heapUsed),
        heapTotal: m((f) => f.heapTotal),
        external: m((f) => f.external),
        workers: m((f) => f.workers),
      };
    };
    const defaults = agg('defaults');
    const noEmbedding = agg('EMBEDDING_ENABLED=false');
    const noObjects = agg('OBJECT_DETECTION_ENABLED=false');
    const noSightings = agg('SIGHTINGS_ENABLED=false');
    const noChat = agg('CHAT_ENABLED=false');
    const oneWorker = agg('WORKERS=1');
    const off = agg('all optional engines off');
    const plainNode = agg('defaults, plain `node dist/server/main.js`');
    const postgres = found.has('DATABASE_URL=PostgreSQL') ? agg('DATABASE_URL=PostgreSQL') : null;
    const spreadOnce = (name: string) => {
      const v = (found.get(name) as ApiFigures[]).map((f) => (f.idle.unique === null ? '?' : (f.idle.unique / MB).toFixed(0)));
      return v.length > 1 ? ` (runs: ${v.join(', ')} MB)` : '';
    };
    const spread = (name: string) => {
      const v = (found.get(name) as ApiFigures[]).map((f) => (f.idle.rss / MB).toFixed(0));
      return v.length > 1 ? ` (runs: ${v.join(', ')} MB)` : '';
    };

    const idp = await measureOther(
      repoRoot,
      'IdP',
      'dist/server/idp/main.js',
      (port, dir) => ({ IDP_PORT: String(port), IDP_DATA_DIR: dir }),
      '/ready',
    );
    // No KAFKA_BROKERS: the documented single-processor mode (an in-process queue on disk); its backend is a port
    // where nothing listens (its polls fail and are retried; nothing else depends on it), polled every 10 minutes.
    const deadPort = await freePort();
    const processor = await measureOther(
      repoRoot,
      'processor',
      'dist/server/processor/main.js',
      (port, dir) => ({
        PROCESSOR_PORT: String(port),
        DATA_DIR: dir,
        PROCESSOR_BACKEND_URL: `http://127.0.0.1:${deadPort}`,
        PROCESSOR_POLL_INTERVAL_MS: '600000',
        LOG_LEVEL: 'error',
      }),
      '/ready',
    );
    const modelServer = await measureOther(
      repoRoot,
      'model server',
      'dist/server/model-server/main.js',
      (port) => ({ PORT: String(port) }),
      '/v2/health/ready',
    );

    const mb = (v: number) => v / MB;
    /** The idle targets on resident memory with every physical page counted once (root only: page frames). */
    const onceRows = (...figures: ApiFigures[]): BenchRow[] =>
      figures.flatMap((f) => {
        if (f.idle.unique === null) return [];
        const target = f === off ? TARGET_ALL_OFF_MB : TARGET_DEFAULTS_MB;
        return [
          {
            name: `API server idle resident memory, ${f === off ? 'all optional engines off' : 'defaults'}, each page counted once (server and database process together; summed RSS counts the node binary's shared pages twice)${spreadOnce(f.name)}`,
            unit: 'MB',
            lookout: mb(f.idle.unique),
            reference: target,
            referenceName: 'target #38',
            ratio: mb(f.idle.unique) / target,
            goal: 'ratio <= 1',
          },
        ];
      });
    const share = (name: string, without: ApiFigures): BenchRow[] => [
      {
        name: `API server share of ${name}, idle (RSS at defaults minus RSS without it)`,
        unit: 'MB',
        lookout: mb(defaults.idle.rss - without.idle.rss),
      },
      { name: `API server share of ${name}, after the burst`, unit: 'MB', lookout: mb(defaults.burst.rss - without.burst.rss) },
    ];
    const rows: BenchRow[] = [
      {
        name: `API server idle RSS at defaults (15 s after start, empty DATA_DIR; median of ${RUNS})${spread('defaults')}`,
        unit: 'MB',
        lookout: mb(defaults.idle.rss),
        reference: TARGET_DEFAULTS_MB,
        referenceName: 'target #38',
        ratio: mb(defaults.idle.rss) / TARGET_DEFAULTS_MB,
        goal: 'ratio <= 1',
      },
      {
        name: `API server idle RSS at defaults started as plain \`node dist/server/main.js\` (without npm start's options)${spread('defaults, plain `node dist/server/main.js`')}`,
        unit: 'MB',
        lookout: mb(plainNode.idle.rss),
        reference: mb(defaults.idle.rss),
        referenceName: 'npm start',
        ratio: plainNode.idle.rss / defaults.idle.rss,
      },
      {
        name: `API server RSS at defaults after a burst (3 uploads, a training, ${BURST} recognitions)`,
        unit: 'MB',
        lookout: mb(defaults.burst.rss),
      },
      {
        name: `API server idle RSS, all optional engines off (embedding, objects, sightings, chat, remote)${spread('all optional engines off')}`,
        unit: 'MB',
        lookout: mb(off.idle.rss),
        reference: TARGET_ALL_OFF_MB,
        referenceName: 'target #38',
        ratio: mb(off.idle.rss) / TARGET_ALL_OFF_MB,
        goal: 'ratio <= 1',
      },
      { name: 'API server RSS, all optional engines off, after the burst', unit: 'MB', lookout: mb(off.burst.rss) },
      ...onceRows(defaults, off),
      {
        name: 'API server start to /api/ready, defaults',
        unit: 'ms',
        lookout: defaults.readyMs,
        reference: TARGET_READY_MS,
        referenceName: 'target #38',
        ratio: defaults.readyMs / TARGET_READY_MS,
        goal: 'ratio <= 1',
      },
      {
        name: 'API server start to /api/ready, all optional engines off',
        unit: 'ms',
        lookout: off.readyMs,
        reference: TARGET_READY_MS,
        referenceName: 'target #38',
        ratio: off.readyMs / TARGET_READY_MS,
        goal: 'ratio <= 1',
      },
      ...share('the embedding worker (EMBEDDING_ENABLED)', noEmbedding),
      ...share('the object detector (OBJECT_DETECTION_ENABLED)', noObjects),
      ...share('sightings (SIGHTINGS_ENABLED)', noSightings),
      ...share('chat (CHAT_ENABLED, no model configured)', noChat),
      ...share(`one vision worker (defaults: ${defaults.workers} workers, minus WORKERS=1)`, oneWorker),
      {
        name: 'API server main thread V8 heap used at idle, defaults (/metrics nodejs_heap_size_used_bytes)',
        unit: 'MB',
        lookout: mb(defaults.heapUsed),
      },
    ];
    if (defaults.dbOpenMs !== null)
      rows.push({ name: 'embedded database (PGlite) open at start, defaults (its log line)', unit: 'ms', lookout: defaults.dbOpenMs });
    if (postgres) rows.push(...share('the embedded database (PGlite; minus DATABASE_URL at PostgreSQL)', postgres));
    for (const [name, f] of [
      ['IdP', idp],
      ['processor (no Kafka: in-process queue)', processor],
      ['model server', modelServer],
    ] as const) {
      rows.push(
        { name: `${name} idle RSS (15 s after start)`, unit: 'MB', lookout: mb(f.idle.rss) },
        {
          name: `${name} start to ready`,
          unit: 'ms',
          lookout: f.readyMs,
          reference: TARGET_READY_MS,
          referenceName: 'target #38',
          ratio: f.readyMs / TARGET_READY_MS,
          goal: 'ratio <= 1',
        },
      );
    }
    return rows;
  } finally {
    killAll();
    process.off('exit', killAll);
  }
}
