import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RgbImage } from '../../../shared/image/types.js';
import { buildConstantOutputModel, yoloOutput, type ConstantOutputModel, type YoloCandidate } from '../../../test/helpers/onnx-builder.js';
import { YoloOnnxDetector, YoloUnavailableError } from './yolo-onnx-node.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lookout-yolo-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function modelFile(name: string, spec: ConstantOutputModel | Uint8Array): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, spec instanceof Uint8Array ? spec : buildConstantOutputModel(spec));
  return file;
}

function gray(width: number, height: number, value: number): RgbImage {
  return { width, height, channels: 3, data: new Uint8Array(width * height * 3).fill(value) };
}

/**
 * Candidates in 416x416 input pixels for a 320x200 image: scale 1.3, image rows 78..338 of the input.
 * Expected boxes in image pixels are worked out by hand in the comments.
 */
const CANDIDATES: YoloCandidate[] = [
  // (156..260, 182..234) → x 120..200, y (182-78)/1.3 = 80 .. 120
  { cx: 208, cy: 208, w: 104, h: 52, scores: { 0: 0.9 } },
  // the same person shifted 4 image px right: IoU 0.9 with the first, suppressed
  { cx: 213.2, cy: 208, w: 104, h: 52, scores: { 0: 0.8 } },
  // the first box as a car: other class, kept
  { cx: 208, cy: 208, w: 104, h: 52, scores: { 2: 0.7 } },
  // clipped: x -10..50 → 0..38 (38.46), y 70..110 → 0..25 (24.6)
  { cx: 20, cy: 90, w: 60, h: 40, scores: { 16: 0.6 } },
  // below the threshold
  { cx: 300, cy: 300, w: 40, h: 40, scores: { 5: 0.39 } },
  // in the padding above the image: nothing left after clipping
  { cx: 208, cy: 30, w: 100, h: 20, scores: { 0: 0.95 } },
];

const EXPECTED = [
  { class_id: 0, class_name: 'person', confidence: 0.9, x: 120, y: 80, w: 80, h: 40 },
  { class_id: 2, class_name: 'car', confidence: 0.7, x: 120, y: 80, w: 80, h: 40 },
  { class_id: 16, class_name: 'dog', confidence: 0.6, x: 0, y: 0, w: 38, h: 25 },
];

function expectObjects(actual: unknown[], expected: typeof EXPECTED) {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((a, i) => {
    const { confidence, ...rest } = expected[i];
    expect(a).toMatchObject(rest);
    // float32 model output
    expect((a as { confidence: number }).confidence).toBeCloseTo(confidence, 6);
  });
}

