import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { GrayImage } from './types.js';
import { invertAffine, warpAffineGray, type Affine } from './warp.js';

// Made by OpenCV 4.6's cv2.warpAffine (INTER_LINEAR, BORDER_REPLICATE): scripts/fixtures/alignment_fixtures.py.
const FIX = resolve(process.cwd(), 'test/fixtures/opencv/alignment/warp');
const cases = JSON.parse(readFileSync(resolve(FIX, 'cases.json'), 'utf8')) as {
  name: string;
  matrix: number[];
  width: number;
  height: number;
}[];

async function grayPng(file: string): Promise<GrayImage> {
  const { data, info } = await sharp(resolve(FIX, file)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

describe('warpAffineGray', () => {
  it.each(cases.map((c) => [c.name, c] as const))('gives OpenCV warpAffine pixels exactly: %s', async (_name, c) => {
    const src = await grayPng('source.png');
    const expected = await grayPng(`${c.name}.png`);
    const out = warpAffineGray(src, c.matrix as unknown as Affine, c.width, c.height);
    expect([out.width, out.height]).toEqual([expected.width, expected.height]);
    let differing = 0;
    for (let i = 0; i < out.data.length; i++) if (out.data[i] !== expected.data[i]) differing++;
    expect(differing).toBe(0);
  });

  it('inverts as OpenCV does, and a matrix and its inverse compose to the identity', () => {
    const m: Affine = [0.9, 0.25, -10, -0.1, 1.05, 3.3];
    const inv = invertAffine(m);
    const [x, y] = [17.5, -3.25];
    const fx = m[0] * x + m[1] * y + m[2];
    const fy = m[3] * x + m[4] * y + m[5];
    expect(inv[0] * fx + inv[1] * fy + inv[2]).toBeCloseTo(x, 12);
    expect(inv[3] * fx + inv[4] * fy + inv[5]).toBeCloseTo(y, 12);
    expect(invertAffine([0, 0, 1, 0, 0, 2]).every((v) => v === 0)).toBe(true); // singular: zeros, as OpenCV
  });

  it('repeats the edge pixels outside the source (BORDER_REPLICATE)', () => {
    const src: GrayImage = { width: 2, height: 2, data: Uint8Array.from([10, 20, 30, 40]) };
    const out = warpAffineGray(src, [1, 0, 3, 0, 1, 3], 7, 7); // the source sits at (3, 3)..(4, 4)
    expect(out.data[0]).toBe(10); // top-left corner beyond the image: the top-left pixel
    expect(out.data[6]).toBe(20);
    expect(out.data[6 * 7]).toBe(30);
    expect(out.data[48]).toBe(40);
    expect(out.data[3 * 7 + 3]).toBe(10);
  });

  it('refuses an empty source', () => {
    expect(() => warpAffineGray({ width: 0, height: 0, data: new Uint8Array(0) }, [1, 0, 0, 0, 1, 0], 2, 2)).toThrow(/empty/);
  });
});
