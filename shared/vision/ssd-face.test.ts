import { describe, expect, it } from 'vitest';
import { resizeRgbBilinear } from '../image/resize-rgb.js';
import type { RgbImage } from '../image/types.js';
import type { ModelMetadata } from '../kserve/protocol.js';
import { iou, parseSsdDetections, rgbToNchwBgr, ssdContract, SsdContractError, ssdInput } from './ssd-face.js';

const meta = (input: number[], output: number[], datatype: 'FP32' | 'UINT8' = 'FP32'): ModelMetadata => ({
  name: 'm',
  platform: 'OpenVINO',
  inputs: [{ name: 'in', datatype, shape: input }],
  outputs: [{ name: 'out', datatype: 'FP32', shape: output }],
});

describe('ssdContract', () => {
  it('reads names and size from the descriptor', () => {
    expect(ssdContract(meta([1, 3, 256, 320], [1, 1, 100, 7]))).toEqual({
      inputName: 'in',
      inputDatatype: 'FP32',
      inputShape: [1, 3, 256, 320],
      width: 320,
      height: 256,
      outputName: 'out',
    });
  });

  it('takes 300 for dynamic spatial dims and 1 for a dynamic batch', () => {
    const c = ssdContract(meta([-1, 3, -1, -1], [1, 1, -1, 7]));
    expect(c.inputShape).toEqual([1, 3, 300, 300]);
  });

  it.each([
    [[1, 300, 300, 3], [1, 1, 200, 7], /3 channels in dimension 1/],
    [[3, 300, 300], [1, 1, 200, 7], /expected 4 dimensions/],
    [[2, 3, 300, 300], [1, 1, 200, 7], /batch 2/],
    [[1, 3, 300, 300], [1, 1, 200, 5], /last dimension to be 7/],
  ])('refuses input %j / output %j', (input, output, message) => {
    expect(() => ssdContract(meta(input, output))).toThrow(message);
    expect(() => ssdContract(meta(input, output))).toThrow(SsdContractError);
  });

  it('refuses a non-FP32 input', () => {
    expect(() => ssdContract(meta([1, 3, 300, 300], [1, 1, 200, 7], 'UINT8'))).toThrow(/datatype UINT8, expected FP32/);
  });
});

describe('rgbToNchwBgr', () => {
  it('writes B, G, R planes', () => {
    const img: RgbImage = { width: 2, height: 1, channels: 3, data: new Uint8Array([10, 20, 30, 40, 50, 60]) };
    expect(Array.from(rgbToNchwBgr(img))).toEqual([30, 60, 20, 50, 10, 40]);
  });

  it('ignores alpha', () => {
    const img: RgbImage = { width: 1, height: 1, channels: 4, data: new Uint8Array([1, 2, 3, 255]) };
    expect(Array.from(rgbToNchwBgr(img))).toEqual([3, 2, 1]);
  });

  it('ssdInput resizes to the contract size', () => {
    const img: RgbImage = { width: 7, height: 5, channels: 3, data: new Uint8Array(7 * 5 * 3).fill(9) };
    const t = ssdInput(img, { width: 4, height: 3 });
    expect(t.length).toBe(3 * 4 * 3);
    expect(t.every((v) => v === 9)).toBe(true);
  });
});

describe('resizeRgbBilinear', () => {
  it('is the identity at the same size', () => {
    const data = Uint8Array.from({ length: 4 * 3 * 3 }, (_, i) => (i * 37) % 256);
    const out = resizeRgbBilinear({ width: 4, height: 3, channels: 3, data }, 4, 3);
    expect(Array.from(out.data)).toEqual(Array.from(data));
  });

  it('interpolates with pixel centres at +0.5 (OpenCV INTER_LINEAR geometry)', () => {
    // 2x1 -> 4x1: destination centres map to source -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
    const src: RgbImage = { width: 2, height: 1, channels: 3, data: new Uint8Array([0, 0, 0, 200, 100, 40]) };
    const out = resizeRgbBilinear(src, 4, 1);
    expect(Array.from(out.data)).toEqual([0, 0, 0, 50, 25, 10, 150, 75, 30, 200, 100, 40]);
  });

  it('drops alpha and keeps a constant image constant when shrinking', () => {
    const src: RgbImage = { width: 9, height: 7, channels: 4, data: new Uint8Array(9 * 7 * 4).fill(77) };
    const out = resizeRgbBilinear(src, 3, 2);
    expect(out.channels).toBe(3);
    expect(out.data.length).toBe(3 * 2 * 3);
    expect(out.data.every((v) => v === 77)).toBe(true);
  });

  it('refuses an empty target', () => {
    expect(() => resizeRgbBilinear({ width: 1, height: 1, channels: 3, data: new Uint8Array(3) }, 0, 1)).toThrow(RangeError);
  });
});

describe('parseSsdDetections', () => {
  const rows = (...r: number[][]) => r.flat();

  it('maps normalised rows to clipped pixel boxes, keeps conf >= threshold, sorts by confidence', () => {
    const data = rows(
      [0, 1, 0.6, 0.1, 0.2, 0.3, 0.6],
      [0, 1, 0.9, -0.05, 0.5, 0.5, 1.2],
      [0, 1, 0.49, 0.1, 0.1, 0.2, 0.2],
      [0, 1, 0.5, 0.7, 0.7, 0.7, 0.9], // empty after rounding: dropped
    );
    expect(parseSsdDetections(data, 200, 100, 0.5)).toEqual([
      { x: 0, y: 50, width: 100, height: 50, confidence: 0.9, label: 1 },
      { x: 20, y: 20, width: 40, height: 40, confidence: 0.6, label: 1 },
    ]);
  });

  it('stops at the image_id -1 end row', () => {
    const data = rows([0, 1, 0.9, 0, 0, 0.5, 0.5], [-1, 0, 0, 0, 0, 0, 0], [0, 1, 0.95, 0, 0, 1, 1]);
    expect(parseSsdDetections(data, 10, 10, 0.1)).toHaveLength(1);
  });

  it('skips rows with non-finite values', () => {
    expect(parseSsdDetections(rows([0, 1, 0.9, Number.NaN, 0, 0.5, 0.5]), 10, 10, 0.1)).toEqual([]);
  });

  it('refuses data that is not whole rows', () => {
    expect(() => parseSsdDetections([1, 2, 3], 10, 10, 0.5)).toThrow(/multiple of 7/);
  });
});

describe('iou', () => {
  it('is 1 for equal, 0 for disjoint, 1/7 for half-overlapping squares', () => {
    const a = { x: 0, y: 0, width: 10, height: 10 };
    expect(iou(a, a)).toBe(1);
    expect(iou(a, { x: 20, y: 0, width: 10, height: 10 })).toBe(0);
    expect(iou(a, { x: 5, y: 5, width: 10, height: 10 })).toBeCloseTo(25 / 175);
  });
});
