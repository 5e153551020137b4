/**
 * The PPE server over real HTTP on 127.0.0.1, with tiny ONNX models whose YOLOv8 output is a known constant
 * (test/helpers/onnx-builder.ts): boxes mapped back through the letterbox, class names from the export's
 * metadata or from the operator, NMS, KServe V2, the states before and after loading, and the process's exit
 * codes for bad settings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inferResponse, modelMetadata } from '../../shared/kserve/protocol.js';
import { checkYoloSession } from '../../shared/objects/yolo-session.js';
import { decodeYoloBoxes, letterbox, yoloLayoutOf } from '../../shared/objects/yolo.js';
import { buildConstantOutputModel, yoloOutput, type YoloCandidate } from '../../test/helpers/onnx-builder.js';
import {
  ClassNamesError,
  listenPpeServer,
  parseClassNameList,
  parseUltralyticsNames,
  readOnnxMetadata,
  type PpeDetection,
  type PpeServerOptions,
  type RunningPpeServer,
} from './app.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLASSES = ['person', 'Hardhat', 'Safety Vest', 'NO-Goggles'];
/** Ultralytics writes `str(model.names)`. */
const NAMES_METADATA = "{0: 'person', 1: 'Hardhat', 2: 'Safety Vest', 3: 'NO-Goggles'}";
const SIZE = 320;

/**
 * Candidates in 320x320 input pixels. A 640x480 image is letterboxed at scale 0.5 to 320x240 with 40 rows of
 * padding above (round(40 - 0.1)) and none at the left, so image = (input - (0, 40)) / 0.5.
 */
const CANDIDATES: YoloCandidate[] = [
  // input (50, 80)-(150, 270) → image (100, 80)-(300, 460)
  { cx: 100, cy: 175, w: 100, h: 190, scores: { 0: 0.9, 2: 0.1 } },
  // input (75, 70)-(125, 110) → image (150, 60)-(250, 140)
  { cx: 100, cy: 90, w: 50, h: 40, scores: { 1: 0.8 } },
  // the same hardhat 2 input px to the right: IoU 48/52 = 0.92 with it, suppressed at IoU 0.45
  { cx: 102, cy: 90, w: 50, h: 40, scores: { 1: 0.6 } },
  // input (60, 140)-(140, 220) → image (120, 200)-(280, 360): overlaps the person, another class, kept
  { cx: 100, cy: 180, w: 80, h: 80, scores: { 2: 0.55, 0: 0.2 } },
  // input (200, 90)-(240, 120) → image (400, 100)-(480, 160)
  { cx: 220, cy: 105, w: 40, h: 30, scores: { 3: 0.3 } },
  // below the default 0.25
  { cx: 250, cy: 250, w: 20, h: 20, scores: { 0: 0.2 } },
  // input (290, 50)-(330, 70) → image (580, 20)-(660, 60), clipped to x2 = 640
  { cx: 310, cy: 60, w: 40, h: 20, scores: { 3: 0.7 } },
  // below the default 0.25 too; 9 candidates, so that [1, 8, 9] is no YOLOv5 [1, N, 5 + nc] for 3 or 4 classes
  { cx: 160, cy: 160, w: 10, h: 10, scores: { 1: 0.1 } },
  // no score; its cx reports the mean of the input (see GAIN), to show V2 infer runs the model on its input
  { cx: 0, cy: 0, w: 0, h: 0, scores: {} },
];
const OUTPUT = yoloOutput('v8', CANDIDATES, CLASSES.length);
const N = CANDIDATES.length;
/** Gain 1 on the last candidate's cx (row 0, column N - 1 of the [1, 8, N] output). */
const GAIN = OUTPUT.data.map((_, i) => (i === N - 1 ? 1 : 0));

