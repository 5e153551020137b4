import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { GrayImage } from '../image/types.js';
import { alignedFace, faceTilt, findEyes, MIN_TILT_DEGREES } from './eye-alignment.js';
import { normalizeFace } from './face-region.js';
import { detectMultiScale, parseHaarCascade } from './haar-cascade.js';

// Regions of the test photos turned by OpenCV, and the faces OpenCV's steps make of them:
// scripts/fixtures/alignment_fixtures.py (face cascade, eye cascade, the tilt, cv2.warpAffine or the plain crop).
const FIX = resolve(process.cwd(), 'test/fixtures/opencv/alignment/faces');
interface Case {
  image: string;
  box: [number, number, number, number] | null;
  eyes?: [[number, number], [number, number]] | null;
  tilt?: number;
  aligned?: string;
}
const cases = JSON.parse(readFileSync(resolve(FIX, 'cases.json'), 'utf8')) as Case[];
const models = resolve(process.cwd(), 'public/models');
const faceCascade = parseHaarCascade(readFileSync(resolve(models, 'haarcascade_frontalface_alt2.xml'), 'utf8'));
const eyeCascade = parseHaarCascade(readFileSync(resolve(models, 'haarcascade_eye.xml'), 'utf8'));

async function grayPng(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(resolve(FIX, file)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

const largest = <T extends { width: number; height: number }>(boxes: T[]): T | undefined =>
  boxes.reduce<T | undefined>((b, r) => (!b || r.width * r.height > b.width * b.height ? r : b), undefined);

describe('eye-tilt alignment (OpenCV parity)', () => {
  it('the fixtures hold tilted faces that get turned upright and upright ones that do not', () => {
    expect(cases.filter((c) => c.tilt).length).toBeGreaterThanOrEqual(8);
    expect(cases.filter((c) => c.box && !c.tilt).length).toBeGreaterThanOrEqual(5);
  });

  it.each(cases.filter((c) => c.box).map((c) => [c.image, c] as const))(
    '%s: same box, eyes, tilt and face pixels as OpenCV',
    async (_n, c) => {
      const gray = await grayPng(c.image);
      const box = largest(detectMultiScale(faceCascade, gray, { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } }));
      expect(box && [box.x, box.y, box.width, box.height]).toEqual(c.box);
      const eyes = findEyes(eyeCascade, gray, box!);
      expect(
        eyes && [
          [eyes.left.x, eyes.left.y],
          [eyes.right.x, eyes.right.y],
        ],
      ).toEqual(c.eyes ?? null);
      // atan2, cos and sin may differ from glibc's in the last bit; the pixels must not.
      expect(faceTilt(eyes)).toBeCloseTo(c.tilt!, 12);
      const face = alignedFace(gray, box!, eyeCascade);
      const expected = await grayPng(c.aligned!);
      expect(Buffer.from(face.data).equals(Buffer.from(expected.data))).toBe(true);
    },
  );
});

describe('alignedFace', () => {
  it('is exactly the plain crop without an eye cascade (models trained before alignment) or without a tilt', async () => {
    const upright = cases.find((c) => c.box && c.tilt === 0 && c.eyes)!;
    const gray = await grayPng(upright.image);
    const [x, y, width, height] = upright.box!;
    const plain = normalizeFace(gray, { x, y, width, height });
    expect(alignedFace(gray, { x, y, width, height }, null).data).toEqual(plain.data);
    expect(alignedFace(gray, { x, y, width, height }, eyeCascade).data).toEqual(plain.data);
  });

  it('leaves tilts under the minimum and implausible ones alone', () => {
    const eyes = (dy: number) => ({ left: { x: 30, y: 40 }, right: { x: 70, y: 40 + dy } });
    expect(faceTilt(null)).toBe(0);
    expect(faceTilt(eyes(40 * Math.tan(((MIN_TILT_DEGREES - 0.5) * Math.PI) / 180)))).toBe(0);
    expect(faceTilt(eyes(40 * Math.tan((10 * Math.PI) / 180)))).toBeCloseTo((10 * Math.PI) / 180, 10);
    expect(faceTilt(eyes(-40 * Math.tan((10 * Math.PI) / 180)))).toBeCloseTo((-10 * Math.PI) / 180, 10);
    expect(faceTilt(eyes(40))).toBe(0); // 45 degrees: not a frontal face's eyes
  });

  it('brings a tilted face close to the upright one (smaller LBPH-relevant pixel difference than the plain crop)', async () => {
    const [up, tilted] = ['p2_a0.png', 'p2_a-12.png'].map((n) => cases.find((c) => c.image === n)!);
    const g0 = await grayPng(up.image);
    const g1 = await grayPng(tilted.image);
    const box = (c: Case) => ({ x: c.box![0], y: c.box![1], width: c.box![2], height: c.box![3] });
    const diff = (a: GrayImage, b: GrayImage) => a.data.reduce((s, v, i) => s + Math.abs(v - b.data[i]), 0) / a.data.length;
    const plain = diff(normalizeFace(g0, box(up)), normalizeFace(g1, box(tilted)));
    const aligned = diff(alignedFace(g0, box(up), eyeCascade), alignedFace(g1, box(tilted), eyeCascade));
    expect(aligned).toBeLessThan(plain * 0.8);
  });
});
