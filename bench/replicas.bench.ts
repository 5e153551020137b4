/**
 * Replicas on PostgreSQL (#37): API server processes (the compiled dist/ build), each with its own DATA_DIR,
 * sharing one PostgreSQL server of the bench's own (Debian's, test/helpers/postgres-cluster.ts).
 *
 * - Throughput of POST /api/recognize (a 640x480 JPEG, the recognize benchmark's 5 labels trained) with 1, 2 and 3
 *   replicas behind ONE address: a round-robin HTTP proxy in this process (node:http, keep-alive). The proxy's own
 *   cost: 1 replica with and without it. Efficiency = throughput / (n x the 1-replica throughput through the proxy).
 *   The configurations run in turns, ROUNDS times over, so a drift of the machine's load falls on all of them.
 * - The database's share of the CPU during each run: PostgreSQL's processes (/proc/<pid>/stat, the postmaster's
 *   reaped children included) against all the CPU spent by the replicas, the database and this process.
 * - How long a new model takes to reach every replica: a photo of a new person added, a training on one replica (in
 *   turn), then each other replica polled until its model has that person (GET /api/models/trained): p50 and max.
 *
 * Every replica runs with its default worker threads (one per core), object detection and embeddings off, as the
 * issue #15 bench did; on a 2-core machine the replicas share the same two cores (the figures say so).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { type PostgresCluster, startPostgresCluster } from '../test/helpers/postgres-cluster.js';
import { trainBenchLabels } from './recognize.bench.js';
import { type BenchRow, median } from './types.js';

const CONCURRENCY = 6;
const TURN_S = 5;
const ROUNDS = 2;
const MODEL_TRAININGS = 6;
const CLOCK_TICKS = 100; // USER_HZ on Linux

interface Replica {
  url: string;
  child: ChildProcess;
  dataDir: string;
}

async function startReplica(repoRoot: string, databaseUrl: string): Promise<Replica> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-replica-'));
  const port = await new Promise<number>((resolve) => {
    const srv = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist/server/main.js')], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench: a replica exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/ready`)).ok) return { url, child, dataDir };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('bench: a replica did not become ready');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One address in front of `targets`: request i goes to target i mod n (kept-alive connections). */
async function startProxy(): Promise<{ url: string; use(targets: string[]): void; close(): Promise<void> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let targets: URL[] = [];
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = targets[next++ % targets.length];
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    use(urls) {
      targets = urls.map((u) => new URL(u));
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** CPU seconds a process has used (user + system); with `reaped`, its waited-for children's too. */
function cpuSeconds(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) in parentheses: utime is the 14th field.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return (utime + stime + (reaped ? cutime + cstime : 0)) / CLOCK_TICKS;
  } catch {
    return 0; // gone meanwhile
  }
}

/** PostgreSQL's CPU seconds so far: every process of the server, the ones that ended included (the postmaster reaped them). */
function databaseCpu(cluster: PostgresCluster): Map<number, number> {
  const [postmaster, ...rest] = cluster.pids();
  const out = new Map<number, number>([[postmaster, cpuSeconds(postmaster, true)]]);
  for (const pid of rest) out.set(pid, cpuSeconds(pid));
  return out;
}

/** Seconds between two readings of databaseCpu (a backend that ended meanwhile is in the postmaster's reaped time). */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, v] of after) sum += v - (before.get(pid) ?? 0);
  for (const [pid, v] of before) if (!after.has(pid)) sum -= v;
  return Math.max(0, sum);
}

interface Turn {
  rate: number;
  /** PostgreSQL's CPU seconds / everyone's (replicas, database, this process: client and proxy). */
  dbShare: number;
  /** PostgreSQL's CPU seconds per second of the turn (1 = one core busy). */
  dbCores: number;
  /** Everyone's CPU seconds per second (2 = both cores of a 2-core machine busy). */
  allCores: number;
}

