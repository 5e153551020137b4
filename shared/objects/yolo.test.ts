import { describe, expect, it } from 'vitest';
import { yoloOutput, type YoloCandidate } from '../../test/helpers/onnx-builder.js';
import type { RgbImage } from '../image/types.js';
import { OBJECT_CLASSES } from './classes.js';
import { YoloModelError, decodeYolo, letterbox, resolveYoloInputSize, yoloLayoutOf, yoloPreprocess, type Letterbox } from './yolo.js';

/** A 320x200 image in a 416x416 input: scale 1.3, resized to 416x260, 78 rows of padding above. */
const WIDE = letterbox(320, 200, 416, 416);

/** Image-pixel corners → the input-pixel candidate a model would report for them. */
function candidateFor(
  box: { x: number; y: number; w: number; h: number },
  lb: Letterbox,
  scores: Record<number, number>,
  objectness?: number,
): YoloCandidate {
  const x1 = box.x * lb.scale + lb.padX;
  const y1 = box.y * lb.scale + lb.padY;
  const w = box.w * lb.scale;
  const h = box.h * lb.scale;
  return { cx: x1 + w / 2, cy: y1 + h / 2, w, h, scores, objectness };
}

function uniform(width: number, height: number, rgb: [number, number, number], channels: 3 | 4 = 3): RgbImage {
  const data = new Uint8Array(width * height * channels);
  for (let i = 0; i < width * height; i++) {
    data.set(channels === 4 ? [...rgb, 7] : rgb, i * channels);
  }
  return { width, height, channels, data };
}

describe('letterbox', () => {
  it('scales to fit and centres, as Ultralytics LetterBox does', () => {
    expect(WIDE).toMatchObject({ scale: 1.3, resizedWidth: 416, resizedHeight: 260, padX: 0, padY: 78 });
    expect(letterbox(100, 200, 416, 416)).toMatchObject({ scale: 2.08, resizedWidth: 208, resizedHeight: 416, padX: 104, padY: 0 });
    // Odd padding: 159 rows split 79 above, 80 below (round(79.5 - 0.1)).
    expect(letterbox(640, 481, 640, 640)).toMatchObject({ scale: 1, resizedHeight: 481, padY: 79 });
    // Non-square model input.
    expect(letterbox(1280, 720, 640, 384)).toMatchObject({ scale: 0.5, resizedWidth: 640, resizedHeight: 360, padX: 0, padY: 12 });
  });

  it('fills NCHW RGB planes with the image and 114 padding, scaled to 0..1', () => {
    const img = uniform(4, 2, [10, 20, 30]);
    const { data, dims, letterbox: lb } = yoloPreprocess(img, 8, 8);
    expect(dims).toEqual([1, 3, 8, 8]);
    expect(lb).toMatchObject({ scale: 2, resizedWidth: 8, resizedHeight: 4, padX: 0, padY: 2 });
    const at = (c: number, y: number, x: number) => data[c * 64 + y * 8 + x];
    for (const c of [0, 1, 2]) {
      for (const y of [0, 1, 6, 7]) expect(at(c, y, 3)).toBeCloseTo(114 / 255, 6);
      for (const y of [2, 3, 4, 5]) expect(at(c, y, 5)).toBeCloseTo([10, 20, 30][c] / 255, 6);
    }
  });

  it('drops alpha', () => {
    const { data } = yoloPreprocess(uniform(2, 2, [200, 100, 50], 4), 2, 2);
    expect(Array.from(data, (v) => Math.round(v * 255))).toEqual([200, 200, 200, 200, 100, 100, 100, 100, 50, 50, 50, 50]);
  });
});

