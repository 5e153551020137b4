import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { cropGray, cvRound, resizeLinearExact, rgbToGray } from './ops.js';
import type { GrayImage, RgbImage } from './types.js';

const FIX = resolve(process.cwd(), 'test/fixtures/opencv/cascade');
const TESTDATA = resolve(process.cwd(), 'test/fixtures/images');

interface Fixture {
  images: { image: string; gray: string; width: number; height: number; downscaled: boolean; png: boolean }[];
  resize: { src: string; width: number; height: number; out: string }[];
  pyramids: { image: string; gray: string; levels: { width: number; height: number; sha256: string }[] }[];
}
const fixture = JSON.parse(readFileSync(resolve(FIX, 'boxes.json'), 'utf8')) as Fixture;

async function loadGray(path: string): Promise<GrayImage> {
  const { data, info } = await sharp(path).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(1);
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

// keepIccProfile: decode the stored pixels as they are (OpenCV ignores embedded ICC profiles).
async function loadRgb(path: string, alpha = false): Promise<RgbImage> {
  let s = sharp(path).keepIccProfile().toColourspace('srgb');
  s = alpha ? s.ensureAlpha(0.5) : s.removeAlpha();
  const { data, info } = await s.raw().toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(alpha ? 4 : 3);
  return { width: info.width, height: info.height, channels: alpha ? 4 : 3, data: new Uint8Array(data) };
}

function firstDiff(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : a.length;
}

describe('cvRound', () => {
  it('rounds half to even', () => {
    expect([0.5, 1.5, 2.5, -1.5, -2.5, 2.4999, 2.5001, 3].map(cvRound)).toEqual([0, 2, 2, -2, -2, 2, 3, 3]);
  });
});

describe('rgbToGray (bit-exact with cvtColor COLOR_RGB2GRAY)', () => {
  it('matches OpenCV on a random RGB image', async () => {
    const rgb = await loadRgb(resolve(FIX, 'rgb_random.png'));
    const want = await loadGray(resolve(FIX, 'rgb_random.gray.png'));
    const got = rgbToGray(rgb);
    expect(got.width).toBe(want.width);
    expect(firstDiff(got.data, want.data)).toBe(-1);
  });

  it('ignores alpha (RGBA input)', async () => {
    const rgba = await loadRgb(resolve(FIX, 'rgb_random.png'), true);
    const want = await loadGray(resolve(FIX, 'rgb_random.gray.png'));
    expect(firstDiff(rgbToGray(rgba).data, want.data)).toBe(-1);
  });

  const pngs = fixture.images.filter((i) => i.png && !i.downscaled);
  it.each(pngs.map((i) => [i.image, i.gray]))('matches OpenCV on %s', async (image, gray) => {
    const rgb = await loadRgb(resolve(TESTDATA, image));
    const want = await loadGray(resolve(FIX, gray));
    const got = rgbToGray(rgb);
    expect([got.width, got.height]).toEqual([want.width, want.height]);
    expect(firstDiff(got.data, want.data)).toBe(-1);
  });

  it('rejects a bad channel count', () => {
    expect(() => rgbToGray({ width: 1, height: 1, channels: 2 as 3, data: new Uint8Array(2) })).toThrow(/channels/);
  });
});

describe('cropGray', () => {
  const img: GrayImage = { width: 4, height: 3, data: Uint8Array.from({ length: 12 }, (_, i) => i) };
  it('crops inside the image', () => {
    expect(cropGray(img, { x: 1, y: 1, width: 2, height: 2 })).toEqual({ width: 2, height: 2, data: Uint8Array.from([5, 6, 9, 10]) });
  });
  it('clips to the image', () => {
    expect(cropGray(img, { x: -2, y: 2, width: 4, height: 5 })).toEqual({ width: 2, height: 1, data: Uint8Array.from([8, 9]) });
    expect(cropGray(img, { x: 5, y: 0, width: 2, height: 2 }).width).toBe(0);
  });
});

describe('resizeLinearExact (bit-exact with cv::resize INTER_LINEAR_EXACT)', () => {
  it.each(fixture.resize.map((r) => [r.src, r.width, r.height, r.out] as const))('%s to %ix%i', async (src, width, height, out) => {
    const img = await loadGray(resolve(FIX, src));
    const want = await loadGray(resolve(FIX, out));
    const got = resizeLinearExact(img, width, height);
    expect([got.width, got.height]).toEqual([want.width, want.height]);
    expect(firstDiff(got.data, want.data)).toBe(-1);
  });

  it.each(fixture.pyramids.map((p) => [p.image, p] as const))('cascade pyramid of %s', async (_name, p) => {
    const img = await loadGray(resolve(FIX, p.gray));
    for (const level of p.levels) {
      const got = resizeLinearExact(img, level.width, level.height);
      const digest = createHash('sha256').update(got.data).digest('hex');
      expect(`${level.width}x${level.height} ${digest}`).toBe(`${level.width}x${level.height} ${level.sha256}`);
    }
  });

  it('same size is a copy', () => {
    const img: GrayImage = { width: 3, height: 2, data: Uint8Array.from([1, 2, 3, 4, 5, 6]) };
    const out = resizeLinearExact(img, 3, 2);
    expect(out.data).toEqual(img.data);
    expect(out.data).not.toBe(img.data);
  });

  it('rejects bad sizes', () => {
    const img: GrayImage = { width: 1, height: 1, data: Uint8Array.from([1]) };
    expect(() => resizeLinearExact(img, 0, 1)).toThrow(/positive/);
    expect(() => resizeLinearExact(img, 1.5, 1)).toThrow(/positive/);
  });
});
