/**
 * Object detection over real HTTP on the real test photos. The expected objects and their rough boxes were
 * written down by looking at the images (as fractions of width and height), not taken from a run of the code.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64 } from '../helpers/faces.js';
import { getJson, postJson, readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';

interface Obj {
  class_id: number;
  class_name: string;
  confidence: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A box drawn by eye: [x, y, w, h] as fractions of the image. */
type HandBox = [number, number, number, number];

const EXPECTED: Record<string, { class_name: string; box: HandBox }[]> = {
  'objects/chelsea.png': [{ class_name: 'cat', box: [0, 0, 0.85, 1] }],
  'objects/motorcycle_left.png': [{ class_name: 'motorbike', box: [0.15, 0.2, 0.78, 0.72] }],
  'objects/pexels_double_decker_bus.jpg': [{ class_name: 'bus', box: [0.115, 0.275, 0.75, 0.66] }],
  'objects/basketball1.png': [
    { class_name: 'person', box: [35 / 640, 80 / 480, 125 / 640, 400 / 480] },
    { class_name: 'person', box: [435 / 640, 20 / 480, 205 / 640, 460 / 480] },
  ],
  'objects/fruits.jpg': [{ class_name: 'orange', box: [0.146, 0.09, 0.54, 0.9] }],
  'faces/grace_hopper.jpg': [{ class_name: 'person', box: [0, 0, 1, 1] }],
  'faces/astronaut.png': [{ class_name: 'person', box: [0, 0, 1, 1] }],
};

