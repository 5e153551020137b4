import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { predictEmbedding, trainEmbedding, euclideanDistance, type EmbeddingSample } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { rgbToGray } from '../../../shared/image/ops.js';
import { decide, DEFAULT_EMBEDDING_WINDOW } from '../../../shared/recognition/confidence.js';
import { detectMultiScale, parseHaarCascade } from '../../../shared/vision/haar-cascade.js';
import { exactFaceApiDetection } from '../../../bench/face-api-reference.js';
import { NodeEmbeddingEngine } from './embedding-node.js';

const root = process.cwd();
const MODEL_DIR = path.join(root, 'public/models/face-api');
const FACES = path.resolve(root, 'test/fixtures/images/faces');
const require = createRequire(import.meta.url);

const cascade = parseHaarCascade(readFileSync(path.join(root, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
const haar = (rgb: RgbImage): Rect[] =>
  detectMultiScale(cascade, rgbToGray(rgb), { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } });

async function toRgb(img: Sharp): Promise<RgbImage> {
  const { data, info } = await img.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}
const photo = (file: string) => toRgb(sharp(path.join(FACES, file)));

function iou(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / (a.width * a.height + b.width * b.height - w * h);
}

/** The Haar box that best overlaps where the face should be (a photo may hold other, false, detections). */
function faceNear(boxes: Rect[], expected: Rect, what: string): Rect {
  const best = boxes.reduce<Rect | undefined>((b, r) => (!b || iou(r, expected) > iou(b, expected) ? r : b), undefined);
  if (!best || iou(best, expected) < 0.3)
    throw new Error(`${what}: no Haar box near ${JSON.stringify(expected)} in ${JSON.stringify(boxes)}`);
  return best;
}

// Single-face photos with their Haar boxes (haarcascade_frontalface_alt2, the product's defaults).
const PEOPLE = ['grace_hopper.jpg', 'astronaut.png', 'messi5.jpg'] as const;
const HAAR_BOX: Record<(typeof PEOPLE)[number], Rect> = {
  'grace_hopper.jpg': { x: 145, y: 99, width: 239, height: 239 },
  'astronaut.png': { x: 177, y: 66, width: 97, height: 97 },
  'messi5.jpg': { x: 225, y: 92, width: 41, height: 41 },
};
// Real faces of other people in the group photos (Haar boxes; its false positives on these photos left out).
const OTHERS: [string, Rect][] = [
  ['sample1.jpg', { x: 364, y: 363, width: 244, height: 244 }],
  ['sample2.jpg', { x: 889, y: 261, width: 198, height: 198 }],
  ['sample5.jpg', { x: 639, y: 454, width: 164, height: 164 }],
  ['sample5.jpg', { x: 1089, y: 217, width: 187, height: 187 }],
  ['sample5.jpg', { x: 783, y: 122, width: 199, height: 199 }],
  ['sample5.jpg', { x: 354, y: 891, width: 244, height: 244 }],
  ['sample5.jpg', { x: 1359, y: 409, width: 244, height: 244 }],
];

interface Variant {
  name: string;
  image: (file: string, w: number, h: number) => Sharp | Promise<Sharp>;
  /** Where the original face box lands in the variant. */
  box: (b: Rect, w: number, h: number) => Rect;
  /** Whether the variant suits a face of this box (the cascade finds no face under 30 px). */
  applies?: (b: Rect) => boolean;
}
const scale = (b: Rect, s: number): Rect => ({ x: b.x * s, y: b.y * s, width: b.width * s, height: b.height * s });
const VARIANTS: Variant[] = [
  { name: 'flip', image: (f) => sharp(f).flop(), box: (b, w) => ({ ...b, x: w - b.x - b.width }) },
  { name: 'dark', image: (f) => sharp(f).linear(0.6, 0), box: (b) => b },
  { name: 'bright', image: (f) => sharp(f).linear(1.3, 20), box: (b) => b },
  { name: 'x0.75', image: (f, w) => sharp(f).resize(Math.round(w * 0.75)), box: (b) => scale(b, 0.75), applies: (b) => b.width >= 60 },
  { name: 'x1.5', image: (f, w) => sharp(f).resize(Math.round(w * 1.5)), box: (b) => scale(b, 1.5) },
  {
    name: 'shift',
    image: (f, w, h) =>
      sharp(f).extract({ left: Math.round(w * 0.06), top: Math.round(h * 0.04), width: Math.round(w * 0.9), height: Math.round(h * 0.92) }),
    box: (b, w, h) => ({ ...b, x: b.x - Math.round(w * 0.06), y: b.y - Math.round(h * 0.04) }),
  },
  { name: 'jpeg50', image: async (f) => sharp(await sharp(f).jpeg({ quality: 50 }).toBuffer()), box: (b) => b },
];

const engine = new NodeEmbeddingEngine({ modelDir: MODEL_DIR });

beforeAll(async () => {
  const status = await engine.load();
  expect(status.reason).toBeUndefined();
});
afterAll(() => engine.dispose());

describe('NodeEmbeddingEngine: loading', () => {
  it('loads on the WASM backend and reports its load time', async () => {
    const status = await engine.load();
    expect(status).toMatchObject({ available: true, backend: 'wasm', versions: { faceapi: '1.7.15', tfjs: '4.22.0' } });
    expect(status.loadMs).toBeGreaterThan(0);
    expect(engine.availability).toBe(status);
    expect(await engine.load()).toBe(status); // once
    // Emscripten's rethrowing process handlers were taken back off.
    expect(process.listeners('unhandledRejection').some((l) => /throw reason/.test(String(l)))).toBe(false);
  });

  it('reports a missing model folder as unavailable, with the reason, and describeFaces rejects with it', async () => {
    const broken = new NodeEmbeddingEngine({ modelDir: path.join(root, 'no/such/dir') });
    const status = await broken.load();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/face_landmark_68_model|face_recognition_model/);
    expect(status.reason).toMatch(/cannot read .*weights_manifest\.json/);
    const rgb = await photo('messi5.jpg');
    await expect(broken.describeFaces(rgb, [HAAR_BOX['messi5.jpg']])).rejects.toThrow(/embedding recognizer unavailable: .*cannot read/);
  });

  it('returns nothing for no boxes, and one 128-d descriptor per box in order', async () => {
    const rgb = await photo('sample5.jpg');
    expect(await engine.describeFaces(rgb, [])).toEqual([]);
    const boxes = OTHERS.filter(([f]) => f === 'sample5.jpg').map(([, b]) => b);
    const together = await engine.describeFaces(rgb, boxes);
    expect(together).toHaveLength(boxes.length);
    for (const [i, b] of boxes.entries()) {
      const [alone] = await engine.describeFaces(rgb, [b]);
      expect(alone).toHaveLength(128);
      expect(euclideanDistance(alone, together[i])).toBeLessThan(1e-5);
    }
  });

  it('takes gray and RGBA images', async () => {
    const rgb = await photo('grace_hopper.jpg');
    const box = HAAR_BOX['grace_hopper.jpg'];
    const [fromRgb] = await engine.describeFaces(rgb, [box]);
    const rgba = new Uint8Array(rgb.width * rgb.height * 4);
    for (let i = 0; i < rgb.width * rgb.height; i++) rgba.set([...rgb.data.subarray(3 * i, 3 * i + 3), 255], 4 * i);
    const [fromRgba] = await engine.describeFaces({ ...rgb, channels: 4, data: rgba }, [box]);
    expect(euclideanDistance(fromRgb, fromRgba)).toBe(0);
    const [fromGray] = await engine.describeFaces(rgbToGray(rgb), [box]);
    // Gray loses colour but not identity.
    expect(euclideanDistance(fromRgb, fromGray)).toBeLessThan(0.3);
  });
});

describe('NodeEmbeddingEngine: agreement with face-api', () => {
  // face-api's own node-wasm bundle: the same instance (and backend) the engine runs on in this thread.
  type FaceApi = any; // eslint-disable-line @typescript-eslint/no-explicit-any
  let faceapi: FaceApi;

  beforeAll(async () => {
    faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js');
    await faceapi.nets.faceLandmark68Net.loadFromDisk(MODEL_DIR);
    await faceapi.nets.faceRecognitionNet.loadFromDisk(MODEL_DIR);
    // The SSD detector is not shipped with Lookout; the reference takes it from the package.
    await faceapi.nets.ssdMobilenetv1.loadFromDisk(path.join(root, 'node_modules/@vladmandic/face-api/model'));
  });

  const exactDetection = (box: Rect, width: number, height: number) => exactFaceApiDetection(faceapi, box, width, height);

  it("equals face-api's withFaceLandmarks().withFaceDescriptor() for the same Haar box", async () => {
    const figures: string[] = [];
    const cases: [string, Promise<RgbImage>, readonly Rect[]][] = [
      ...PEOPLE.map((p) => [p, photo(p), [HAAR_BOX[p]]] as [string, Promise<RgbImage>, Rect[]]),
      // A batch of two (the second a Haar false positive: agreement does not depend on a real face).
      ['sample1.jpg', photo('sample1.jpg'), [OTHERS[0][1], { x: 1472, y: 574, width: 126, height: 126 }]],
      // A face cut by the top edge: the aligned box is clamped there, where face-api's crop limit applies.
      [
        'grace_hopper.jpg cut',
        toRgb(sharp(path.join(FACES, 'grace_hopper.jpg')).extract({ left: 0, top: 130, width: 512, height: 470 })),
        [{ x: 145, y: 0, width: 239, height: 208 }],
      ],
    ];
    for (const [file, image, boxes] of cases) {
      const rgb = await image;
      const ours = await engine.describeFacesDetailed(rgb, boxes);
      const img = faceapi.tf.tensor3d(rgb.data, [rgb.height, rgb.width, 3], 'int32');
      try {
        for (const [i, box] of boxes.entries()) {
          const parent = Promise.resolve({ detection: exactDetection(box, rgb.width, rgb.height) });
          const ref = await new faceapi.DetectSingleFaceLandmarksTask(parent, img, false).withFaceDescriptor();
          const refLandmarks = ref.landmarks.positions.flatMap((p: { x: number; y: number }) => [p.x, p.y]);
          expect(Array.from(ours[i].landmarks)).toEqual(refLandmarks);
          const aligned = ref.landmarks.align(null, { useDlibAlignment: true });
          expect(ours[i].alignedBox).toEqual({ x: aligned.x, y: aligned.y, width: aligned.width, height: aligned.height });
          const d = euclideanDistance(ours[i].descriptor, ref.descriptor);
          figures.push(`${file}#${i} ${d}`);
          expect(d).toBeLessThan(1e-5);
        }
      } finally {
        img.dispose();
      }
    }
    console.log(`descriptor distance to face-api, same box: ${figures.join(', ')}`);
  });

  it("is close to face-api's detectSingleFace (SSD) pipeline given its detection box", async () => {
    const figures: string[] = [];
    for (const file of PEOPLE) {
      const rgb = await photo(file);
      const img = faceapi.tf.tensor3d(rgb.data, [rgb.height, rgb.width, 3], 'int32');
      try {
        const ref = await faceapi.detectSingleFace(img).withFaceLandmarks().withFaceDescriptor();
        expect(ref).toBeDefined();
        const { x, y, width, height } = ref.detection.box;
        const [ours] = await engine.describeFacesDetailed(rgb, [{ x, y, width, height }]);
        // face-api crops the floored box but shifts landmarks by the unfloored one (up to 1 px off); Lookout
        // shifts by the crop it used, so fractional SSD boxes give slightly different aligned crops.
        const d = euclideanDistance(ours.descriptor, ref.descriptor);
        figures.push(`${file} ${d.toFixed(4)}`);
        expect(d).toBeLessThan(0.1);
        // Flooring the SSD box first removes that difference: then the pipelines agree exactly.
        const floored = {
          x: Math.floor(x),
          y: Math.floor(y),
          width: Math.floor(x + width) - Math.floor(x),
          height: Math.floor(y + height) - Math.floor(y),
        };
        const [oursFloored] = await engine.describeFacesDetailed(rgb, [floored]);
        const parent = Promise.resolve({ detection: exactDetection(floored, rgb.width, rgb.height) });
        const refFloored = await new faceapi.DetectSingleFaceLandmarksTask(parent, img, false).withFaceDescriptor();
        expect(euclideanDistance(oursFloored.descriptor, refFloored.descriptor)).toBeLessThan(1e-5);
      } finally {
        img.dispose();
      }
    }
    console.log(`descriptor distance to face-api SSD pipeline: ${figures.join(', ')}`);
  });
});

describe('NodeEmbeddingEngine: identity', () => {
  const enrolled: EmbeddingSample[] = [];
  const variants = new Map<string, { name: string; descriptor: Float32Array }[]>();
  const others: { name: string; descriptor: Float32Array }[] = [];

  beforeAll(async () => {
    for (const [label, file] of PEOPLE.entries()) {
      const full = path.join(FACES, file);
      const rgb = await photo(file);
      const [d] = await engine.describeFaces(rgb, [HAAR_BOX[file]]);
      enrolled.push({ label, descriptor: d });
      const list: { name: string; descriptor: Float32Array }[] = [];
      for (const v of VARIANTS) {
        if (v.applies && !v.applies(HAAR_BOX[file])) continue;
        const img = await toRgb(await v.image(full, rgb.width, rgb.height));
        const box = faceNear(haar(img), v.box(HAAR_BOX[file], rgb.width, rgb.height), `${file} ${v.name}`);
        const [vd] = await engine.describeFaces(img, [box]);
        list.push({ name: v.name, descriptor: vd });
      }
      variants.set(file, list);
    }
    const cache = new Map<string, RgbImage>();
    for (const [file, box] of OTHERS) {
      if (!cache.has(file)) cache.set(file, await photo(file));
      const [d] = await engine.describeFaces(cache.get(file)!, [box]);
      others.push({ name: `${file}@${box.x},${box.y}`, descriptor: d });
    }
  }, 120_000);

  it('recognises each person across flips, lighting, rescales, shifts and JPEG loss (distance <= 0.6)', () => {
    const model = trainEmbedding(enrolled);
    const seen: string[] = [];
    for (const [label, file] of PEOPLE.entries()) {
      for (const v of variants.get(file)!) {
        const p = predictEmbedding(model, v.descriptor);
        seen.push(`${file} ${v.name} ${p.distance.toFixed(3)}`);
        expect(p.label, `${file} ${v.name}`).toBe(label);
        expect(decide(p.distance, DEFAULT_EMBEDDING_WINDOW).known, `${file} ${v.name} at ${p.distance}`).toBe(true);
      }
    }
    console.log(`genuine distances: ${seen.join(', ')}`);
  });

  it('calls other people unknown (nearest distance > 0.6)', () => {
    const model = trainEmbedding(enrolled);
    const seen: string[] = [];
    for (const o of others) {
      const p = predictEmbedding(model, o.descriptor);
      seen.push(`${o.name} ${p.distance.toFixed(3)}`);
      expect(decide(p.distance, DEFAULT_EMBEDDING_WINDOW).known, `${o.name} at ${p.distance} to label ${p.label}`).toBe(false);
    }
    // Leave one out: each enrolled person, and all their variants, against a model of the other two.
    for (const [label, file] of PEOPLE.entries()) {
      const rest = trainEmbedding(enrolled.filter((s) => s.label !== label));
      for (const v of [{ name: 'orig', descriptor: enrolled[label].descriptor as Float32Array }, ...variants.get(file)!]) {
        const p = predictEmbedding(rest, v.descriptor);
        seen.push(`${file}/${v.name} ${p.distance.toFixed(3)}`);
        expect(decide(p.distance, DEFAULT_EMBEDDING_WINDOW).known, `${file} ${v.name} at ${p.distance}`).toBe(false);
      }
    }
    console.log(`impostor nearest distances: ${seen.join(', ')}`);
  });

  it('enrols a face from a group photo and finds it again, mirrored', async () => {
    const rgb = await photo('sample1.jpg');
    const flipped = await toRgb(sharp(path.join(FACES, 'sample1.jpg')).flop());
    const box = OTHERS[0][1];
    const mirrored = faceNear(haar(flipped), { ...box, x: rgb.width - box.x - box.width }, 'sample1 flipped');
    const model = trainEmbedding([...enrolled, { label: 7, descriptor: others[0].descriptor }]);
    const [d] = await engine.describeFaces(flipped, [mirrored]);
    const p = predictEmbedding(model, d);
    console.log(`group face, mirrored: distance ${p.distance.toFixed(3)}`);
    expect(p.label).toBe(7);
    expect(p.distance).toBeLessThanOrEqual(0.6);
  });
});

describe('NodeEmbeddingEngine: worker threads', () => {
  it('loads and describes inside a worker thread, matching the main thread', async () => {
    const rgb = await photo('astronaut.png');
    const box = HAAR_BOX['astronaut.png'];
    const [main] = await engine.describeFaces(rgb, [box]);
    // Same bootstrap as the vision pool uses for TypeScript sources: register tsx in the worker, then import.
    const entry = new URL('./embedding-node.ts', import.meta.url).href;
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      import('tsx/esm/api').then(async ({ register }) => {
        register();
        const { NodeEmbeddingEngine } = await import(${JSON.stringify(entry)});
        const engine = new NodeEmbeddingEngine({ modelDir: workerData.modelDir });
        const status = await engine.load();
        const out = status.available ? await engine.describeFaces(workerData.image, [workerData.box]) : [];
        parentPort.postMessage({ status, descriptor: out[0] });
      }).catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));`;
    const runWorker = () =>
      new Promise<{ status: { available: boolean; backend?: string }; descriptor: Float32Array; error?: string }>((resolve, reject) => {
        const w = new Worker(source, { eval: true, workerData: { modelDir: MODEL_DIR, image: rgb, box } });
        w.once('message', (m) => {
          void w.terminate();
          resolve(m);
        });
        w.once('error', reject);
      });
    // Two at once: each thread has its own tfjs and backend.
    const results = await Promise.all([runWorker(), runWorker()]);
    for (const r of results) {
      expect(r.error).toBeUndefined();
      expect(r.status).toMatchObject({ available: true, backend: 'wasm' });
      expect(euclideanDistance(r.descriptor, main)).toBe(0);
    }
  });
});