describe('YoloOnnxDetector (onnxruntime-node)', () => {
  for (const layout of ['v8', 'v5'] as const) {
    it(`runs a YOLO${layout} output layout end to end, boxes in the image's pixels`, async () => {
      const file = await modelFile(`yolo${layout}.onnx`, { inputShape: [1, 3, 416, 416], output: yoloOutput(layout, CANDIDATES) });
      const detector = new YoloOnnxDetector({ modelPath: file });
      const status = await detector.load();
      expect(status).toMatchObject({ available: true });
      expect(status.loadMs).toBeGreaterThanOrEqual(0);
      expect(detector.describe()).toEqual({
        name: `yolo${layout}.onnx`,
        runtime: 'onnxruntime-node',
        inputSize: 416,
        inputWidth: 416,
        inputHeight: 416,
        classes: 80,
        layout,
      });
      expectObjects(await detector.detect(gray(320, 200, 90)), EXPECTED);
      // Per-request thresholds.
      expectObjects(await detector.detect(gray(320, 200, 90), { confidence: 0.3 }), [
        EXPECTED[0],
        EXPECTED[1],
        EXPECTED[2],
        { class_id: 5, class_name: 'bus', confidence: 0.39, x: 215, y: 155, w: 31, h: 31 },
      ]);
      expect(await detector.detect(gray(320, 200, 90), { iou: 0.95 })).toHaveLength(4);
      await detector.dispose();
    });
  }

  it('feeds the model the letterboxed image (114 padding, RGB / 255)', async () => {
    // One v8 candidate whose person score is the mean of the input tensor. A small input keeps onnxruntime's
    // float32 sum close to the exact mean.
    const out = yoloOutput('v8', [{ cx: 32, cy: 32, w: 16, h: 8, scores: { 0: 0 } }]);
    const gain = out.data.map((_, i) => (i === 4 ? 1 : 0)); // attribute 4 (class 0) of the only candidate
    const file = await modelFile('mean.onnx', { inputShape: [1, 3, 64, 64], output: out, inputMeanGain: gain });
    const detector = new YoloOnnxDetector({ modelPath: file });
    // 40x25 white, scale 1.6 → 64x40 of 255 and 64x24 of 114.
    const [white] = await detector.detect(gray(40, 25, 255));
    expect(white.confidence).toBeCloseTo((40 * 255 + 24 * 114) / (64 * 255), 5);
    // Dark image: the mean falls below the threshold.
    expect(await detector.detect(gray(40, 25, 0))).toEqual([]);
    await detector.dispose();
  });

  it('uses the configured input size when the model declares symbolic dimensions', async () => {
    // 640 input: scale 2, image rows 120..520. Box (240..400, 280..360) → x 120..200, y 80..120.
    const output = yoloOutput('v8', [{ cx: 320, cy: 320, w: 160, h: 80, scores: { 0: 0.9 } }]);
    const file = await modelFile('dynamic.onnx', {
      inputShape: ['batch', 3, 'height', 'width'],
      output,
      declaredOutputShape: ['batch', 84, 'anchors'],
    });
    const detector = new YoloOnnxDetector({ modelPath: file, defaultInputSize: 640 });
    expect(await detector.load()).toMatchObject({ available: true });
    expect(detector.describe()).toMatchObject({ inputSize: 640, layout: 'v8' });
    expectObjects(await detector.detect(gray(320, 200, 90)), [EXPECTED[0]]);
    await detector.dispose();

    const byDefault = new YoloOnnxDetector({ modelPath: file });
    await byDefault.load();
    expect(byDefault.describe().inputSize).toBe(416);
    await byDefault.dispose();
  });

  it('reports a missing file', async () => {
    const file = path.join(dir, 'yolov8n.onnx');
    const detector = new YoloOnnxDetector({ modelPath: file });
    const status = await detector.load();
    expect(status.available).toBe(false);
    expect(status.reason).toContain('not found');
    expect(status.reason).toContain(file);
    await expect(detector.detect(gray(8, 8, 0))).rejects.toThrow(YoloUnavailableError);
    expect(detector.describe()).toMatchObject({ name: 'yolov8n.onnx', inputSize: 416, classes: 80 });
  });

  it('reports a file that is not an ONNX model', async () => {
    const file = await modelFile('garbage.onnx', new TextEncoder().encode('<html>404 Not Found</html>\n'));
    const status = await new YoloOnnxDetector({ modelPath: file }).load();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/garbage\.onnx is not a valid ONNX model \(onnxruntime: .+\)/);
  });

  it('reports an output of the wrong rank, saying what was found and what is supported', async () => {
    const file = await modelFile('flat.onnx', { inputShape: [1, 3, 416, 416], output: { dims: [1, 850], data: new Array(850).fill(0) } });
    const status = await new YoloOnnxDetector({ modelPath: file }).load();
    expect(status.available).toBe(false);
    expect(status.reason).toContain('flat.onnx: unsupported YOLO output');
    expect(status.reason).toContain('"output0" float32 [1, 850]');
    expect(status.reason).toContain('[1, N, 85]');
    expect(status.reason).toContain('[1, 84, N]');
  });

  it('reports a model that is not for 80 COCO classes', async () => {
    const file = await modelFile('custom.onnx', {
      inputShape: [1, 3, 416, 416],
      output: { dims: [1, 6, 10], data: new Array(60).fill(0) },
    });
    const status = await new YoloOnnxDetector({ modelPath: file }).load();
    expect(status.available).toBe(false);
    expect(status.reason).toContain('[1, 6, 10]');
  });

  it('reports an input that is not one RGB image', async () => {
    const file = await modelFile('gray.onnx', { inputShape: [1, 1, 416, 416], output: yoloOutput('v8', CANDIDATES) });
    const status = await new YoloOnnxDetector({ modelPath: file }).load();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(/gray\.onnx: input "images".*\[1, 1, 416, 416\].*\[1, 3, H, W\]/);
  });
});
