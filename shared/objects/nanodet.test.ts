import { describe, expect, it } from 'vitest';
import type { RgbImage } from '../image/types.js';
import { iou } from './nms.js';
import {
  createNanoDetRunner,
  decodeNanoDet,
  letterboxFor,
  nanoDetLevels,
  preprocessNanoDet,
  tfjsForward,
  type GraphModelLike,
  type NanoDetForward,
  type NanoDetLevel,
  type TensorLike,
  type TfLike,
} from './nanodet.js';

const SIZE = 416;
const BINS = 11;

/** Empty raw outputs for the three strides: scores 0 and flat box logits. */
function emptyLevels(): (NanoDetLevel & { scores: Float32Array; boxes: Float32Array })[] {
  return [8, 16, 32].map((stride) => {
    const cells = (SIZE / stride) ** 2;
    return { stride, scores: new Float32Array(cells * 80), boxes: new Float32Array(cells * 4 * BINS) };
  });
}

/** Puts a detection of `cls` at grid cell (gx, gy) of level `li`, with side distances given in bins. */
function plant(levels: ReturnType<typeof emptyLevels>, li: number, gx: number, gy: number, cls: number, score: number, sides: number[]) {
  const lv = levels[li];
  const grid = SIZE / lv.stride;
  const cell = gy * grid + gx;
  lv.scores[cell * 80 + cls] = score;
  sides.forEach((bin, side) => {
    // A sharply peaked distribution, so the expected value is the bin itself.
    for (let i = 0; i < BINS; i++) lv.boxes[cell * 4 * BINS + side * BINS + i] = i === bin ? 30 : 0;
  });
}

const square = letterboxFor(SIZE, SIZE);

describe('letterboxFor', () => {
  it('fits the long side and centres the short one', () => {
    const lb = letterboxFor(832, 416);
    expect(lb.scale).toBe(0.5);
    expect(lb.padX).toBe(0);
    expect(lb.padY).toBe(104);
    expect(letterboxFor(100, 200)).toMatchObject({ scale: 2.08, padX: 104, padY: 0 });
    expect(() => letterboxFor(0, 10)).toThrow(RangeError);
  });
});

describe('preprocessNanoDet', () => {
  it('writes NCHW planes in BGR order with NanoDet mean/std, black padding outside the image', () => {
    // 208x104 of one colour: scale 2, rows 104..311 hold the image.
    const img: RgbImage = { width: 208, height: 104, channels: 3, data: new Uint8Array(208 * 104 * 3) };
    for (let i = 0; i < 208 * 104; i++) img.data.set([200, 100, 50], i * 3);
    const { data, letterbox } = preprocessNanoDet(img);
    expect(data).toHaveLength(3 * SIZE * SIZE);
    expect(letterbox).toMatchObject({ scale: 2, padX: 0, padY: 104 });
    const at = (c: number, y: number, x: number) => data[c * SIZE * SIZE + y * SIZE + x];
    expect(at(0, 200, 200)).toBeCloseTo((50 - 103.53) / 57.375, 5); // B
    expect(at(1, 200, 200)).toBeCloseTo((100 - 116.28) / 57.12, 5); // G
    expect(at(2, 200, 200)).toBeCloseTo((200 - 123.675) / 58.395, 5); // R
    expect(at(0, 10, 10)).toBeCloseTo(-103.53 / 57.375, 5);
    expect(at(2, 400, 300)).toBeCloseTo(-123.675 / 58.395, 5);
  });

  it('writes the same values interleaved (NHWC) when asked, for the server rewritten graph', () => {
    const img: RgbImage = { width: 37, height: 23, channels: 3, data: new Uint8Array(37 * 23 * 3) };
    for (let i = 0; i < img.data.length; i++) img.data[i] = (i * 53) % 256;
    const nchw = preprocessNanoDet(img).data;
    const nhwc = preprocessNanoDet(img, SIZE, undefined, 'nhwc').data;
    const plane = SIZE * SIZE;
    let diffs = 0;
    for (let o = 0; o < plane; o++) for (let c = 0; c < 3; c++) if (nhwc[o * 3 + c] !== nchw[c * plane + o]) diffs++;
    expect(diffs).toBe(0);
  });

  it('accepts RGBA and interpolates between pixels', () => {
    // 2x1 image: black then white; scaled 208x, the middle column is about halfway.
    const img: RgbImage = { width: 2, height: 1, channels: 4, data: new Uint8Array([0, 0, 0, 255, 255, 255, 255, 255]) };
    const { data } = preprocessNanoDet(img);
    const r = (x: number) => data[2 * SIZE * SIZE + 208 * SIZE + x] * 58.395 + 123.675;
    expect(r(0)).toBeCloseTo(0, 3);
    expect(r(415)).toBeCloseTo(255, 3);
    expect(r(208)).toBeGreaterThan(100);
    expect(r(208)).toBeLessThan(155);
    expect(r(100)).toBeLessThan(r(300));
  });
});