describe('layouts', () => {
  it('tells YOLOv5 from YOLOv8 by the output shape', () => {
    expect(yoloLayoutOf([1, 25200, 85])).toBe('v5');
    expect(yoloLayoutOf([1, 84, 8400])).toBe('v8');
    expect(yoloLayoutOf(['batch', 'anchors', 85])).toBe('v5');
    expect(yoloLayoutOf(['batch', 84, 'anchors'])).toBe('v8');
    expect(yoloLayoutOf([1, 'a', 'b'])).toBeUndefined();
    expect(yoloLayoutOf([])).toBeUndefined();
  });

  it('rejects other shapes, saying what was found and what is supported', () => {
    expect(() => yoloLayoutOf([1, 8500])).toThrow(YoloModelError);
    expect(() => yoloLayoutOf([1, 8500])).toThrow(/\[1, 8500\].*\[1, N, 85\].*\[1, 84, N\]/);
    expect(() => yoloLayoutOf([1, 6, 8400])).toThrow(/\[1, 6, 8400\]/); // a 2-class custom model
    expect(() => yoloLayoutOf([2, 84, 8400])).toThrow(YoloModelError);
  });

  it('reads the input size from the model, falling back for symbolic dims', () => {
    expect(resolveYoloInputSize([1, 3, 640, 640])).toEqual({ width: 640, height: 640 });
    expect(resolveYoloInputSize([1, 3, 384, 640])).toEqual({ width: 640, height: 384 });
    expect(resolveYoloInputSize(['batch', 3, 'height', 'width'])).toEqual({ width: 416, height: 416 });
    expect(resolveYoloInputSize(['batch', 3, 'height', 'width'], 640)).toEqual({ width: 640, height: 640 });
    expect(resolveYoloInputSize([-1, 3, -1, -1], 320)).toEqual({ width: 320, height: 320 });
    expect(() => resolveYoloInputSize([1, 1, 640, 640])).toThrow(/\[1, 1, 640, 640\].*\[1, 3, H, W\]/);
    expect(() => resolveYoloInputSize([1, 640, 640, 3])).toThrow(YoloModelError);
    expect(() => resolveYoloInputSize([1, 3, 640])).toThrow(YoloModelError);
  });
});

