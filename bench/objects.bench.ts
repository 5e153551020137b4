/**
 * Object detection per image (416 input), over the six images in test/fixtures/images/objects, each run = one
 * image from raw RGB pixels to the final list; medians over 20 rounds of all six after 2 warm-up rounds.
 *
 * 1. One thread: Lookout's NanoDet engine (the shipped tfjs graph converted to ONNX at load, onnxruntime-node,
 *    1 intra-op thread) vs `@vladmandic/human`'s own pipeline (`human.detect(tensor)` with only `object`
 *    enabled, the same nanodet.json weights, on tfjs's single-threaded WASM backend as Human starts it in Node),
 *    alternating image by image in one fresh worker thread (Human must start the WASM backend itself).
 * 2. Lookout as the server runs it: the object worker (own thread, its default intra-op threads), timed from
 *    the API thread, including the copy of the pixels to the worker, against Human's figure from 1 (same run).
 *    Goal (issue #16): at most a quarter of Human's.
 */
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import sharp from 'sharp';
import type { RgbImage } from '../shared/image/types.js';
import { NodeObjectDetector } from '../server/engines/objects/object-detector-node.js';
import { defaultThreads, type ObjectOps, type ObjectWorkerData } from '../server/engines/objects/object-protocol.js';
import { WorkerPool } from '../server/engines/workers/worker-pool.js';
import { median, type BenchRow } from './types.js';

const WARMUP_ROUNDS = 2;
const ROUNDS = 20;
const GOAL = '<= 0.25 of Human';

interface SameThreadResult {
  lookout: number;
  human: number;
  humanVersion: string;
  threads: number;
  /** Detections per image (first timed round), to show both pipelines really ran. */
  counts: { lookout: number; human: number };
  error?: string;
}

async function loadRgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(file).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

async function images(root: string): Promise<RgbImage[]> {
  const dir = path.resolve(root, 'test/fixtures/images/objects');
  const files = (await readdir(dir)).filter((f) => /\.(png|jpe?g)$/i.test(f)).sort();
  return Promise.all(files.map((f) => loadRgb(path.join(dir, f))));
}

/** Human (tfjs WASM) and Lookout (onnxruntime-node) alternating in this (fresh) thread. */
async function sameThread(root: string): Promise<SameThreadResult> {
  const require = createRequire(import.meta.url);
  const modelDir = path.join(root, 'public/models');
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  // Human's `exports` map is broken for Node: its dist file by path.
  const { Human } = require(path.join(root, 'node_modules/@vladmandic/human/dist/human.node-wasm.js'));
  // Human loads models with fetch(); Node's fetch has no file://, so serve those from disk.
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith('file://')) return realFetch(input, init);
    return new Response(await readFile(fileURLToPath(url)));
  }) as typeof fetch;
  const off = { enabled: false };
  const human = new Human({
    backend: 'wasm',
    wasmPath: wasmDir + path.sep,
    modelBasePath: `${pathToFileURL(modelDir).href}/`,
    debug: false,
    async: false,
    warmup: 'none',
    cacheSensitivity: 0, // never reuse a previous frame's result
    filter: off,
    face: off,
    body: off,
    hand: off,
    gesture: off,
    segmentation: off,
    object: { enabled: true, modelPath: 'nanodet.json', minConfidence: 0.4, iouThreshold: 0.4, maxDetected: 100 },
  });
  await human.load();
  const tf = human.tf;
  const detector = new NodeObjectDetector({ modelDir, threads: 1 });
  const status = await detector.load();
  if (!status.available) throw new Error(status.reason);

  const imgs = await images(root);
  const ours = (img: RgbImage) => detector.detect(img);
  const theirs = async (img: RgbImage) => {
    const t = tf.tensor4d(img.data, [1, img.height, img.width, 3], 'int32');
    try {
      const result = await human.detect(t);
      if (result.error) throw new Error(`Human: ${result.error}`);
      return result.object as unknown[];
    } finally {
      tf.dispose(t);
    }
  };
  for (let r = 0; r < WARMUP_ROUNDS; r++) {
    for (const img of imgs) {
      await ours(img);
      await theirs(img);
    }
  }
  const tOurs: number[] = [];
  const tHuman: number[] = [];
  const counts = { lookout: 0, human: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    for (const img of imgs) {
      let t0 = performance.now();
      const a = await ours(img);
      tOurs.push(performance.now() - t0);
      t0 = performance.now();
      const b = await theirs(img);
      tHuman.push(performance.now() - t0);
      if (r === 0) {
        counts.lookout += a.length;
        counts.human += b.length;
      }
    }
  }
  globalThis.fetch = realFetch;
  await detector.dispose();
  return { lookout: median(tOurs), human: median(tHuman), humanVersion: human.version, threads: status.threads ?? 1, counts };
}

