/**
 * /api/recognize throughput: the real service (compiled, worker pool) on 127.0.0.1 with an LBPH model trained
 * on 5 labels, driven over HTTP at concurrency 1 and 4 with a 640x480 JPEG; beside it, OpenCV's single-threaded
 * decode + detect + predict pipeline on the same image and model, measured in the same run. The original Python
 * service reached about 1.6x that OpenCV rate on this machine: that is the bar at concurrency 4.
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
import type { BenchRow } from './types.js';

const ORIGINAL_SERVICE_FACTOR = 1.6;
const TRAINING_PHOTOS: Record<string, string> = {
  grace: 'faces/grace_hopper.jpg',
  eileen: 'faces/astronaut.png',
  lionel: 'faces/messi5.jpg',
  group2: 'faces/sample2.jpg',
  group5: 'faces/sample5.jpg',
};

async function load(url: string, body: string, concurrency: number, seconds: number): Promise<number> {
  let done = 0;
  const end = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        if (res.status !== 200) throw new Error(`recognize answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        done++;
      }
    }),
  );
  return done / ((Date.now() - started) / 1000);
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

    const body = JSON.stringify({ image: photo640.toString('base64') });
    await load(`${base}/api/recognize`, body, 4, 2); // warm-up: JIT, worker caches
    const rate1 = await load(`${base}/api/recognize`, body, 1, 6);
    const rate4 = await load(`${base}/api/recognize`, body, 4, 6);

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
    ) as { rate_per_s: number; faces: number };
    const goal = reference.rate_per_s * ORIGINAL_SERVICE_FACTOR;
    return [
      {
        name: `/api/recognize, concurrency 1, 640x480 JPEG (${reference.faces} faces), 5 labels`,
        unit: 'req/s',
        lookout: rate1,
        reference: reference.rate_per_s,
        referenceName: 'OpenCV 4.6 decode+detect+predict, 1 thread',
        ratio: rate1 / reference.rate_per_s,
      },
      {
        name: '/api/recognize, concurrency 4',
        unit: 'req/s',
        lookout: rate4,
        reference: reference.rate_per_s,
        referenceName: 'OpenCV 4.6 decode+detect+predict, 1 thread',
        ratio: rate4 / reference.rate_per_s,
        goal: `> ${ORIGINAL_SERVICE_FACTOR}x OpenCV (original service: ~${goal.toFixed(1)} req/s)`,
      },
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await service.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
