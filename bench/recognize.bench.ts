/**
 * /api/recognize speed: the real service (compiled, worker pool) on 127.0.0.1 with an LBPH model trained on 5
 * labels, driven over HTTP with a 640x480 JPEG: the median latency of one request at a time (issue #16: at most
 * half of OpenCV's time per image; a lone request shares its cascade with the idle worker) and the throughput of
 * 4 clients at once (at least 3.5x OpenCV's single-threaded rate on 2 cores). Beside them, OpenCV's
 * single-threaded decode + detect + predict pipeline on the same image and model, measured in the same run. The
 * original Python service reached about 1.6x that OpenCV rate on this machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import sharp from 'sharp';
import { createService } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';
import { median, type BenchRow } from './types.js';

const ORIGINAL_SERVICE_FACTOR = 1.6;
const TRAINING_PHOTOS: Record<string, string> = {
  grace: 'faces/grace_hopper.jpg',
  eileen: 'faces/astronaut.png',
  lionel: 'faces/messi5.jpg',
  group2: 'faces/sample2.jpg',
  group5: 'faces/sample5.jpg',
};

/**
 * Uploads the benchmark's labels (each photo, its mirror image and a brighter copy) to the server at `base` and
 * trains it: the recognition benches (this one, sightings.bench.ts) measure the same trained model.
 */
export async function trainBenchLabels(base: string, testdata: string): Promise<void> {
  for (const [label, rel] of Object.entries(TRAINING_PHOTOS)) {
    const original = await fs.readFile(path.join(testdata, rel));
    for (const variant of [sharp(original), sharp(original).flop(), sharp(original).modulate({ brightness: 1.1 })]) {
      const form = new FormData();
      form.set('label', label);
      form.set('file', new Blob([new Uint8Array(await variant.jpeg().toBuffer())]), 'capture.jpg');
      const res = await fetch(`${base}/api/images`, { method: 'POST', body: form });
      if (!res.ok) throw new Error(`upload failed: ${await res.text()}`);
    }
  }
  const trained = await fetch(`${base}/api/train`, { method: 'POST' });
  if (!trained.ok) throw new Error(`training failed: ${await trained.text()}`);
}

/** `concurrency` clients posting back to back for `seconds`: requests per second and the median latency (ms). */
async function load(url: string, body: string, concurrency: number, seconds: number): Promise<{ rate: number; p50: number }> {
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
  return { rate: latencies.length / ((performance.now() - started) / 1000), p50: median(latencies) };
}

export async function benchRecognize(repoRoot: string, testdata: string, photo640: Buffer): Promise<BenchRow[]> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-'));
  const settings = loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, repoRoot);
  const service = await createService(settings, createLogger('warn'));
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await trainBenchLabels(base, testdata);

    const body = JSON.stringify({ image: photo640.toString('base64') });
    await load(`${base}/api/recognize`, body, 4, 2); // warm-up: JIT, worker caches
    const one = await load(`${base}/api/recognize`, body, 1, 6);
    const four = await load(`${base}/api/recognize`, body, 4, 6);

    const imagePath = path.join(dataDir, 'bench-640x480.jpg');
    await fs.writeFile(imagePath, photo640);
    const reference = JSON.parse(
      execFileSync(
        '/usr/bin/python3',
        [
          path.join(repoRoot, 'bench/reference/opencv_pipeline.py'),
          settings.cascadeFile,
          path.join(dataDir, 'models/training.yml'),
          imagePath,
          '40',
        ],
        { encoding: 'utf8' },
      ),
    ) as { median_ms: number; rate_per_s: number; faces: number };
    const original = reference.rate_per_s * ORIGINAL_SERVICE_FACTOR;
    return [
      {
        name: `/api/recognize p50 latency, concurrency 1 (${one.rate.toFixed(1)} req/s), 640x480 JPEG (${reference.faces} faces), 5 labels`,
        unit: 'ms',
        lookout: one.p50,
        reference: reference.median_ms,
        referenceName: 'OpenCV 4.6 decode+detect+predict per image, 1 thread',
        ratio: one.p50 / reference.median_ms,
        goal: '<= 0.5',
      },
      {
        name: `/api/recognize throughput, concurrency 4 (p50 latency ${one.p50.toFixed(0)} ms at 1, ${four.p50.toFixed(0)} ms at 4)`,
        unit: 'req/s',
        lookout: four.rate,
        reference: reference.rate_per_s,
        referenceName: 'OpenCV 4.6 decode+detect+predict, 1 thread',
        ratio: four.rate / reference.rate_per_s,
        goal: `>= 3.5x OpenCV (the original service: ~${ORIGINAL_SERVICE_FACTOR}x, ${original.toFixed(1)} req/s)`,
      },
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await service.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