describe('nanoDetLevels', () => {
  it('sorts the six outputs by shape, whatever their order', () => {
    const lv = emptyLevels();
    const outs = [
      { shape: [1, 169, 44], data: lv[2].boxes },
      { shape: [1, 2704, 80], data: lv[0].scores },
      { shape: [1, 676, 44], data: lv[1].boxes },
      { shape: [1, 169, 80], data: lv[2].scores },
      { shape: [1, 2704, 44], data: lv[0].boxes },
      { shape: [1, 676, 80], data: lv[1].scores },
    ];
    const levels = nanoDetLevels(outs);
    expect(levels.map((l) => l.stride)).toEqual([8, 16, 32]);
    expect(levels[1].scores).toBe(lv[1].scores);
    expect(levels[2].boxes).toBe(lv[2].boxes);
    expect(() => nanoDetLevels(outs.slice(1))).toThrow(/stride 32/);
  });
});

describe('decodeNanoDet', () => {
  it('decodes distances from the cell centre, times the stride', () => {
    const lv = emptyLevels();
    // Stride 16, cell (10, 5): centre (168, 88); distances 3, 2, 4, 5 bins = 48, 32, 64, 80 px.
    plant(lv, 1, 10, 5, 5, 0.9, [3, 2, 4, 5]);
    const [o, ...rest] = decodeNanoDet(lv, square);
    expect(rest).toHaveLength(0);
    expect(o).toEqual({ class_id: 5, class_name: 'bus', confidence: 0.9, x: 120, y: 56, w: 112, h: 112 });
  });

  it('takes the expected value of the bin distribution, not the arg-max', () => {
    const lv = emptyLevels();
    plant(lv, 2, 6, 6, 0, 0.8, [2, 2, 2, 2]);
    // Left side: equal logits on bins 2 and 3 -> 2.5 bins.
    const off = (6 * 13 + 6) * 4 * BINS;
    lv[2].boxes.fill(0, off, off + BINS);
    lv[2].boxes[off + 2] = 30;
    lv[2].boxes[off + 3] = 30;
    const [o] = decodeNanoDet(lv, square);
    // Centre (208, 208); left 2.5 * 32 = 80 px, the others 64 px.
    expect([o.x, o.y, o.w, o.h]).toEqual([128, 144, 144, 128]);
  });

  it('maps back through the letterbox and clips to the image', () => {
    const lv = emptyLevels();
    // Image 832x416: scale 0.5, padY 104. Stride 8 cell (1, 14): centre (12, 116), box 12..36 x 100..132 in input.
    plant(lv, 0, 1, 14, 41, 0.7, [0, 2, 3, 2]);
    const [o] = decodeNanoDet(lv, letterboxFor(832, 416));
    expect(o).toMatchObject({ class_name: 'cup', x: 24, y: 0, w: 48, h: 56 });
    // A box wholly inside the padding is dropped.
    const pad = emptyLevels();
    plant(pad, 0, 20, 2, 41, 0.7, [1, 1, 1, 1]);
    expect(decodeNanoDet(pad, letterboxFor(832, 416))).toEqual([]);
  });

  it('keeps scores strictly above the threshold, every class of a cell, best first', () => {
    const lv = emptyLevels();
    plant(lv, 1, 3, 3, 15, 0.375, [2, 2, 2, 2]); // exact in float32, like the model's scores
    plant(lv, 1, 20, 20, 16, 0.41, [2, 2, 2, 2]);
    lv[1].scores[(20 * 26 + 20) * 80 + 15] = 0.625; // same cell, another class
    expect(decodeNanoDet(lv, square).map((o) => [o.class_name, o.confidence])).toEqual([
      ['cat', 0.625],
      ['dog', 0.41],
    ]);
    expect(decodeNanoDet(lv, square, { confidence: 0.375 })).toHaveLength(2);
    expect(decodeNanoDet(lv, square, { confidence: 0.37 })).toHaveLength(3);
    expect(decodeNanoDet(lv, square, { confidence: 0.625 })).toHaveLength(0);
    expect(() => decodeNanoDet(lv, square, { confidence: 1.5 })).toThrow(RangeError);
    expect(() => decodeNanoDet(lv, square, { iou: -0.1 })).toThrow(RangeError);
  });

  it('runs per-class NMS across strides with the given IoU', () => {
    const lv = emptyLevels();
    // Nearly the same box from stride 8 and stride 16, same class; a third box of another class on top.
    plant(lv, 0, 20, 20, 0, 0.9, [4, 4, 4, 4]); // centre (164, 164), 32 px each side
    plant(lv, 1, 10, 10, 0, 0.7, [2, 2, 2, 2]); // centre (168, 168), 32 px each side
    plant(lv, 1, 10, 10, 27, 0.5, [2, 2, 2, 2]);
    const kept = decodeNanoDet(lv, square);
    expect(kept.map((o) => o.class_name)).toEqual(['person', 'tie']);
    expect(decodeNanoDet(lv, square, { iou: 0.9 })).toHaveLength(3);
    const persons = decodeNanoDet(lv, square, { iou: 0.9 }).filter((o) => o.class_id === 0);
    expect(iou(persons[0], persons[1])).toBeGreaterThan(0.4);
  });

  it('stays bounded at confidence 0 (every cell and class a candidate)', () => {
    const lv = emptyLevels();
    for (const l of lv) l.scores.fill(0.01);
    const found = decodeNanoDet(lv, square, { confidence: 0 });
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(100);
  });
});