const det = (class_id: number, confidence: number, x1: number, y1: number, x2: number, y2: number) => ({
  class_id,
  class_name: CLASSES[class_id],
  confidence,
  bbox: { x1, y1, x2, y2 },
});
const EXPECTED = [
  det(0, 0.9, 100, 80, 300, 460),
  det(1, 0.8, 150, 60, 250, 140),
  det(3, 0.7, 580, 20, 640, 60),
  det(2, 0.55, 120, 200, 280, 360),
  det(3, 0.3, 400, 100, 480, 160),
];

function expectDetections(actual: PpeDetection[], expected: ReturnType<typeof det>[]) {
  expect(actual.map(({ confidence: _c, ...rest }) => rest)).toEqual(expected.map(({ confidence: _c, ...rest }) => rest));
  // float32 model output
  actual.forEach((a, i) => {
    expect(a.confidence).toBeCloseTo(expected[i].confidence, 6);
  });
}

let dir: string;
let modelWithNames: string;
let modelWithoutNames: string;

async function jpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .jpeg()
    .toBuffer();
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lookout-ppe-'));
  const spec = { inputShape: [1, 3, SIZE, SIZE], output: OUTPUT, inputMeanGain: GAIN };
  modelWithNames = path.join(dir, 'ppe.onnx');
  modelWithoutNames = path.join(dir, 'plain.onnx');
  await writeFile(modelWithNames, buildConstantOutputModel({ ...spec, metadata: { names: NAMES_METADATA, task: 'detect' } }));
  await writeFile(modelWithoutNames, buildConstantOutputModel(spec));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('parseUltralyticsNames', () => {
  it("reads Ultralytics' str(names): a Python dict literal, in index order", () => {
    expect(parseUltralyticsNames(NAMES_METADATA)).toEqual(CLASSES);
    expect(
      parseUltralyticsNames(
        "{0: 'Hardhat', 1: 'Mask', 2: 'NO-Hardhat', 3: 'NO-Mask', 4: 'NO-Safety Vest', 5: 'Person', 6: 'Safety Cone', " +
          "7: 'Safety Vest', 8: 'machinery', 9: 'vehicle'}",
      ),
    ).toEqual([
      'Hardhat',
      'Mask',
      'NO-Hardhat',
      'NO-Mask',
      'NO-Safety Vest',
      'Person',
      'Safety Cone',
      'Safety Vest',
      'machinery',
      'vehicle',
    ]);
  });

  it('takes any spacing, key order, a trailing comma, both quotes and Python escapes', () => {
    expect(parseUltralyticsNames("  {\n  1 :'b' ,\t0:  'a',\n}  ")).toEqual(['a', 'b']);
    expect(parseUltralyticsNames(`{0: "worker's vest", 1: 'say "hi"', 2: 'it\\'s', 3: "a\\"b"}`)).toEqual([
      "worker's vest",
      'say "hi"',
      "it's",
      'a"b',
    ]);
    expect(parseUltralyticsNames("{0: 'back\\\\slash', 1: 'tab\\there', 2: '\\x41\\u00e9\\U0001F477', 3: 'café ⛑', 4: '\\101'}")).toEqual([
      'back\\slash',
      'tab\there',
      'Aé👷',
      'café ⛑',
      'A',
    ]);
    expect(parseUltralyticsNames("{0: 'kept \\q'}")).toEqual(['kept \\q']);
    expect(parseUltralyticsNames("{0: ''}")).toEqual(['']);
  });

  it('accepts a list literal and JSON', () => {
    expect(parseUltralyticsNames("['Hardhat', 'Mask']")).toEqual(['Hardhat', 'Mask']);
    expect(parseUltralyticsNames('{"0": "Hardhat", "1": "Mask"}')).toEqual(['Hardhat', 'Mask']);
  });

  it('refuses what is not a dict of indices 0 to n - 1', () => {
    expect(() => parseUltralyticsNames('Hardhat, Mask')).toThrow(ClassNamesError);
    expect(() => parseUltralyticsNames('{}')).toThrow(/empty/);
    expect(() => parseUltralyticsNames("{0: 'a', 2: 'b'}")).toThrow(/0 to 1; 1 is missing/);
    expect(() => parseUltralyticsNames("{0: 'a', 0: 'b'}")).toThrow(/twice/);
    expect(() => parseUltralyticsNames("{0: 'a'")).toThrow(/"," or "}"/);
    expect(() => parseUltralyticsNames("{0: 'a}")).toThrow(/closing '/);
    expect(() => parseUltralyticsNames("{0: 'a'} x")).toThrow(/the end/);
    expect(() => parseUltralyticsNames("{a: 'a'}")).toThrow(/class index/);
    expect(() => parseUltralyticsNames("{'x': 'a'}")).toThrow(/whole number/);
    expect(() => parseUltralyticsNames("{0: 'a' 1: 'b'}")).toThrow(ClassNamesError);
    expect(() => parseUltralyticsNames("{0: '\\x4'}")).toThrow(/hex digits/);
  });
});

describe('parseClassNameList (PPE_CLASS_NAMES)', () => {
  it('splits on commas and trims', () => {
    expect(parseClassNameList(' Hardhat,Safety Vest , NO-Goggles')).toEqual(['Hardhat', 'Safety Vest', 'NO-Goggles']);
    expect(() => parseClassNameList('a,,b')).toThrow(ClassNamesError);
    expect(() => parseClassNameList(' ')).toThrow(ClassNamesError);
  });
});

describe('readOnnxMetadata', () => {
  it('reads ModelProto.metadata_props, and nothing from a model without them', () => {
    const model = buildConstantOutputModel({
      inputShape: [1, 3, 8, 8],
      output: { dims: [1], data: [0] },
      metadata: { names: NAMES_METADATA, imgsz: '[8, 8]', ünï: 'cödé' },
    });
    expect(readOnnxMetadata(model)).toEqual({ names: NAMES_METADATA, imgsz: '[8, 8]', ünï: 'cödé' });
    expect(readOnnxMetadata(buildConstantOutputModel({ inputShape: [1, 3, 8, 8], output: { dims: [1], data: [0] } }))).toEqual({});
    expect(() => readOnnxMetadata(Uint8Array.of(0x72, 0x10, 1))).toThrow(/truncated/);
  });
});

describe('YOLO helpers with a class count other than COCO 80', () => {
  it('recognise and decode [1, 4 + nc, N] and [1, N, 5 + nc], COCO stays the default', () => {
    expect(yoloLayoutOf([1, 8, 2100], 4)).toBe('v8');
    expect(yoloLayoutOf(['batch', 'anchors', 9], 4)).toBe('v5');
    expect(() => yoloLayoutOf([1, 8, 2100])).toThrow(/\[1, 84, N\].*COCO/);
    expect(() => yoloLayoutOf([1, 84, 2100], 4)).toThrow(/\[1, 9\] \(YOLOv5|\[1, 8, N\] \(YOLOv8: cx, cy, w, h, 4 class scores\)/);
    const lb = letterbox(640, 480, SIZE, SIZE);
    for (const layout of ['v8', 'v5'] as const) {
      const out = yoloOutput(layout, CANDIDATES, 4);
      expect(decodeYoloBoxes(out.data, out.dims, lb, { numClasses: 4, confidence: 0.25, iou: 0.45 })).toEqual(
        EXPECTED.map((e) => ({
          class_id: e.class_id,
          confidence: e.confidence,
          x: e.bbox.x1,
          y: e.bbox.y1,
          w: e.bbox.x2 - e.bbox.x1,
          h: e.bbox.y2 - e.bbox.y1,
        })),
      );
    }
    const tensor = (name: string, shape: (number | string)[]) => ({ name, isTensor: true as const, type: 'float32', shape });
    const session = {
      inputNames: ['images'],
      inputMetadata: [tensor('images', [1, 3, 320, 320])],
      outputMetadata: [tensor('output0', [1, 8, 2100])],
    };
    expect(checkYoloSession(session, 'ppe.onnx', 640, 4)).toEqual({
      inputName: 'images',
      outputName: 'output0',
      width: 320,
      height: 320,
      layout: 'v8',
    });
    expect(() => checkYoloSession(session, 'ppe.onnx')).toThrow(/COCO/);
  });
});

describe('PPE server', () => {
  let srv: RunningPpeServer;
  const predict = (body: Uint8Array | string, headers: Record<string, string> = {}, server = srv) =>
    fetch(`${server.url}/v1/predict`, { method: 'POST', body, headers: { 'content-type': 'image/jpeg', ...headers } });
  const infer = (body: unknown, name = 'yolo-ppe') =>
    fetch(`${srv.url}/v2/models/${name}/infer`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
  const inputTensor = (value: number, over: Record<string, unknown> = {}) => ({
    name: 'images',
    shape: [1, 3, SIZE, SIZE],
    datatype: 'FP32',
    data: new Array(3 * SIZE * SIZE).fill(value),
    ...over,
  });

  beforeAll(async () => {
    srv = await listenPpeServer({ modelPath: modelWithNames });
    expect(await srv.server.loaded).toBe(true);
  });
  afterAll(async () => srv?.close());

  it('reads the class names from the export metadata', () => {
    expect(srv.server.info()).toEqual({
      file: 'ppe.onnx',
      classNames: CLASSES,
      classSource: 'metadata',
      inputName: 'images',
      outputName: 'output0',
      inputWidth: SIZE,
      inputHeight: SIZE,
      outputShape: [1, 8, N],
      layout: 'v8',
    });
  });

  it('finds the known boxes in a 640x480 JPEG, in its pixels, best first', async () => {
    const res = await predict(await jpeg(640, 480));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { detections: PpeDetection[]; count: number };
    expect(body.count).toBe(EXPECTED.length);
    expectDetections(body.detections, EXPECTED);
  });

  it('takes PNG and octet-stream bodies too', async () => {
    const png = await sharp(await jpeg(640, 480))
      .png()
      .toBuffer();
    for (const [body, type] of [
      [png, 'image/png'],
      [png, 'application/octet-stream'],
    ] as const) {
      const res = await predict(body, { 'content-type': type });
      expect(res.status, type).toBe(200);
      expectDetections(((await res.json()) as { detections: PpeDetection[] }).detections, EXPECTED);
    }
  });

  it('maps boxes through the letterbox of another image size', async () => {
    // 320x640 portrait: scale 0.5 → 160x320 with 80 columns of padding at the left (round(80 - 0.1)).
    const res = await predict(await jpeg(320, 640), { 'x-confidence': '0.85' });
    const { detections } = (await res.json()) as { detections: PpeDetection[] };
    // input (50, 80)-(150, 270) → image ((50 - 80) / 0.5 → 0, 160)-(140, 540)
    expectDetections(detections, [det(0, 0.9, 0, 160, 140, 540)]);
  });

  it('filters by X-Confidence (strictly above it)', async () => {
    const img = await jpeg(640, 480);
    const at = async (value: string) =>
      ((await (await predict(img, { 'x-confidence': value })).json()) as { detections: PpeDetection[] }).detections;
    expectDetections(await at('0.5'), EXPECTED.slice(0, 4));
    expectDetections(await at('0.85'), EXPECTED.slice(0, 1));
    expect(await at('1')).toEqual([]);
    for (const bad of ['high', '1.5', '-0.1', '']) {
      const res = await predict(img, { 'x-confidence': bad });
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/X-Confidence.*0 to 1/);
    }
  });

  it('merges duplicate boxes of a class by NMS at the configured IoU', async () => {
    const img = await jpeg(640, 480);
    // At IoU 0.45 the second hardhat (IoU 0.92) is gone (see the first test); at 0.95 it stays.
    const loose = await listenPpeServer({ modelPath: modelWithNames, iou: 0.95 });
    try {
      expect(await loose.server.loaded).toBe(true);
      const { detections } = (await (await predict(img, {}, loose)).json()) as { detections: PpeDetection[] };
      expectDetections(detections, [...EXPECTED.slice(0, 3), det(1, 0.6, 154, 60, 254, 140), ...EXPECTED.slice(3)]);
    } finally {
      await loose.close();
    }
  });

  it('refuses bodies that are not images with 400, other content types with 415', async () => {
    for (const [body, type] of [
      ['this is not a JPEG', 'image/jpeg'],
      [Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), 'image/jpeg'],
      ['', 'image/jpeg'],
      ['<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', 'application/octet-stream'],
    ] as const) {
      const res = await predict(body, { 'content-type': type });
      expect(res.status, String(body)).toBe(400);
      expect(typeof ((await res.json()) as { error: unknown }).error).toBe('string');
    }
    const res = await predict('{"image": "..."}', { 'content-type': 'application/json' });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: string }).error).toMatch(/image\/jpeg/);
  });

  it('answers /health and the V2 readiness and metadata', async () => {
    expect(await (await fetch(`${srv.url}/health`)).json()).toEqual({ status: 'ok', model: 'yolo-ppe', ready: true });
    for (const p of ['/v2/models/yolo-ppe/ready', '/v2/models/yolo-ppe/versions/1/ready']) {
      const res = await fetch(srv.url + p);
      expect(res.status, p).toBe(200);
      expect(await res.json()).toEqual({ name: 'yolo-ppe', ready: true });
    }
    expect((await fetch(`${srv.url}/v2/health/ready`)).status).toBe(200);
    const meta = await (await fetch(`${srv.url}/v2/models/yolo-ppe`)).json();
    expect(modelMetadata.parse(meta)).toEqual(meta);
    expect(meta).toEqual({
      name: 'yolo-ppe',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'images', datatype: 'FP32', shape: [1, 3, SIZE, SIZE] }],
      outputs: [{ name: 'output0', datatype: 'FP32', shape: [1, 8, N] }],
    });
    for (const p of ['/v2/models/other', '/v2/models/other/ready', '/v2/models/yolo-ppe/versions/2', '/nothing']) {
      const res = await fetch(srv.url + p);
      expect(res.status, p).toBe(404);
      expect(typeof ((await res.json()) as { error: unknown }).error).toBe('string');
    }
  });

  it('runs a V2 FP32 [1, 3, S, S] tensor and returns the raw output tensor', async () => {
    const res = await infer({ id: 'req-1', inputs: [inputTensor(0.25)], outputs: [{ name: 'output0' }] });
    expect(res.status).toBe(200);
    const body = inferResponse.parse(await res.json());
    const expected = [...OUTPUT.data];
    expected[N - 1] = 0.25; // the mean of the input, through the gain
    expect(body).toEqual({
      model_name: 'yolo-ppe',
      model_version: '1',
      id: 'req-1',
      outputs: [{ name: 'output0', datatype: 'FP32', shape: [1, 8, N], data: Array.from(Float32Array.from(expected)) }],
    });
    // Nested data, as the V2 protocol also allows.
    const nested = inputTensor(0.5, {
      data: [Array.from({ length: 3 }, () => Array.from({ length: SIZE }, () => new Array(SIZE).fill(0.5)))],
    });
    const second = inferResponse.parse(await (await infer({ inputs: [nested] })).json());
    expect(second.outputs[0].data[N - 1]).toBeCloseTo(0.5, 6);
  });

  it('refuses V2 requests that do not fit the model', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ inputs: [inputTensor(0, { shape: [1, 3, 640, 640] })] }, 400, /shape \[1, 3, 320, 320\]/],
      [{ inputs: [inputTensor(0, { datatype: 'UINT8' })] }, 400, /FP32/],
      [{ inputs: [inputTensor(0, { name: 'x' })] }, 400, /"images"/],
      [{ inputs: [inputTensor(0, { data: [1, 2, 3] })] }, 400, /307200 values/],
      [{ inputs: [inputTensor(0)], outputs: [{ name: 'nope' }] }, 400, /output "nope"/],
      [{ inputs: [] }, 400, /V2/],
      [{ nothing: true }, 400, /V2/],
    ];
    for (const [body, status, error] of cases) {
      const res = await infer(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
    }
    const notJson = await fetch(`${srv.url}/v2/models/yolo-ppe/infer`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    const other = await infer({ inputs: [inputTensor(0)] }, 'other');
    expect(other.status).toBe(404);
  });
});