/** `CONCURRENCY` clients posting back to back at `url` for TURN_S seconds; every answer must be 200 with a face. */
async function turn(url: string, body: string, replicas: Replica[], cluster: PostgresCluster): Promise<Turn> {
  const replicaCpu = () => replicas.reduce((sum, r) => sum + cpuSeconds(r.child.pid!), 0);
  const selfCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const db0 = databaseCpu(cluster);
  const [r0, s0] = [replicaCpu(), selfCpu()];
  let done = 0;
  const started = performance.now();
  const end = Date.now() + TURN_S * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const res = await fetch(`${url}/api/recognize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const answer = (await res.json()) as { faces?: unknown[] };
        if (res.status !== 200 || !answer.faces?.length)
          throw new Error(`bench: recognize answered ${res.status}: ${JSON.stringify(answer)}`);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const db = cpuBetween(db0, databaseCpu(cluster));
  const all = db + (replicaCpu() - r0) + (selfCpu() - s0);
  return { rate: done / elapsed, dbShare: all > 0 ? db / all : 0, dbCores: db / elapsed, allCores: all / elapsed };
}

/**
 * Adds a photo of a new person on `uploader`, trains on `trainer`, and times until every other replica offers a
 * model with that person (GET /api/models/trained labels: the model it has loaded, not only the files it copied).
 */
async function modelReach(
  uploader: string,
  trainer: string,
  others: string[],
  photo: Buffer,
  label: string,
): Promise<{ trainMs: number; reachMs: number }> {
  const form = new FormData();
  form.set('label', label);
  form.set('file', new Blob([new Uint8Array(photo)]), 'capture.jpg');
  if (!(await fetch(`${uploader}/api/images`, { method: 'POST', body: form })).ok) throw new Error('bench: upload failed');
  const t0 = performance.now();
  const trained = await fetch(`${trainer}/api/train`, { method: 'POST' });
  if (!trained.ok) throw new Error(`bench: training failed: ${await trained.text()}`);
  await trained.arrayBuffer();
  const answered = performance.now();
  await Promise.all(
    others.map(async (url) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const offered = ((await (await fetch(`${url}/api/models/trained`)).json()) as { labels: string[] }).labels;
        if (offered.includes(label)) return;
        if (Date.now() > deadline) throw new Error(`bench: ${url} did not offer a model with ${label} within 60 s`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }),
  );
  return { trainMs: answered - t0, reachMs: performance.now() - answered };
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((v) => v.toFixed(1))
    .join(' ');
}

export async function benchReplicas(repoRoot: string, testdata: string, photo640: Buffer): Promise<BenchRow[]> {
  const cores = os.cpus().length;
  const loadBefore = loadAverage();
  const cluster = await startPostgresCluster();
  const replicas: Replica[] = [];
  const proxy = await startProxy();
  try {
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE lookout_bench');
    await admin.end();
    const dbUrl = new URL(cluster.url);
    dbUrl.pathname = '/lookout_bench';
    // The first replica makes the schema and gets the training; the others start on empty disks and copy it.
    replicas.push(await startReplica(repoRoot, dbUrl.toString()));
    await trainBenchLabels(replicas[0].url, testdata);
    replicas.push(await startReplica(repoRoot, dbUrl.toString()), await startReplica(repoRoot, dbUrl.toString()));

    const body = JSON.stringify({ image: photo640.toString('base64') });
    const urls = replicas.map((r) => r.url);
    const configs: [string, string, string[]][] = [
      ['1 replica, direct', urls[0], [urls[0]]],
      ['1 replica, proxy', proxy.url, [urls[0]]],
      ['2 replicas, proxy', proxy.url, urls.slice(0, 2)],
      ['3 replicas, proxy', proxy.url, urls],
    ];
    // Warm-up: JIT and worker caches of every replica.
    proxy.use(urls);
    await turn(proxy.url, body, replicas, cluster);
    const turns = new Map<string, Turn[]>(configs.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating order, so neither end of a round always falls on the same configuration.
      const order = round % 2 ? [...configs].reverse() : configs;
      for (const [name, url, targets] of order) {
        proxy.use(targets);
        turns.get(name)!.push(await turn(url, body, replicas, cluster));
      }
    }
    const agg = (name: string) => {
      const all = turns.get(name)!;
      const mean = (pick: (t: Turn) => number) => all.reduce((s, t) => s + pick(t), 0) / all.length;
      return {
        rate: mean((t) => t.rate),
        dbShare: mean((t) => t.dbShare),
        dbCores: mean((t) => t.dbCores),
        allCores: mean((t) => t.allCores),
      };
    };
    const direct = agg('1 replica, direct');
    const single = agg('1 replica, proxy');
    const detail = (t: ReturnType<typeof agg>) =>
      `database ${(100 * t.dbShare).toFixed(1)}% of the CPU used (${t.dbCores.toFixed(2)} cores), all processes ${t.allCores.toFixed(2)} cores`;

    const rows: BenchRow[] = [
      {
        name: `/api/recognize throughput, 1 replica through the round-robin proxy (its cost), concurrency ${CONCURRENCY}; ${detail(single)}`,
        unit: 'req/s',
        lookout: single.rate,
        reference: direct.rate,
        referenceName: '1 replica, direct',
        ratio: single.rate / direct.rate,
      },
    ];
    for (const n of [2, 3]) {
      const t = agg(`${n} replicas, proxy`);
      rows.push({
        name: `/api/recognize throughput, ${n} replicas (separate DATA_DIRs, one PostgreSQL) behind one address, concurrency ${CONCURRENCY}; efficiency ${(t.rate / (n * single.rate)).toFixed(2)}; ${detail(t)}`,
        unit: 'req/s',
        lookout: t.rate,
        reference: single.rate,
        referenceName: '1 replica through the proxy, same run',
        ratio: t.rate / single.rate,
      });
    }

    // A new model reaching every replica: trained on each replica in turn, the photo added on another.
    const photo = await sharp(path.join(testdata, 'faces/grace_hopper.jpg')).jpeg({ quality: 90 }).toBuffer();
    const reach: number[] = [];
    const train: number[] = [];
    for (let i = 0; i < MODEL_TRAININGS; i++) {
      const trainer = urls[i % urls.length];
      const { trainMs, reachMs } = await modelReach(
        urls[(i + 1) % urls.length],
        trainer,
        urls.filter((u) => u !== trainer),
        photo,
        `reach-${i + 1}`,
      );
      reach.push(reachMs);
      train.push(trainMs);
    }
    rows.push({
      name: `a new model (one more person) offered by every other replica after the training answered (GET /api/models/trained labels), ${MODEL_TRAININGS} trainings on 3 replicas in turn (max ${Math.max(...reach).toFixed(0)} ms; the trainings took p50 ${median(train).toFixed(0)} ms)`,
      unit: 'ms',
      lookout: median(reach),
      goal: 'within a second (the issue)',
    });
    console.log(
      `  replicas: ${cores} cores, load average before ${loadBefore}, after ${loadAverage()}; reach times ${reach.map((v) => v.toFixed(0)).join(', ')} ms`,
    );
    return rows;
  } finally {
    await proxy.close();
    await Promise.all(
      replicas.map(
        (r) =>
          new Promise<void>((resolve) => {
            if (r.child.exitCode !== null) return resolve();
            r.child.once('exit', () => resolve());
            r.child.kill('SIGTERM');
          }),
      ),
    );
    await cluster.stop();
    await Promise.all(replicas.map((r) => fs.rm(r.dataDir, { recursive: true, force: true })));
  }
}