describe('decodeYolo', () => {
  const person = { x: 120, y: 80, w: 80, h: 40 };
  const dog = { x: 10, y: 100, w: 50, h: 60 };

  for (const layout of ['v5', 'v8'] as const) {
    it(`${layout}: maps boxes back into the image's pixels with class names`, () => {
      const out = yoloOutput(layout, [candidateFor(person, WIDE, { 0: 0.9 }), candidateFor(dog, WIDE, { 16: 0.6, 15: 0.5 })]);
      const objects = decodeYolo(out.data, out.dims, WIDE);
      expect(objects).toEqual([
        { class_id: 0, class_name: OBJECT_CLASSES[0], confidence: 0.9, ...person },
        { class_id: 16, class_name: OBJECT_CLASSES[16], confidence: 0.6, ...dog },
      ]);
      expect(objects.map((o) => o.class_name)).toEqual(['person', 'dog']);
    });

    it(`${layout}: round-trips boxes through the letterbox`, () => {
      for (const lb of [WIDE, letterbox(100, 200, 416, 416), letterbox(641, 479, 640, 640), letterbox(1920, 1080, 416, 416)]) {
        const boxes = [
          { x: 0, y: 0, w: Math.floor(lb.srcWidth / 3), h: Math.floor(lb.srcHeight / 4) },
          { x: Math.floor(lb.srcWidth / 2), y: Math.floor(lb.srcHeight / 2), w: 20, h: 30 },
        ];
        const out = yoloOutput(
          layout,
          boxes.map((b, i) => candidateFor(b, lb, { [i + 1]: 0.8 - i * 0.1 })),
        );
        expect(decodeYolo(out.data, out.dims, lb).map(({ x, y, w, h }) => ({ x, y, w, h }))).toEqual(boxes);
      }
    });

    it(`${layout}: applies per-class NMS`, () => {
      const shifted = { ...person, x: person.x + 4 }; // IoU 76/84 with `person`
      const apart = { ...person, x: person.x + 60 }; // IoU 20/140
      const out = yoloOutput(layout, [
        candidateFor(shifted, WIDE, { 0: 0.8 }),
        candidateFor(person, WIDE, { 0: 0.9 }),
        candidateFor(person, WIDE, { 2: 0.7 }), // same box, other class: kept
        candidateFor(apart, WIDE, { 0: 0.5 }),
      ]);
      expect(decodeYolo(out.data, out.dims, WIDE).map((o) => [o.class_id, o.confidence, o.x])).toEqual([
        [0, 0.9, person.x],
        [2, 0.7, person.x],
        [0, 0.5, apart.x],
      ]);
      // A looser IoU threshold keeps the overlapping box too.
      expect(decodeYolo(out.data, out.dims, WIDE, { iou: 0.95 })).toHaveLength(4);
    });

    it(`${layout}: keeps confidence strictly above the threshold`, () => {
      const out = yoloOutput(layout, [
        candidateFor(person, WIDE, { 0: 0.4 }),
        candidateFor(dog, WIDE, { 1: 0.41 }),
        candidateFor({ x: 200, y: 10, w: 30, h: 30 }, WIDE, { 5: 0.3 }),
      ]);
      expect(decodeYolo(out.data, out.dims, WIDE).map((o) => o.class_id)).toEqual([1]);
      expect(decodeYolo(out.data, out.dims, WIDE, { confidence: 0.25 }).map((o) => o.class_id)).toEqual([1, 0, 5]);
      expect(decodeYolo(out.data, out.dims, WIDE, { confidence: 0.25, maxDetections: 2 })).toHaveLength(2);
    });

    it(`${layout}: clips to the image and drops boxes that fall in the padding`, () => {
      const out = yoloOutput(layout, [
        { cx: 20, cy: 90, w: 60, h: 40, scores: { 16: 0.6 } }, // pokes out left and into the top padding
        { cx: 208, cy: 30, w: 100, h: 20, scores: { 0: 0.95 } }, // entirely in the top padding
      ]);
      // x: -10 → 0, 50 / 1.3 = 38.5 → 38; y: (70 - 78) → 0, (110 - 78) / 1.3 = 24.6 → 25.
      expect(decodeYolo(out.data, out.dims, WIDE)).toEqual([
        { class_id: 16, class_name: OBJECT_CLASSES[16], confidence: 0.6, x: 0, y: 0, w: 38, h: 25 },
      ]);
    });
  }

  it('v5: scores are objectness times class score', () => {
    const out = yoloOutput('v5', [
      candidateFor(person, WIDE, { 0: 1 }, 0.9),
      candidateFor(dog, WIDE, { 16: 0.3 }, 0.9), // 0.27
      candidateFor({ x: 200, y: 10, w: 30, h: 30 }, WIDE, { 3: 0.9 }, 0.5), // 0.45
      candidateFor({ x: 250, y: 100, w: 30, h: 30 }, WIDE, { 4: 1 }, 0.3), // objectness alone below 0.4
    ]);
    const objects = decodeYolo(out.data, out.dims, WIDE);
    expect(objects.map((o) => o.class_id)).toEqual([0, 3]);
    expect(objects[0].confidence).toBeCloseTo(0.9, 12);
    expect(objects[1].confidence).toBeCloseTo(0.45, 12);
  });

  it('names classes with Darknet spellings, in COCO order', () => {
    const boxes = [3, 4, 57, 58, 60, 62, 79].map((cls, i) =>
      candidateFor({ x: i * 40, y: 10, w: 30, h: 30 }, WIDE, { [cls]: 0.9 - i * 0.01 }),
    );
    const out = yoloOutput('v8', boxes);
    expect(decodeYolo(out.data, out.dims, WIDE).map((o) => o.class_name)).toEqual([
      'motorbike',
      'aeroplane',
      'sofa',
      'pottedplant',
      'diningtable',
      'tvmonitor',
      'toothbrush',
    ]);
  });

  it('returns nothing for an empty output', () => {
    expect(decodeYolo([], [1, 0, 85], WIDE)).toEqual([]);
    expect(decodeYolo(new Float32Array(0), [1, 84, 0], WIDE)).toEqual([]);
  });

  it('rejects outputs whose data does not match the shape or whose shape is unsupported', () => {
    expect(() => decodeYolo(new Float32Array(84 * 3), [1, 84, 4], WIDE)).toThrow(YoloModelError);
    expect(() => decodeYolo(new Float32Array(8500), [1, 8500], WIDE)).toThrow(/\[1, 8500\]/);
  });
});