/** Runs `sameThread` in a new worker thread running this very module. */
function inFreshThread(root: string): Promise<SameThreadResult> {
  const data = { objectsBench: true, root };
  const self = import.meta.url;
  const worker = self.endsWith('.ts')
    ? new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(self)}); });`, {
        eval: true,
        workerData: data,
      })
    : new Worker(new URL(self), { workerData: data });
  return new Promise((resolve, reject) => {
    worker.once('message', (m: SameThreadResult) => {
      void worker.terminate();
      if (m.error) reject(new Error(m.error));
      else resolve(m);
    });
    worker.once('error', reject);
  });
}

if (!isMainThread && (workerData as { objectsBench?: boolean } | null)?.objectsBench) {
  sameThread((workerData as { root: string }).root).then(
    (r) => parentPort!.postMessage(r),
    (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) }),
  );
}

/** The object worker as the server runs it, timed from this thread. */
async function serverWorker(root: string, threads?: number): Promise<{ ms: number; threads: number }> {
  const data: ObjectWorkerData = { model: { kind: 'nanodet', dir: path.join(root, 'public/models') }, ...(threads ? { threads } : {}) };
  const pool = new WorkerPool<ObjectOps>({ name: 'object', script: 'objects/object-worker', data, size: 1 });
  try {
    const status = await pool.run('status', undefined);
    if (!status.available) throw new Error(status.reason);
    const imgs = await images(root);
    const run = (img: RgbImage) => pool.run('detect', { rgb: img });
    for (let r = 0; r < WARMUP_ROUNDS; r++) for (const img of imgs) await run(img);
    const times: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const img of imgs) {
        const t0 = performance.now();
        await run(img);
        times.push(performance.now() - t0);
      }
    }
    return { ms: median(times), threads: status.info.threads ?? threads ?? 0 };
  } finally {
    await pool.close();
  }
}

export async function benchObjects(): Promise<BenchRow[]> {
  const root = process.cwd();
  const rows: BenchRow[] = [];
  let human: { ms: number; name: string } | null = null;
  try {
    const r = await inFreshThread(root);
    human = { ms: r.human, name: `Human ${r.humanVersion} detect() (object only, same weights, tfjs WASM, 1 thread)` };
    rows.push({
      name: `object detection per image, 6 objects/ images, NanoDet 416, onnxruntime-node ${r.threads} thread, detections ${r.counts.lookout} vs ${r.counts.human}`,
      unit: 'ms',
      lookout: r.lookout,
      reference: r.human,
      referenceName: human.name,
      ratio: r.lookout / r.human,
      goal: GOAL,
    });
  } catch (err) {
    rows.push({
      name: `object detection vs Human: failed (${err instanceof Error ? err.message : String(err)})`,
      unit: 'ms',
      lookout: NaN,
    });
  }
  // The server's default (undefined), then the other thread count, to show the choice.
  const other = defaultThreads() === 1 ? Math.min(2, os.availableParallelism()) : 1;
  for (const threads of [undefined, ...(other !== defaultThreads() ? [other] : [])]) {
    try {
      const w = await serverWorker(root, threads);
      rows.push({
        name: `object detection per image, 6 objects/ images, NanoDet 416, object worker (onnxruntime-node, ${w.threads} thread${w.threads === 1 ? '' : 's'}${threads ? '' : ', the server default'}), round trip from the API thread`,
        unit: 'ms',
        lookout: w.ms,
        ...(human ? { reference: human.ms, referenceName: human.name, ratio: w.ms / human.ms } : {}),
        goal: GOAL,
      });
    } catch (err) {
      rows.push({
        name: `object detection in the object worker: failed (${err instanceof Error ? err.message : String(err)})`,
        unit: 'ms',
        lookout: NaN,
      });
    }
  }
  return rows;
}
