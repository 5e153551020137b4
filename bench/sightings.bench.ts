/**
 * #36 4: what keeping sightings costs /api/recognize. Two services in one run (compiled, worker pools, default
 * settings, an LBPH model on the recognize benchmark's 5 labels), one with sightings on (the default) and one with
 * SIGHTINGS_ENABLED=false, driven in turns over HTTP with the same 640x480 JPEG: p50, p95 and throughput at
 * concurrency 1 and 4, and the ratio on / off (goal: p50 within 10%). The turns alternate (off, on, on, off, ...)
 * so a drift of the machine falls on both; between turns the sightings still queued are stored first (they run
 * when recognitions are quiet), so a turn never pays for the one before it.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { createService, type Service } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';
import { trainBenchLabels } from './recognize.bench.js';
import type { BenchRow } from './types.js';

const TURNS = 4;
const TURN_S = 3;

interface Running {
  service: Service;
  server: ServerType;
  base: string;
  dataDir: string;
}

async function start(repoRoot: string, testdata: string, env: Record<string, string>): Promise<Running> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-'));
  const settings = loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env }, repoRoot);
  const service = await createService(settings, createLogger('warn'));
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await trainBenchLabels(base, testdata);
  return { service, server, base, dataDir };
}

async function stop(r: Running): Promise<void> {
  await new Promise<void>((resolve) => r.server.close(() => resolve()));
  await r.service.close();
  await fs.rm(r.dataDir, { recursive: true, force: true });
}

/** `concurrency` clients posting back to back for `seconds`: each request's latency (ms) and the elapsed time (s). */
async function load(url: string, body: string, concurrency: number, seconds: number): Promise<{ latencies: number[]; elapsed: number }> {
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        if (res.status !== 200) throw new Error(`recognize answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, elapsed: (performance.now() - started) / 1000 };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

interface Figures {
  p50: number;
  p95: number;
  rate: number;
}

export async function benchSightings(repoRoot: string, testdata: string, photo640: Buffer): Promise<BenchRow[]> {
  const on = await start(repoRoot, testdata, {});
  const off = await start(repoRoot, testdata, { SIGHTINGS_ENABLED: 'false' });
  try {
    const body = JSON.stringify({ image: photo640.toString('base64') });
    const url = (r: Running) => `${r.base}/api/recognize`;
    const settle = async () => {
      await on.service.ctx.sightingRecorder.idle();
      await off.service.ctx.sightingRecorder.idle();
    };
    for (const r of [off, on]) await load(url(r), body, 4, 2); // warm-up: JIT, worker caches
    await settle();
    const rows: BenchRow[] = [];
    for (const concurrency of [1, 4]) {
      const got = new Map<Running, { latencies: number[]; elapsed: number }>([
        [off, { latencies: [], elapsed: 0 }],
        [on, { latencies: [], elapsed: 0 }],
      ]);
      for (let turn = 0; turn < TURNS; turn++) {
        // Off first, then on first: whichever runs second never gains or loses by its place.
        for (const r of turn % 2 === 0 ? [off, on] : [on, off]) {
          const { latencies, elapsed } = await load(url(r), body, concurrency, TURN_S);
          const sum = got.get(r)!;
          sum.latencies.push(...latencies);
          sum.elapsed += elapsed;
          await settle();
        }
      }
      const figures = (r: Running): Figures => {
        const { latencies, elapsed } = got.get(r)!;
        return { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), rate: latencies.length / elapsed };
      };
      const a = figures(on);
      const b = figures(off);
      // Before #36 4 the recorder had no stats (-1: not known).
      const recorder = on.service.ctx.sightingRecorder as { stats?: () => { stored: number; dropped: number } };
      const stats = recorder.stats?.() ?? { stored: -1, dropped: -1 };
      rows.push(
        {
          name: `/api/recognize p50, concurrency ${concurrency}, sightings on vs off (p95 ${a.p95.toFixed(0)} vs ${b.p95.toFixed(0)} ms; sightings kept ${stats.stored}, dropped ${stats.dropped})`,
          unit: 'ms',
          lookout: a.p50,
          reference: b.p50,
          referenceName: 'SIGHTINGS_ENABLED=false',
          ratio: a.p50 / b.p50,
          goal: '<= 1.1',
        },
        {
          name: `/api/recognize throughput, concurrency ${concurrency}, sightings on vs off`,
          unit: 'req/s',
          lookout: a.rate,
          reference: b.rate,
          referenceName: 'SIGHTINGS_ENABLED=false',
          ratio: a.rate / b.rate,
        },
      );
    }
    return rows;
  } finally {
    await stop(on);
    await stop(off);
  }
}