function iou(a: { x: number; y: number; w: number; h: number }, b: { x: number; y: number; w: number; h: number }): number {
  const ix = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
  const iy = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
  const inter = ix * iy;
  return inter / (a.w * a.h + b.w * b.h - inter);
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function detect(rel: string, confidence?: number) {
  return postJson(`${server.url}/api/objects/detect`, {
    image: base64(await readTestImage(rel)),
    ...(confidence === undefined ? {} : { confidence }),
  });
}

describe('POST /api/objects/detect', () => {
  it.each(Object.entries(EXPECTED))('%s: finds what a person sees there', async (rel, expected) => {
    const { status, body } = await detect(rel);
    expect(status).toBe(200);
    const meta = await sharp(await readTestImage(rel)).metadata();
    const W = meta.width!;
    const H = meta.height!;
    for (const want of expected) {
      const hand = { x: want.box[0] * W, y: want.box[1] * H, w: want.box[2] * W, h: want.box[3] * H };
      const found = (body.objects as Obj[]).filter((o) => o.class_name === want.class_name);
      const best = Math.max(0, ...found.map((o) => iou(o, hand)));
      expect(best, `${want.class_name} in ${rel}: got ${JSON.stringify(body.objects)}`).toBeGreaterThanOrEqual(0.3);
    }
    for (const o of body.objects as Obj[]) {
      expect(o.confidence).toBeGreaterThan(0.4);
      expect(Number.isInteger(o.x) && Number.isInteger(o.y) && Number.isInteger(o.w) && Number.isInteger(o.h)).toBe(true);
      expect(o.x).toBeGreaterThanOrEqual(0);
      expect(o.y).toBeGreaterThanOrEqual(0);
      expect(o.x + o.w).toBeLessThanOrEqual(W);
      expect(o.y + o.h).toBeLessThanOrEqual(H);
    }
  });

  // NanoDet scores the espresso cup 0.28 (right box) under "diningtable" 0.54: found only below the default 0.4.
  it('objects/coffee.png: the cup, when the request lowers the confidence to 0.25', async () => {
    const { body } = await detect('objects/coffee.png', 0.25);
    const hand = { x: 0.28 * 600, y: 0.03 * 400, w: 0.4 * 600, h: 0.69 * 400 };
    const cups = (body.objects as Obj[]).filter((o) => o.class_name === 'cup');
    expect(Math.max(0, ...cups.map((o) => iou(o, hand))), JSON.stringify(body.objects)).toBeGreaterThanOrEqual(0.3);
  });

  // negatives/coins.png is not here: NanoDet sees ~15 "clock"/"bowl" boxes at 0.40-0.57 in it (a known miss,
  // pinned by an it.fails test in server/engines/object-detector-node.test.ts).
  it.each(['negatives/brick.png'])('%s: nothing, as an empty result with count 0', async (rel) => {
    const { status, body } = await detect(rel);
    expect(status).toBe(200);
    expect(body).toEqual({ objects: [], count: 0, summary: {} });
  });

  it('summary counts equal the objects list, and NMS leaves no same-class pair above IoU 0.4', async () => {
    for (const rel of ['faces/sample5.jpg', 'objects/pexels_double_decker_bus.jpg', 'objects/fruits.jpg']) {
      const { body } = await detect(rel, 0.2);
      const counts: Record<string, number> = {};
      for (const o of body.objects as Obj[]) counts[o.class_name] = (counts[o.class_name] ?? 0) + 1;
      expect(body.summary).toEqual(counts);
      expect(body.count).toBe(body.objects.length);
      const objs = body.objects as Obj[];
      for (let i = 0; i < objs.length; i++) {
        for (let j = i + 1; j < objs.length; j++) {
          if (objs[i].class_name === objs[j].class_name) expect(iou(objs[i], objs[j])).toBeLessThanOrEqual(0.4);
        }
      }
    }
  });

  it('a request confidence raises or lowers the threshold', async () => {
    const low = (await detect('faces/sample5.jpg', 0.2)).body as { objects: Obj[] };
    const high = (await detect('faces/sample5.jpg', 0.8)).body as { objects: Obj[] };
    expect(low.objects.length).toBeGreaterThanOrEqual(high.objects.length);
    expect(low.objects.every((o) => o.confidence > 0.2)).toBe(true);
    expect(high.objects.every((o) => o.confidence > 0.8)).toBe(true);
  });

  it('bad input is a clear 4xx', async () => {
    const bad = await postJson(`${server.url}/api/objects/detect`, { image: 'not base64!' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_image');
    const badConfidence = await postJson(`${server.url}/api/objects/detect`, {
      image: base64(await readTestImage('objects/coffee.png')),
      confidence: 2,
    });
    expect(badConfidence.status).toBe(400);
    expect(badConfidence.body.error.message).toContain('confidence');
    const notImage = await postJson(`${server.url}/api/objects/detect`, { image: Buffer.from('plain text').toString('base64') });
    expect(notImage.status).toBe(400);
    const missing = await postJson(`${server.url}/api/objects/detect`, {});
    expect(missing.status).toBe(400);
  });
});

describe('classes and status', () => {
  it('GET /api/objects/classes lists the 80 classes in the spec spellings', async () => {
    const { status, body } = await getJson(`${server.url}/api/objects/classes`);
    expect(status).toBe(200);
    expect(body.count).toBe(80);
    expect(new Set(body.classes).size).toBe(80);
    for (const name of [
      'aeroplane',
      'motorbike',
      'sofa',
      'pottedplant',
      'diningtable',
      'tvmonitor',
      'person',
      'hair drier',
      'toothbrush',
    ]) {
      expect(body.classes).toContain(name);
    }
    expect(body.detector_name).toBe('nanodet');
    expect(body.detector).toMatchObject({ name: 'nanodet', available: true, classes_count: 80 });
  });

  it('GET /api/objects/status and /api/ready report the loaded detector', async () => {
    const { body } = await getJson(`${server.url}/api/objects/status`);
    expect(body).toMatchObject({
      name: 'nanodet',
      available: true,
      state: 'ready',
      input_size: 416,
      classes: 80,
      confidence_threshold: 0.4,
    });
    expect(body.load_ms).toBeGreaterThan(0);
    expect((await getJson(`${server.url}/api/ready`)).body).toMatchObject({ object_detection_state: 'ready', object_detection: true });
  });
});

describe('detector switched off or broken', () => {
  it('answers 503 with the reason, and bad input is still a 400', async () => {
    const off = await startTestServer({ OBJECT_DETECTION_ENABLED: 'false' });
    try {
      const res = await postJson(`${off.url}/api/objects/detect`, { image: base64(await readTestImage('objects/coffee.png')) });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('detector_unavailable');
      expect(res.body.error.message).toMatch(/OBJECT_DETECTION_ENABLED/);
      expect((await getJson(`${off.url}/api/ready`)).body).toMatchObject({
        object_detection_state: 'unavailable',
        object_detection: false,
      });
    } finally {
      await off.close();
    }
  });

  it('a missing YOLO file is reported with the reason, not a crash', async () => {
    const broken = await startTestServer({ OBJECT_MODEL: 'missing-yolo.onnx' });
    try {
      const res = await postJson(`${broken.url}/api/objects/detect`, { image: base64(await readTestImage('objects/coffee.png')) });
      expect(res.status).toBe(503);
      expect(res.body.error.message).toMatch(/missing-yolo\.onnx/);
      const status = await getJson(`${broken.url}/api/objects/status`);
      expect(status.body).toMatchObject({ available: false, state: 'error' });
      expect((await getJson(`${broken.url}/api/ready`)).body).toMatchObject({ object_detection_state: 'error', object_detection: false });
    } finally {
      await broken.close();
    }
  });
});

describe('an operator-supplied YOLO ONNX model (OBJECT_MODEL)', () => {
  it('is loaded from public/models/ and runs through onnxruntime with the same contract', async () => {
    const { buildConstantOutputModel, yoloOutput } = await import('../helpers/onnx-builder.js');
    const { writeFile, rm } = await import('node:fs/promises');
    const { REPO_ROOT } = await import('../helpers/test-server.js');
    const path = await import('node:path');
    // A YOLOv8-layout model built by the test: whatever the input, a person at input pixels (156..260, 182..234)
    // of the 416x416 letterbox, which is (120..200, 80..120) in a 320x200 image (scale 1.3, 78 px of padding).
    const output = yoloOutput('v8', [{ cx: 208, cy: 208, w: 104, h: 52, scores: { 0: 0.9 } }]);
    const name = `.test-yolo-${process.pid}.onnx`;
    const file = path.join(REPO_ROOT, 'public/models', name);
    await writeFile(file, buildConstantOutputModel({ inputShape: [1, 3, 416, 416], output: { dims: output.dims, data: output.data } }));
    const yolo = await startTestServer({ OBJECT_MODEL: name });
    try {
      const image = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#808080' } })
        .png()
        .toBuffer();
      const { status, body } = await postJson(`${yolo.url}/api/objects/detect`, { image: base64(image) });
      expect(status).toBe(200);
      expect(body.count).toBe(1);
      expect(body.objects[0]).toMatchObject({ class_id: 0, class_name: 'person', x: 120, y: 80, w: 80, h: 40 });
      expect(body.summary).toEqual({ person: 1 });
      const objectStatus = await getJson(`${yolo.url}/api/objects/status`);
      expect(objectStatus.body).toMatchObject({ name, runtime: 'onnxruntime-node', input_size: 416, available: true });
      expect((await getJson(`${yolo.url}/api/objects/classes`)).body.detector_name).toBe(name);
    } finally {
      await yolo.close();
      await rm(file, { force: true });
    }
  });
});
