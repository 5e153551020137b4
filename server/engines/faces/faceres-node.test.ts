/**
 * The `faceres-1024` descriptor model on the real nets: face-api's landmarks, five-point alignment to 224 px,
 * Human's faceres graph model on tfjs WASM. And the same shared code on another tfjs backend (the CPU one, in
 * a worker thread) gives the same descriptor: the browser runs this code on its own backend.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { euclideanDistance } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { NodeEmbeddingEngine } from './embedding-node.js';

const root = process.cwd();
const MODEL_DIR = path.join(root, 'public/models/face-api');
const FACES = path.resolve(root, 'test/fixtures/images/faces');

async function photo(file: string, flop = false): Promise<RgbImage> {
  const img = sharp(path.join(FACES, file));
  const { data, info } = await (flop ? img.flop() : img).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

// Haar boxes (haarcascade_frontalface_alt2, the product's defaults) of one face per photo.
const GRACE: Rect = { x: 145, y: 99, width: 239, height: 239 };
const ASTRONAUT: Rect = { x: 177, y: 66, width: 97, height: 97 };
const OTHERS: [string, Rect][] = [
  ['sample1.jpg', { x: 364, y: 363, width: 244, height: 244 }],
  ['sample5.jpg', { x: 639, y: 454, width: 164, height: 164 }],
  ['sample5.jpg', { x: 1089, y: 217, width: 187, height: 187 }],
  ['sample5.jpg', { x: 783, y: 122, width: 199, height: 199 }],
];

const engine = new NodeEmbeddingEngine({ modelDir: MODEL_DIR, descriptor: 'faceres-1024' });

beforeAll(async () => {
  const status = await engine.load();
  expect(status).toMatchObject({ available: true, backend: 'wasm', descriptorModel: 'faceres-1024' });
});
afterAll(() => engine.dispose());

describe('faceres-1024 in Node', () => {
  it('gives unit-length 1024-d descriptors, the same for the same pixels', async () => {
    const rgb = await photo('grace_hopper.jpg');
    const [a] = await engine.describeFacesDetailed(rgb, [GRACE]);
    const [b] = await engine.describeFaces(rgb, [GRACE]);
    expect(a.descriptor).toHaveLength(1024);
    expect(Math.hypot(...a.descriptor)).toBeCloseTo(1, 5);
    expect(euclideanDistance(a.descriptor, b)).toBe(0);
    // The aligned crop covers the face.
    const box = a.alignedBox;
    expect(box.x).toBeLessThan(GRACE.x + GRACE.width / 2);
    expect(box.x + box.width).toBeGreaterThan(GRACE.x + GRACE.width / 2);
  });

  it('puts the same face, mirrored, nearer than other people', async () => {
    const rgb = await photo('grace_hopper.jpg');
    const flipped = await photo('grace_hopper.jpg', true);
    const [d] = await engine.describeFaces(rgb, [GRACE]);
    const [m] = await engine.describeFaces(flipped, [{ ...GRACE, x: flipped.width - GRACE.x - GRACE.width }]);
    const same = euclideanDistance(d, m);
    for (const [file, box] of OTHERS) {
      const [o] = await engine.describeFaces(await photo(file), [box]);
      expect(euclideanDistance(d, o), file).toBeGreaterThan(same);
    }
  });

  it('batches several faces to the same descriptors as one by one', async () => {
    const rgb = await photo('sample5.jpg');
    const boxes = OTHERS.filter(([f]) => f === 'sample5.jpg').map(([, b]) => b);
    const all = await engine.describeFaces(rgb, boxes);
    for (const [i, box] of boxes.entries()) {
      const [one] = await engine.describeFaces(rgb, [box]);
      expect(euclideanDistance(all[i], one)).toBeLessThan(1e-5);
    }
  });

  it('reports a missing faceres model as unavailable, with the file named', async () => {
    const broken = new NodeEmbeddingEngine({
      modelDir: MODEL_DIR,
      descriptor: 'faceres-1024',
      descriptorDir: path.join(root, 'no/such/dir'),
    });
    const status = await broken.load();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/faceres: cannot read faceres\.json/);
  });

  it('gives the same descriptor on another tfjs backend (CPU, in a worker thread) as on WASM', async () => {
    const rgb = await photo('astronaut.png');
    const [wasm] = await engine.describeFaces(rgb, [ASTRONAUT]);
    // The shared engine on face-api's tfjs with the CPU backend: what differs between hosts is only the backend.
    const engineUrl = new URL('../../../shared/embedding/engine.ts', import.meta.url).href;
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { readFile } = require('node:fs/promises');
      const path = require('node:path');
      import('tsx/esm/api').then(async ({ register }) => {
        register();
        const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js');
        await faceapi.tf.setBackend('cpu');
        await faceapi.tf.ready();
        const { createEmbeddingEngine } = await import(${JSON.stringify(engineUrl)});
        const engine = createEmbeddingEngine({
          faceapi,
          descriptor: 'faceres-1024',
          readModelFile: (n) => readFile(path.join(workerData.modelDir, n)),
          readDescriptorFile: (n) => readFile(path.join(workerData.modelDir, '..', n)),
        });
        const [face] = await engine.describe(workerData.image, [workerData.box]);
        parentPort.postMessage({ backend: faceapi.tf.getBackend(), descriptor: face.descriptor });
      }).catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));`;
    const result = await new Promise<{ backend: string; descriptor: Float32Array; error?: string }>((resolve, reject) => {
      const w = new Worker(source, { eval: true, workerData: { modelDir: MODEL_DIR, image: rgb, box: ASTRONAUT } });
      w.once('message', (m) => {
        void w.terminate();
        resolve(m);
      });
      w.once('error', reject);
    });
    expect(result.error).toBeUndefined();
    expect(result.backend).toBe('cpu');
    // Float rounding differs between backends; far below the distances that separate people (0.6 and up).
    expect(euclideanDistance(result.descriptor, wasm)).toBeLessThan(0.01);
  }, 120_000);
});