describe('PPE server class names and loading', () => {
  const running: RunningPpeServer[] = [];
  const start = async (options: PpeServerOptions) => {
    const s = await listenPpeServer(options);
    running.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(running.map((s) => s.close()));
  });

  it('takes the class names from PPE_CLASS_NAMES over the metadata', async () => {
    const names = ['worker', 'helmet', 'vest', 'no goggles'];
    const s = await start({ modelPath: modelWithNames, classNames: names });
    expect(await s.server.loaded).toBe(true);
    expect(s.server.info()).toMatchObject({ classNames: names, classSource: 'options' });
    const res = await fetch(`${s.url}/v1/predict`, { method: 'POST', body: await jpeg(640, 480), headers: { 'x-confidence': '0.75' } });
    const { detections } = (await res.json()) as { detections: PpeDetection[] };
    expect(detections.map((d) => d.class_name)).toEqual(['worker', 'helmet']);
  });

  it('works from PPE_CLASS_NAMES for an export without names metadata', async () => {
    const s = await start({ modelPath: modelWithoutNames, classNames: CLASSES });
    expect(await s.server.loaded).toBe(true);
    const res = await fetch(`${s.url}/v1/predict`, {
      method: 'POST',
      body: await jpeg(640, 480),
      headers: { 'content-type': 'image/jpeg' },
    });
    expectDetections(((await res.json()) as { detections: PpeDetection[] }).detections, EXPECTED);
  });

  it('fails to load without class names, or with a count that does not fit the output; then answers 503', async () => {
    const none = await start({ modelPath: modelWithoutNames });
    expect(await none.server.loaded).toBe(false);
    expect(none.server.state()).toBe('FAILED');
    expect(none.server.failure()).toMatch(/no "names" metadata.*PPE_CLASS_NAMES/);

    const three = await start({ modelPath: modelWithNames, classNames: ['a', 'b', 'c'] });
    expect(await three.server.loaded).toBe(false);
    expect(three.server.failure()).toMatch(/\[1, 8, 9\].*\[1, 7, N\].*class count \(3\) comes from PPE_CLASS_NAMES/);

    const missing = await start({ modelPath: path.join(dir, 'missing.onnx') });
    expect(await missing.server.loaded).toBe(false);
    expect(missing.server.failure()).toMatch(/cannot read.*ENOENT/);

    const notOnnx = path.join(dir, 'not.onnx');
    await writeFile(notOnnx, 'not a model');
    const garbage = await start({ modelPath: notOnnx });
    expect(await garbage.server.loaded).toBe(false);
    expect(garbage.server.failure()).toMatch(/not a valid ONNX model/);

    const res = await fetch(`${none.url}/v1/predict`, {
      method: 'POST',
      body: await jpeg(64, 48),
      headers: { 'content-type': 'image/jpeg' },
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(/failed to load/);
    expect(await (await fetch(`${none.url}/health`)).json()).toEqual({ status: 'ok', model: 'yolo-ppe', ready: false });
    expect((await fetch(`${none.url}/v2/models/yolo-ppe/ready`)).status).toBe(503);
    expect((await fetch(`${none.url}/v2/models/yolo-ppe`)).status).toBe(503);
  });

  it('refuses a body over the limit with 413', async () => {
    const s = await start({ modelPath: modelWithNames, maxBodyBytes: 1024 });
    const res = await fetch(`${s.url}/v1/predict`, {
      method: 'POST',
      body: new Uint8Array(4096),
      headers: { 'content-type': 'image/jpeg' },
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'the request body is larger than 1024 bytes' });
  });

  it('answers 503 while the model loads, then serves it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const s = await start({
      modelPath: modelWithNames,
      modelName: 'ppe-slow',
      createSession: async (bytes) => {
        await gate;
        return ort.InferenceSession.create(bytes);
      },
    });
    expect(s.server.state()).toBe('LOADING');
    const img = await jpeg(640, 480);
    const early = await fetch(`${s.url}/v1/predict`, { method: 'POST', body: img, headers: { 'content-type': 'image/jpeg' } });
    expect(early.status).toBe(503);
    expect(((await early.json()) as { error: string }).error).toMatch(/ppe-slow is loading/);
    expect((await fetch(`${s.url}/v2/models/ppe-slow/ready`)).status).toBe(503);
    expect(await (await fetch(`${s.url}/health`)).json()).toEqual({ status: 'ok', model: 'ppe-slow', ready: false });
    release();
    expect(await s.server.loaded).toBe(true);
    const later = await fetch(`${s.url}/v1/predict`, { method: 'POST', body: img, headers: { 'content-type': 'image/jpeg' } });
    expect(later.status).toBe(200);
    expect((await fetch(`${s.url}/v2/models/ppe-slow/ready`)).status).toBe(200);
  });
});

