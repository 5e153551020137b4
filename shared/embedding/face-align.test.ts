import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { alignedFaceBox, clipBox, cropRgbFloat } from './face-align.js';

describe('clipBox', () => {
  it('clips to the image and floors, as face-api does before slicing', () => {
    expect(clipBox({ x: -5.5, y: 10.7, width: 50, height: 30 }, 40, 30)).toEqual({ x: 0, y: 10, width: 40, height: 19 });
    expect(clipBox({ x: 10, y: 10, width: 5, height: 5 }, 40, 30)).toEqual({ x: 10, y: 10, width: 5, height: 5 });
    expect(clipBox({ x: 50, y: 0, width: 5, height: 5 }, 40, 30).width).toBeLessThanOrEqual(0);
  });
});

describe('cropRgbFloat', () => {
  const rgba = { width: 3, height: 2, channels: 4 as const, data: Uint8Array.from({ length: 24 }, (_, i) => i) };
  it('copies RGB, drops alpha', () => {
    const c = cropRgbFloat(rgba, { x: 1, y: 0, width: 2, height: 2 });
    expect(c).toMatchObject({ width: 2, height: 2 });
    expect(Array.from(c.data)).toEqual([4, 5, 6, 8, 9, 10, 16, 17, 18, 20, 21, 22]);
  });
  it('replicates gray to three channels', () => {
    const gray = { width: 2, height: 2, data: Uint8Array.from([1, 2, 3, 4]) };
    expect(Array.from(cropRgbFloat(gray, { x: 1, y: 1, width: 1, height: 1 }).data)).toEqual([4, 4, 4]);
  });
  it('rejects empty or outside crops and short data', () => {
    expect(() => cropRgbFloat(rgba, { x: 0, y: 0, width: 0, height: 1 })).toThrow(/empty or outside/);
    expect(() => cropRgbFloat(rgba, { x: 2, y: 0, width: 2, height: 1 })).toThrow(/outside/);
    expect(() => cropRgbFloat({ ...rgba, data: new Uint8Array(3) }, { x: 0, y: 0, width: 1, height: 1 })).toThrow(/need 24/);
  });
});

describe('alignedFaceBox', () => {
  it("equals face-api's dlib alignment (FaceLandmarks68.align with useDlibAlignment) on random landmark sets", () => {
    // face-api's geometry classes are plain JS: no tfjs backend is needed for this check.
    const faceapi = createRequire(import.meta.url)('@vladmandic/face-api/dist/face-api.node-wasm.js');
    let seed = 12345;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 500; n++) {
      const cw = 20 + Math.floor(rand() * 300);
      const ch = 20 + Math.floor(rand() * 300);
      const shiftX = Math.floor(rand() * 200) - 20;
      const shiftY = Math.floor(rand() * 200) - 20;
      const rel = Array.from({ length: 68 }, () => new faceapi.Point(rand(), rand()));
      const ref = new faceapi.FaceLandmarks68(rel, { width: cw, height: ch }).shiftBy(shiftX, shiftY);
      const lm = ref.positions.flatMap((p: { x: number; y: number }) => [p.x, p.y]);
      const box = ref.align(null, { useDlibAlignment: true });
      expect(alignedFaceBox(lm, { width: cw, height: ch })).toEqual({ x: box.x, y: box.y, width: box.width, height: box.height });
    }
  });
  it('without a crop size, is the plain square', () => {
    const lm = new Float64Array(136);
    for (let i = 36; i < 48; i++) [lm[2 * i], lm[2 * i + 1]] = [i < 42 ? 10 : 30, 0];
    for (let i = 48; i < 68; i++) [lm[2 * i], lm[2 * i + 1]] = [20, 20];
    // eye-mouth distance sqrt(500) / 0.45 -> 49; centre (20, 6.67) -> corner (-4.5, -14.4), clamped to 0
    expect(alignedFaceBox(lm)).toEqual({ x: 0, y: 0, width: 49, height: 49 });
    expect(alignedFaceBox(lm, { width: 20, height: 30 })).toEqual({ x: 0, y: 0, width: 20, height: 30 });
    for (let i = 0; i < 68; i++) lm[2 * i] += 100; // away from the left edge the crop limit no longer bites
    expect(alignedFaceBox(lm, { width: 20, height: 30 })).toEqual({ x: 95, y: 0, width: 49, height: 30 });
  });
  it('needs 136 values', () => {
    expect(() => alignedFaceBox(new Float64Array(10))).toThrow(/136/);
  });
});
