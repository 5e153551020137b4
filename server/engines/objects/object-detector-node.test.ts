/**
 * NanoDet on the real test images. Expected objects and their boxes were written down by looking at the
 * images (hand-drawn boxes, x/y/w/h in the image's pixels), not taken from a run of the detector.
 */
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RgbImage } from '../../../shared/image/types.js';
import { iou, type BoxLike } from '../../../shared/objects/nms.js';
import { summarize, type DetectedObject } from '../../../shared/objects/types.js';
import { NodeObjectDetector, ObjectDetectorUnavailableError } from './object-detector-node.js';
import { defaultThreads, type ObjectOps, type ObjectWorkerData } from './object-protocol.js';
import { WorkerPool } from '../workers/worker-pool.js';

const root = process.cwd();
const MODEL_DIR = path.join(root, 'public/models');
const DATA = path.resolve(root, 'test/fixtures/images');

async function load(file: string): Promise<RgbImage> {
  // Grey images (basketball1, the negatives) come out as 3 equal channels.
  const { data, info } = await sharp(path.join(DATA, file)).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    channels: info.channels as 3,
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
  };
}

interface Expected {
  cls: string;
  box: [number, number, number, number];
  /** Set where NanoDet scores the object at or under 0.4: the confidence it is found at instead. */
  foundAt?: number;
}

const box = ([x, y, w, h]: [number, number, number, number]): BoxLike => ({ x, y, w, h });

/** Overlaps the hand-drawn box: IoU >= 0.3, or most of the smaller box inside the other. */
function overlaps(d: BoxLike, truth: BoxLike): boolean {
  const ix = Math.min(d.x + d.w, truth.x + truth.w) - Math.max(d.x, truth.x);
  const iy = Math.min(d.y + d.h, truth.y + truth.h) - Math.max(d.y, truth.y);
  const inter = ix > 0 && iy > 0 ? ix * iy : 0;
  return iou(d, truth) >= 0.3 || inter >= 0.8 * Math.min(d.w * d.h, truth.w * truth.h);
}

/** Pairs each expected object with its own detection (one detection serves one object), or reports misses. */
function unmatched(found: DetectedObject[], expected: Expected[]): string[] {
  const used = new Set<DetectedObject>();
  const misses: string[] = [];
  for (const e of expected) {
    const truth = box(e.box);
    const best = found
      .filter((d) => d.class_name === e.cls && !used.has(d) && overlaps(d, truth))
      .sort((a, b) => iou(b, truth) - iou(a, truth))[0];
    if (best) used.add(best);
    else misses.push(`${e.cls} at ${e.box.join(',')}`);
  }
  return misses;
}

const describeFound = (found: DetectedObject[]) =>
  found.map((o) => `${o.class_name} ${o.confidence} [${o.x},${o.y},${o.w},${o.h}]`).join('; ');