describe('npm run ppe-server (the process)', () => {
  const MAIN = path.join(REPO_ROOT, 'server/ppe-server/main.ts');

  interface Run {
    /** null while it runs. */
    code: number | null;
    output: string;
    child: ChildProcess;
    exited: Promise<number | null>;
  }

  /** Runs main.ts until it exits (or its output matches `until`), with only the given environment. */
  function runMain(env: Record<string, string>, until?: RegExp): Promise<Run> {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return new Promise((resolve) => {
      const onData = (d: Buffer) => {
        output += d;
        if (until?.test(output)) resolve({ code: null, output, child, exited });
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => resolve({ code, output, child, exited }));
    });
  }

  it('refuses to start without a readable PPE_MODEL_PATH (exit 2)', async () => {
    const unset = await runMain({ PORT: '0' });
    expect(unset.code).toBe(2);
    expect(unset.output).toMatch(/PPE_MODEL_PATH: required/);
    expect(unset.output).toContain('not started');

    const missing = await runMain({ PORT: '0', PPE_MODEL_PATH: path.join(dir, 'missing.onnx') });
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/PPE_MODEL_PATH: cannot read .*missing\.onnx \(no such file\)/);

    const folder = await runMain({ PORT: '0', PPE_MODEL_PATH: dir });
    expect(folder.code).toBe(2);
    expect(folder.output).toMatch(/is not a file/);

    const bad = await runMain({ PORT: '0', PPE_MODEL_PATH: modelWithNames, PPE_CONFIDENCE: '2', PPE_CLASS_NAMES: 'a,,b' });
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/PPE_CONFIDENCE: must be a number from 0 to 1/);
    expect(bad.output).toMatch(/PPE_CLASS_NAMES/);
  });

  it('stops with exit 2 when the model cannot be served', async () => {
    const run = await runMain({ PORT: '0', PPE_MODEL_PATH: modelWithoutNames });
    expect(run.code).toBe(2);
    expect(run.output).toMatch(/no "names" metadata/);
    expect(run.output).toContain('The PPE server was stopped.');
  });

  it('serves the model and stops on SIGTERM', async () => {
    const run = await runMain({ PORT: '0', PPE_MODEL_PATH: modelWithNames }, /AVAILABLE/);
    try {
      expect(run.code, run.output).toBeNull();
      const url = /listening on (http:\/\/\S+),/.exec(run.output)?.[1];
      expect(url).toBeDefined();
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', model: 'yolo-ppe', ready: true });
      const res = await fetch(`${url}/v1/predict`, {
        method: 'POST',
        body: await jpeg(640, 480),
        headers: { 'content-type': 'image/jpeg' },
      });
      expectDetections(((await res.json()) as { detections: PpeDetection[] }).detections, EXPECTED);
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });
});
