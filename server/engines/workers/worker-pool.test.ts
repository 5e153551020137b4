import { defaultRule } from '../../../shared/recognition/rules.js';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REPO_ROOT, TESTDATA } from '../../../test/helpers/test-server.js';
import { CASCADE_DEFAULTS, detectOptionsOf } from '../../../shared/recognition/pipeline.js';
import { detectMultiScale, parseHaarCascade } from '../../../shared/vision/haar-cascade.js';
import type { VisionOps, VisionPool } from '../faces/vision-protocol.js';
import { startWorker, WORKER_YOUNG_GENERATION_MB, WorkerPool } from './worker-pool.js';

const cascadeXml = fs.readFileSync(path.join(REPO_ROOT, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8');
// From 0: the test recognises the very face it trained on (distance 0).
const rule = { ...defaultRule('lbph'), min: 0 };
let pool: VisionPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

function visionPool(size: number, elastic?: { min: number; idleReleaseMs?: number; log?: (message: string) => void }): VisionPool {
  return new WorkerPool<VisionOps>({
    name: 'vision',
    script: 'faces/vision-worker',
    data: { cascadeXml, cascade: CASCADE_DEFAULTS },
    size,
    ...elastic,
  });
}

/** An LBPH model of the one face in `image`, named `name` (the test recognises the very face it trained on). */
async function modelOf(p: VisionPool, image: Awaited<ReturnType<typeof gray>>, name: string) {
  const sample = await p.run('trainSample', { gray: image });
  const model = {
    radius: 1,
    neighbors: 8,
    gridX: 8,
    gridY: 8,
    threshold: Number.MAX_VALUE,
    histograms: [sample.histogram!],
    labels: Int32Array.of(0),
  };
  return { model, names: new Map([[0, name]]) };
}

async function gray(rel: string) {
  const { data, info } = await sharp(path.join(TESTDATA, rel)).grayscale().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

describe('WorkerPool (vision workers)', () => {
  it('runs jobs on every worker and returns the results in order of the callers', async () => {
    pool = visionPool(2);
    const images = await Promise.all(['faces/grace_hopper.jpg', 'negatives/brick.png', 'faces/astronaut.png'].map(gray));
    const results = await Promise.all(images.map((g) => pool!.run('detect', { gray: g })));
    expect(results.map((boxes) => boxes.length)).toEqual([1, 0, 1]);
  });

  it('shares a lone image with an idle worker, with the boxes of one detectMultiScale run', async () => {
    pool = visionPool(2);
    const images = await Promise.all(['faces/sample5.jpg', 'faces/grace_hopper.jpg'].map(gray));
    const cascade = parseHaarCascade(cascadeXml);
    for (const image of images) {
      const before = pool.helped;
      const boxes = await pool.run('detect', { gray: image });
      expect(boxes).toEqual(detectMultiScale(cascade, image, detectOptionsOf(CASCADE_DEFAULTS)));
      expect(pool.helped).toBe(before + 1);
    }
    // Busy: four images for two workers; every answer is still the plain run's.
    const want = images.map((image) => detectMultiScale(cascade, image, detectOptionsOf(CASCADE_DEFAULTS)));
    const got = await Promise.all([0, 1, 0, 1].map((i) => pool!.run('detect', { gray: { ...images[i], data: images[i].data.slice() } })));
    expect(got).toEqual([0, 1, 0, 1].map((i) => want[i]));
  });

  it('has no one to ask with a single worker', async () => {
    pool = visionPool(1);
    const image = await gray('faces/grace_hopper.jpg');
    expect(await pool.run('detect', { gray: image })).toHaveLength(1);
    expect(pool.helped).toBe(0);
  });

  it('copies a buffer the runtime will not move instead of failing the job (Node 24: sharp output, the Buffer pool)', async () => {
    pool = visionPool(1);
    // sharp's raw output as it comes is memory the addon owns: Node 21 and later refuse to transfer it.
    const { data, info } = await sharp(path.join(TESTDATA, 'faces/grace_hopper.jpg'))
      .grayscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const image = { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
    expect(await pool.run('detect', { gray: image }, [data.buffer as ArrayBuffer])).toHaveLength(1);
    // A small Buffer lives in Node's shared pool, also never moved; the pool goes on working.
    const pooled = Buffer.from([0, 0, 0, 0]);
    const tiny = { width: 2, height: 2, data: new Uint8Array(pooled.buffer, pooled.byteOffset, 4) };
    expect(await pool.run('detect', { gray: tiny }, [pooled.buffer as ArrayBuffer])).toEqual([]);
    expect(await pool.run('detect', { gray: await gray('faces/grace_hopper.jpg') })).toHaveLength(1);
  });

  it('replaces a worker that dies, with the current model, and keeps working', async () => {
    pool = visionPool(2);
    const image = await gray('faces/grace_hopper.jpg');
    await pool.broadcast('setModel', await modelOf(pool, image, 'grace'));
    const slots = (pool as unknown as { slots: { worker: import('node:worker_threads').Worker }[] }).slots;
    const dead = slots[0].worker;
    await dead.terminate();
    expect(pool.size).toBe(2);
    expect(slots[0].worker).not.toBe(dead);
    const results = await Promise.all([0, 1, 2, 3].map(() => pool!.run('recognize', { gray: image, rule })));
    for (const r of results) expect(r).toMatchObject({ trained: true, faces: [{ label: 'grace', confidence: 100 }] });
  });

  it('starts one worker and the others only when jobs wait for one (#38: sized to the work)', async () => {
    pool = visionPool(2, { min: 1 });
    expect(pool.size).toBe(2);
    expect(pool.running).toBe(1);
    const image = await gray('faces/grace_hopper.jpg');
    // A job too small to share, on a quiet pool, starts nothing.
    expect(await pool.run('detect', { gray: { width: 2, height: 2, data: new Uint8Array(4) } })).toEqual([]);
    expect(pool.running).toBe(1);
    const results = await Promise.all([0, 1].map(() => pool!.run('detect', { gray: { ...image, data: image.data.slice() } })));
    expect(results.map((boxes) => boxes.length)).toEqual([1, 1]);
    expect(pool.running).toBe(2);
    // Never more than its size.
    await Promise.all([0, 1, 2, 3].map(() => pool!.run('detect', { gray: { ...image, data: image.data.slice() } })));
    expect(pool.running).toBe(2);
  });

  it('starts a helper when a lone job asks for help and none exists, and shares the next lone job with it', async () => {
    pool = visionPool(2, { min: 1 });
    const image = await gray('faces/sample5.jpg');
    const cascade = parseHaarCascade(cascadeXml);
    const want = detectMultiScale(cascade, image, detectOptionsOf(CASCADE_DEFAULTS));
    // Declined (no one to help), answered whole by the one worker; a second worker starts meanwhile.
    expect(await pool.run('detect', { gray: { ...image, data: image.data.slice() } })).toEqual(want);
    expect(pool.helped).toBe(0);
    expect(pool.running).toBe(2);
    expect(await pool.run('detect', { gray: image })).toEqual(want);
    expect(pool.helped).toBe(1);
  });

  it('stops an extra worker idle for idleReleaseMs, never the last, and a worker started later gets the current model', async () => {
    const logged: string[] = [];
    pool = visionPool(2, { min: 1, idleReleaseMs: 1000, log: (m) => logged.push(m) });
    const image = await gray('faces/grace_hopper.jpg');
    await pool.broadcast('setModel', await modelOf(pool, image, 'grace'));
    const recognizeTwo = () =>
      Promise.all([0, 1].map(() => pool!.run('recognize', { gray: { ...image, data: image.data.slice() }, rule })));
    for (const r of await recognizeTwo()) expect(r).toMatchObject({ trained: true, faces: [{ label: 'grace', confidence: 100 }] });
    expect(pool.running).toBe(2);
    await vi.waitFor(() => expect(pool!.running).toBe(1), { timeout: 5000, interval: 50 });
    await new Promise((r) => setTimeout(r, 1200));
    expect(pool.running).toBe(1);
    // A new model while one worker runs: the one started next gets it (not the model it was started with before).
    await pool.broadcast('setModel', await modelOf(pool, image, 'ada'));
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all(
        [0, 1, 2, 3].map(() => pool!.run('recognize', { gray: { ...image, data: image.data.slice() }, rule })),
      );
      for (const r of results) expect(r).toMatchObject({ trained: true, faces: [{ label: 'ada', confidence: 100 }] });
    }
    expect(pool.running).toBe(2);
    expect(logged.some((m) => /vision worker 2 of 2 started/.test(m))).toBe(true);
    expect(logged.some((m) => /vision worker stopped after 1 s without work/.test(m))).toBe(true);
  });

  it('keeps serving with the workers it has when one fails to start, and loses no job', async () => {
    const logged: string[] = [];
    pool = visionPool(2, { min: 1, log: (m) => logged.push(m) });
    const image = await gray('faces/grace_hopper.jpg');
    // The next worker's script is missing: its start fails after a job waiting for it was given to it.
    (pool as unknown as { options: { script: string } }).options.script = 'faces/no-such-worker';
    const results = await Promise.all([0, 1, 2].map(() => pool!.run('detect', { gray: { ...image, data: image.data.slice() } })));
    expect(results.map((boxes) => boxes.length)).toEqual([1, 1, 1]);
    await vi.waitFor(() => expect(logged.some((m) => /vision worker failed to start/.test(m))).toBe(true), { timeout: 5000 });
    expect(pool.running).toBe(1);
    expect(await pool.run('detect', { gray: image })).toHaveLength(1);
  });

  it('keeps all its workers without min (the other pools: elasticity is asked for)', async () => {
    pool = visionPool(2);
    expect(pool.running).toBe(2);
  });

  it('starts every worker with a small young generation (#38: V8 keeps 48 MB per isolate otherwise)', async () => {
    const worker = startWorker('faces/vision-worker', { cascadeXml, cascade: CASCADE_DEFAULTS });
    try {
      await new Promise((resolve) => worker.once('online', resolve));
      expect(worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(WORKER_YOUNG_GENERATION_MB);
      expect(WORKER_YOUNG_GENERATION_MB).toBeLessThanOrEqual(8);
    } finally {
      await worker.terminate();
    }
  });

  it('names itself in its errors', async () => {
    pool = visionPool(1);
    await expect(pool.run('recognize', { gray: { width: 1, height: 1, data: new Uint8Array(1) }, rule })).resolves.toMatchObject({
      faces: [],
    });
    await pool.close();
    await expect(pool.run('detect', { gray: { width: 1, height: 1, data: new Uint8Array(1) } })).rejects.toThrow('vision pool is closed');
    const lost = visionPool(1);
    try {
      const slot = (lost as unknown as { slots: { worker: import('node:worker_threads').Worker }[] }).slots[0];
      // A job the worker never answers: it dies while holding it.
      const held = lost.run('detect', { gray: { width: 1, height: 1, data: new Uint8Array(1) } });
      await slot.worker.terminate();
      await expect(held).rejects.toThrow(/^vision worker exited with code \d+$/);
    } finally {
      await lost.close();
    }
  });
});