describe('createNanoDetRunner', () => {
  it('feeds the forward pass a [1,3,416,416] input, decodes its outputs and reuses the buffer', async () => {
    const lv = emptyLevels();
    plant(lv, 2, 6, 6, 3, 0.95, [2, 2, 2, 2]);
    const seen: Float32Array[] = [];
    const forward: NanoDetForward = async (input, shape) => {
      expect(shape).toEqual([1, 3, 416, 416]);
      expect(input).toHaveLength(3 * 416 * 416);
      seen.push(input);
      return lv.flatMap((l) => [
        { shape: [1, l.scores.length / 80, 80], data: l.scores },
        { shape: [1, l.scores.length / 80, 44], data: l.boxes },
      ]);
    };
    const runner = createNanoDetRunner(forward);
    const img: RgbImage = { width: 416, height: 416, channels: 3, data: new Uint8Array(416 * 416 * 3) };
    const { objects, timings } = await runner.detectTimed(img);
    expect(objects).toEqual([{ class_id: 3, class_name: 'motorbike', confidence: 0.95, x: 144, y: 144, w: 128, h: 128 }]);
    expect(timings.inferenceMs).toBeGreaterThanOrEqual(0);
    await runner.detect(img);
    expect(seen[1]).toBe(seen[0]);
    await expect(runner.detect(img, { confidence: 2 })).rejects.toThrow(RangeError);
    expect(seen).toHaveLength(2);
  });
});

describe('tfjsForward', () => {
  it('runs the graph on a [1,3,416,416] tensor and disposes every tensor', async () => {
    const disposed: string[] = [];
    const tensor = (name: string, shape: number[], data: Float32Array): TensorLike => ({
      shape,
      data: async () => data,
      dispose: () => disposed.push(name),
    });
    let seen: number[] = [];
    const tf: TfLike = {
      tensor4d: (values, shape) => {
        seen = [...shape, values.length];
        return tensor('input', shape, values);
      },
    };
    const model: GraphModelLike = {
      outputNodes: ['a', 'b'],
      execute: (_x, outputs) => {
        expect(outputs).toEqual(['a', 'b']);
        return [tensor('a', [1, 169, 80], new Float32Array(169 * 80)), tensor('b', [1, 169, 44], new Float32Array(169 * 44))];
      },
    };
    const out = await tfjsForward(tf, model)(new Float32Array(3 * 416 * 416), [1, 3, 416, 416]);
    expect(seen).toEqual([1, 3, 416, 416, 3 * 416 * 416]);
    expect(out.map((o) => o.shape)).toEqual([
      [1, 169, 80],
      [1, 169, 44],
    ]);
    expect(disposed.sort()).toEqual(['a', 'b', 'input']);
  });
});
