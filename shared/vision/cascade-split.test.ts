import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { rgbToGray } from '../image/ops.js';
import type { GrayImage, Rect } from '../image/types.js';
import { mergeParts, splitPyramid } from './cascade-split.js';
import { detectMultiScale, groupRectangles, parseHaarCascade, type DetectOptions } from './haar-cascade.js';

const ROOT = process.cwd();
const TESTDATA = resolve(ROOT, 'test/fixtures/images');
const cascade = parseHaarCascade(readFileSync(resolve(ROOT, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));

async function gray(file: string, transform?: (s: Sharp) => Sharp): Promise<GrayImage> {
  let s = sharp(resolve(TESTDATA, file)).removeAlpha();
  if (transform) s = transform(s);
  const { data, info } = await s.raw().toBuffer({ resolveWithObject: true });
  return rgbToGray({ width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) });
}

/** detectMultiScale run as split parts, as the browser's cascade threads run it. */
function splitDetect(img: GrayImage, options: DetectOptions, parts: number): Rect[] | null {
  const plan = splitPyramid(cascade, img.width, img.height, options, parts);
  if (!plan) throw new Error('alt2 is square');
  return mergeParts(
    plan.map((o) => detectMultiScale(cascade, img, o)),
    img.width,
    img.height,
    options.minNeighbors ?? 5,
  );
}

const OPTIONS: DetectOptions[] = [
  { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } },
  { scaleFactor: 1.2, minNeighbors: 3, minSize: { width: 24, height: 24 } },
  { scaleFactor: 1.05, minNeighbors: 0, minSize: { width: 60, height: 60 }, maxSize: { width: 300, height: 300 } },
];

describe('splitPyramid', () => {
  it('covers every level once, in order, in about equal parts', () => {
    const plan = splitPyramid(cascade, 640, 480, OPTIONS[0], 3)!;
    expect(plan).toHaveLength(3);
    // The first level at or above minSize 30: cvRound(20 * 1.1^5) = 32.
    expect(plan[0].minSize).toEqual({ width: 32, height: 32 });
    expect(plan[2].maxSize).toBeUndefined();
    for (let i = 0; i < plan.length - 1; i++) expect(plan[i + 1].minSize!.width).toBeGreaterThan(plan[i].maxSize!.width);
    for (const p of plan) expect(p.minNeighbors).toBe(0);
  });

  it('makes no more parts than levels, and one for a single part', () => {
    expect(splitPyramid(cascade, 640, 480, OPTIONS[0], 1)).toHaveLength(1);
    // 40x40: sizes 30 (factor 1.5) to 40: four window sizes at most.
    expect(splitPyramid(cascade, 40, 40, OPTIONS[0], 16)!.length).toBeLessThanOrEqual(4);
    expect(splitPyramid(cascade, 10, 10, OPTIONS[0], 4)).toEqual([]);
    expect(mergeParts([], 10, 10)).toEqual([]);
  });
});

describe('split detection equals detectMultiScale', () => {
  const cases: [string, (s: Sharp) => Sharp][] = [
    ['faces/astronaut.png', (s) => s],
    ['faces/grace_hopper.jpg', (s) => s],
    ['faces/messi5.jpg', (s) => s],
    ['faces/sample1.jpg', (s) => s.resize(640, 480, { fit: 'cover' })],
    ['faces/sample2.jpg', (s) => s.resize(960, 683)],
    ['faces/sample5.jpg', (s) => s.resize(640, 466)],
    ['faces/astronaut.png', (s) => s.resize(640, 480, { fit: 'contain', background: '#000' })],
    // Faces at the right or the bottom edge: raw windows there reach past the image.
    ['faces/astronaut.png', (s) => s.extract({ left: 0, top: 0, width: 285, height: 223 })],
    ['faces/astronaut.png', (s) => s.extract({ left: 0, top: 0, width: 470, height: 182 })],
    ['faces/astronaut.png', (s) => s.extract({ left: 0, top: 0, width: 248, height: 223 })],
    ['faces/astronaut.png', (s) => s.extract({ left: 0, top: 0, width: 267, height: 208 })],
    ['faces/messi5.jpg', (s) => s.extract({ left: 0, top: 0, width: 322, height: 182 })],
    ['faces/grace_hopper.jpg', (s) => s.extract({ left: 100, top: 60, width: 170, height: 200 })],
  ];

  it('for every image, option set and part count (or says to run it whole)', async () => {
    let compared = 0;
    let wholeRuns = 0;
    for (const [file, transform] of cases) {
      const img = await gray(file, transform);
      for (const options of OPTIONS) {
        const expected = detectMultiScale(cascade, img, options);
        for (const parts of [2, 3, 4]) {
          const got = splitDetect(img, options, parts);
          if (got === null) wholeRuns++;
          else {
            expect(got, `${file} ${img.width}x${img.height} ${JSON.stringify(options)} ${parts} parts`).toEqual(expected);
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(wholeRuns * 4);
  }, 120_000);

  it('restores windows cut short by the right or bottom edge', async () => {
    const options: DetectOptions = { scaleFactor: 1.1, minNeighbors: 2, minSize: { width: 30, height: 30 } };
    // A crop whose raw windows reach past the right edge, where it matters: grouping the clipped windows
    // gives an 82 px wide face, detectMultiScale (grouping, then clipping) an 83 px one.
    const img = await gray('faces/astronaut.png', (s) => s.extract({ left: 0, top: 0, width: 267, height: 208 }));
    const plan = splitPyramid(cascade, img.width, img.height, options, 2)!;
    const parts = plan.map((o) => detectMultiScale(cascade, img, o));
    expect(parts.flat().some((r) => r.width !== r.height)).toBe(true);
    const clippedFirst = groupRectangles(parts.flat(), 2, 0.2);
    const expected = detectMultiScale(cascade, img, options);
    expect(expected).toEqual([{ x: 181, y: 72, width: 83, height: 83 }]);
    expect(clippedFirst).not.toEqual(expected);
    expect(mergeParts(parts, img.width, img.height, 2)).toEqual(expected);
    // And the bottom edge (182 high).
    const low = await gray('faces/astronaut.png', (s) => s.extract({ left: 0, top: 0, width: 470, height: 182 }));
    for (const minNeighbors of [1, 2, 5]) {
      expect(splitDetect(low, { ...options, minNeighbors }, 2)).toEqual(detectMultiScale(cascade, low, { ...options, minNeighbors }));
    }
  });
});