const CASES: Record<string, Expected[]> = {
  'objects/coffee.png': [{ cls: 'cup', box: [172, 18, 238, 287], foundAt: 0.25 }],
  'objects/chelsea.png': [{ cls: 'cat', box: [0, 0, 451, 300] }],
  'objects/motorcycle_left.png': [{ cls: 'motorbike', box: [95, 85, 590, 367] }],
  'objects/fruits.jpg': [{ cls: 'orange', box: [75, 42, 270, 433] }],
  'objects/basketball1.png': [
    { cls: 'person', box: [35, 80, 130, 400] },
    { cls: 'person', box: [435, 22, 205, 458] },
  ],
  'objects/pexels_double_decker_bus.jpg': [
    { cls: 'bus', box: [65, 112, 410, 276] },
    { cls: 'car', box: [5, 287, 63, 43] },
    { cls: 'car', box: [455, 280, 91, 110] },
    { cls: 'person', box: [515, 283, 25, 32] },
  ],
  'faces/astronaut.png': [{ cls: 'person', box: [20, 15, 345, 497] }],
  'faces/grace_hopper.jpg': [{ cls: 'person', box: [10, 25, 502, 575] }],
  'faces/messi5.jpg': [
    { cls: 'person', box: [68, 60, 389, 275] },
    { cls: 'sports ball', box: [337, 289, 50, 47] },
  ],
  'faces/sample1.jpg': [
    { cls: 'person', box: [164, 214, 615, 1066] },
    { cls: 'person', box: [736, 314, 514, 966] },
    // The woman on the right scores about 0.4, either side of it with sub-pixel changes to the input.
    { cls: 'person', box: [1229, 179, 600, 1101], foundAt: 0.3 },
    { cls: 'wine glass', box: [274, 1019, 145, 261] },
  ],
  'faces/sample2.jpg': [
    { cls: 'person', box: [22, 41, 880, 1326] },
    { cls: 'person', box: [806, 77, 518, 1290] },
    { cls: 'person', box: [1168, 37, 710, 1330] },
    { cls: 'cell phone', box: [71, 1250, 232, 96] },
  ],
  'faces/sample5.jpg': [
    { cls: 'person', box: [82, 805, 634, 593] },
    { cls: 'person', box: [395, 328, 544, 1070] },
    { cls: 'person', box: [708, 42, 388, 1151] },
    { cls: 'person', box: [999, 157, 469, 976] },
    { cls: 'person', box: [932, 276, 909, 1122] },
  ],
};

