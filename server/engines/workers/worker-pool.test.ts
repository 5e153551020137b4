import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, TESTDATA } from '../../../test/helpers/test-server.js';
import type { VisionJob, VisionResult } from '../faces/vision-protocol.js';
import { WorkerPool, type VisionPool } from './worker-pool.js';

const cascadeXml = fs.readFileSync(path.join(REPO_ROOT, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8');
let pool: VisionPool | undefined;
afterEach(async () => {
  await pool?.close();
});

async function gray(rel: string) {
  const { data, info } = await sharp(path.join(TESTDATA, rel)).grayscale().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

describe('WorkerPool (vision workers)', () => {
  it('runs jobs on every worker and returns the results in order of the callers', async () => {
    pool = new WorkerPool<VisionJob, VisionResult>('faces/vision-worker', { cascadeXml, cascade: { scaleFactor: 1.1, minNeighbors: 5, minSize: 30 } }, 2);
    const images = await Promise.all(['faces/grace_hopper.jpg', 'negatives/brick.png', 'faces/astronaut.png'].map(gray));
    const results = await Promise.all(images.map((g) => pool!.run({ op: 'detect', gray: g })));
    expect(results.map((r) => (r.op === 'detect' ? r.boxes.length : -1))).toEqual([1, 0, 1]);
  });

  it('replaces a worker that dies, with the current model, and keeps working', async () => {
    pool = new WorkerPool<VisionJob, VisionResult>('faces/vision-worker', { cascadeXml, cascade: { scaleFactor: 1.1, minNeighbors: 5, minSize: 30 } }, 2);
    await pool.broadcast({ op: 'setModel', model: null, version: 7 });
    const slots = (pool as unknown as { slots: { worker: import('node:worker_threads').Worker }[] }).slots;
    const dead = slots[0].worker;
    await dead.terminate();
    expect(pool.size).toBe(2);
    expect(slots[0].worker).not.toBe(dead);
    const image = await gray('faces/grace_hopper.jpg');
    const results = await Promise.all([0, 1, 2, 3].map(() => pool!.run({ op: 'recognize', gray: image })));
    for (const r of results) expect(r).toMatchObject({ op: 'recognize', modelVersion: 7 });
  });
});