describe('NodeObjectDetector (NanoDet, onnxruntime-node)', () => {
  const detector = new NodeObjectDetector({ modelDir: MODEL_DIR });
  const results = new Map<string, DetectedObject[]>();

  beforeAll(async () => {
    const status = await detector.load();
    expect(status, status.reason).toMatchObject({
      available: true,
      name: 'nanodet',
      runtime: 'onnxruntime-node',
      inputSize: 416,
      classes: 80,
    });
    for (const file of [...Object.keys(CASES), 'negatives/brick.png', 'negatives/coins.png']) {
      results.set(file, await detector.detect(await load(file)));
    }
  });
  afterAll(() => detector.dispose());

  it('describes itself for the status endpoint', () => {
    expect(detector.describe()).toMatchObject({
      name: 'nanodet',
      runtime: 'onnxruntime-node',
      inputSize: 416,
      classes: 80,
      available: true,
    });
    expect(detector.describe().loadMs).toBeGreaterThan(0);
  });

  for (const [file, expected] of Object.entries(CASES)) {
    const sure = expected.filter((e) => e.foundAt === undefined);
    it(`${file}: finds ${sure.map((e) => e.cls).join(', ')} above 0.4, each overlapping its object`, () => {
      const found = results.get(file)!;
      expect(unmatched(found, sure), describeFound(found)).toEqual([]);
    });
    for (const e of expected.filter((x) => x.foundAt !== undefined)) {
      it(`${file}: finds the ${e.cls} only when asked for confidence ${e.foundAt}`, async () => {
        const found = await detector.detect(await load(file), { confidence: e.foundAt });
        expect(unmatched(found, [e]), describeFound(found)).toEqual([]);
      });
    }
  }

  it('finds nothing on the brick wall', () => {
    expect(results.get('negatives/brick.png')).toEqual([]);
  });

  // Known miss: NanoDet calls the grey coins clocks and bowls (about 15 boxes, scores 0.40-0.57).
  it.fails('finds nothing on the coins', () => {
    expect(results.get('negatives/coins.png')).toEqual([]);
  });

  // Known miss: the basketball held against the player's hands is scored as part of a person, not as a ball.
  it.fails('objects/basketball1.png: finds the sports ball', async () => {
    const found = await detector.detect(await load('objects/basketball1.png'), { confidence: 0.2 });
    expect(unmatched(found, [{ cls: 'sports ball', box: [120, 92, 62, 63] }])).toEqual([]);
  });

  it('returns integer boxes inside the image, confidences in (0.4, 1], best first, summary = list', async () => {
    for (const [file, found] of results) {
      const img = await sharp(path.join(DATA, file)).metadata();
      const counts: Record<string, number> = {};
      found.forEach((o, i) => {
        expect(Number.isInteger(o.x) && Number.isInteger(o.y) && Number.isInteger(o.w) && Number.isInteger(o.h)).toBe(true);
        expect(o.x).toBeGreaterThanOrEqual(0);
        expect(o.y).toBeGreaterThanOrEqual(0);
        expect(o.w).toBeGreaterThan(0);
        expect(o.h).toBeGreaterThan(0);
        expect(o.x + o.w).toBeLessThanOrEqual(img.width!);
        expect(o.y + o.h).toBeLessThanOrEqual(img.height!);
        expect(o.confidence).toBeGreaterThan(0.4);
        expect(o.confidence).toBeLessThanOrEqual(1);
        if (i > 0) expect(o.confidence).toBeLessThanOrEqual(found[i - 1].confidence);
        counts[o.class_name] = (counts[o.class_name] ?? 0) + 1;
      });
      const summary = summarize(found);
      expect(summary).toEqual(counts);
      expect(Object.values(summary).reduce((a, b) => a + b, 0)).toBe(found.length);
    }
  });

  it('leaves no two boxes of one class above the NMS IoU, at the default and at other thresholds', async () => {
    const check = (found: DetectedObject[], t: number) => {
      for (let i = 0; i < found.length; i++) {
        for (let j = i + 1; j < found.length; j++) {
          if (found[i].class_id === found[j].class_id) expect(iou(found[i], found[j])).toBeLessThanOrEqual(t);
        }
      }
    };
    for (const found of results.values()) check(found, 0.4);
    const crowd = await load('faces/sample5.jpg');
    for (const t of [0.2, 0.6]) check(await detector.detect(crowd, { confidence: 0.1, iou: t }), t);
  });

  it('raises and lowers the threshold per request', async () => {
    const bus = await load('objects/pexels_double_decker_bus.jpg');
    const low = await detector.detect(bus, { confidence: 0.2 });
    const high = await detector.detect(bus, { confidence: 0.8 });
    expect(low.length).toBeGreaterThan(results.get('objects/pexels_double_decker_bus.jpg')!.length);
    expect(high.map((o) => o.class_name)).toEqual(['bus']);
    expect(await detector.detect(bus, { confidence: 1 })).toEqual([]);
    await expect(detector.detect(bus, { confidence: 1.2 })).rejects.toThrow(RangeError);
  });

  it('reports a missing model as unavailable, with the reason, instead of throwing', async () => {
    const broken = new NodeObjectDetector({ modelDir: path.join(root, 'no-such-models') });
    const status = await broken.load();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/nanodet\.json/);
    await expect(broken.detect(await load('objects/chelsea.png'))).rejects.toBeInstanceOf(ObjectDetectorUnavailableError);
  });
});

describe('object worker (WorkerPool)', () => {
  let pool: WorkerPool<ObjectOps>;
  afterAll(async () => pool?.close());

  it('loads NanoDet in its own thread (its default onnxruntime threads) and detects', async () => {
    const data: ObjectWorkerData = { model: { kind: 'nanodet', dir: MODEL_DIR } };
    pool = new WorkerPool<ObjectOps>({ name: 'object', script: 'objects/object-worker', data, size: 1 });
    const status = await pool.run('status', undefined);
    expect(status).toMatchObject({
      available: true,
      info: { name: 'nanodet', runtime: 'onnxruntime-node', inputSize: 416, classes: 80, threads: defaultThreads() },
    });
    const rgb = await load('objects/pexels_double_decker_bus.jpg');
    const result = await pool.run('detect', { rgb, confidence: 0.5 }, [rgb.data.buffer as ArrayBuffer]);
    expect(result.objects.map((o) => o.class_name).sort()).toEqual(['bus', 'car', 'car', 'person']);
    await expect(pool.run('detect', { rgb: await load('objects/chelsea.png'), iou: 2 })).rejects.toThrow(/iou/);
  });
});
