import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it, vi } from 'vitest';
import { resizeLinearExact } from '../image/ops.js';
import type { GrayImage, Rect } from '../image/types.js';
import {
  detectMultiScale,
  groupRectangles,
  HaarCascadeParseError,
  parseHaarCascade,
  tiltedIntegral,
  type CascadeScan,
  type DetectOptions,
  type HaarCascade,
} from './haar-cascade.js';
import { haarKernel, haarScanFor, haarWasmUnavailable, strideFor } from './haar-wasm.js';

const ROOT = process.cwd();
const FIX = resolve(ROOT, 'test/fixtures/opencv/cascade');
const OPENCV_CASCADES = '/usr/share/opencv4/haarcascades';
const PRODUCT_MODEL = resolve(ROOT, 'public/models/haarcascade_frontalface_alt2.xml');

interface Run {
  cascade: string;
  params: string;
  options: DetectOptions;
  image: string;
  boxes: number[][];
}
interface Fixture {
  opencv_version: string;
  images: { image: string; gray: string }[];
  integral: { width: number; height: number; data: number[]; tilted: number[] };
  runs: Run[];
}
const fixture = JSON.parse(readFileSync(resolve(FIX, 'boxes.json'), 'utf8')) as Fixture;

const cascades = new Map<string, HaarCascade>();
function cascade(file: string): HaarCascade {
  let c = cascades.get(file);
  if (!c) {
    const path = file === 'haarcascade_frontalface_alt2.xml' ? PRODUCT_MODEL : resolve(OPENCV_CASCADES, file);
    c = parseHaarCascade(readFileSync(path, 'utf8'));
    cascades.set(file, c);
  }
  return c;
}

const grays = new Map<string, Promise<GrayImage>>();
function gray(image: string): Promise<GrayImage> {
  const name = fixture.images.find((i) => i.image === image)?.gray;
  if (!name) throw new Error(`no fixture image for ${image}`);
  let g = grays.get(name);
  if (!g) {
    g = sharp(resolve(FIX, name))
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true })
      .then(({ data, info }) => ({ width: info.width, height: info.height, data: new Uint8Array(data) }));
    grays.set(name, g);
  }
  return g;
}

function iou(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

const toRect = ([x, y, width, height]: number[]): Rect => ({ x, y, width, height });
const toArr = (r: Rect): number[] => [r.x, r.y, r.width, r.height];

// Every window scan (the generated WebAssembly one with SIMD the product runs, and the two it falls back to:
// WebAssembly without SIMD, then JavaScript) must give OpenCV's boxes exactly.
describe.each<CascadeScan>(['simd', 'wasm', 'js'])(`detectMultiScale parity with OpenCV ${fixture.opencv_version}, %s scan`, (scan) => {
  // Parity statistics over every run, checked (and printed) after the per-run tests.
  const stats = { runs: 0, exactOrder: 0, exactSet: 0, opencvBoxes: 0, matched: 0, lookoutBoxes: 0, extra: 0, ious: [] as number[] };
  const groups = new Map<string, Run[]>();
  for (const run of fixture.runs) {
    const key = `${run.cascade} ${run.params}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  for (const [key, runs] of groups) {
    it(`${key} (${runs.length} images)`, async () => {
      const c = cascade(runs[0].cascade);
      for (const run of runs) {
        const got = detectMultiScale(c, await gray(run.image), run.options, scan);
        const want = run.boxes.map(toRect);
        stats.runs++;
        const gotArr = got.map(toArr);
        if (JSON.stringify(gotArr) === JSON.stringify(run.boxes)) stats.exactOrder++;
        const sortKey = (a: number[], b: number[]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3];
        if (JSON.stringify([...gotArr].sort(sortKey)) === JSON.stringify([...run.boxes].sort(sortKey))) stats.exactSet++;
        stats.opencvBoxes += want.length;
        stats.lookoutBoxes += got.length;
        for (const w of want) {
          const best = Math.max(0, ...got.map((g) => iou(g, w)));
          stats.ious.push(best);
          if (best >= 0.8) stats.matched++;
        }
        for (const g of got) if (!want.some((w) => iou(g, w) >= 0.8)) stats.extra++;
        // Bit-exact goal: the same boxes in the same order as OpenCV.
        expect({ image: run.image, boxes: gotArr }).toEqual({ image: run.image, boxes: run.boxes });
      }
    });
  }

  it('meets the acceptance figures over the whole set', () => {
    expect(stats.runs).toBe(fixture.runs.length);
    const recall = stats.matched / Math.max(1, stats.opencvBoxes);
    const extraRate = stats.extra / Math.max(1, stats.lookoutBoxes);
    const meanIou = stats.ious.reduce((a, b) => a + b, 0) / Math.max(1, stats.ious.length);
    console.log(
      `cascade parity (${scan} scan): ${stats.exactOrder}/${stats.runs} runs identical to OpenCV (order too), ${stats.exactSet}/${stats.runs} ` +
        `identical as sets; ${stats.matched}/${stats.opencvBoxes} OpenCV boxes matched at IoU >= 0.8 ` +
        `(mean best IoU ${meanIou.toFixed(4)}, min ${Math.min(1, ...stats.ious).toFixed(4)}); ` +
        `${stats.extra}/${stats.lookoutBoxes} extra Lookout boxes`,
    );
    expect(recall).toBeGreaterThanOrEqual(0.95);
    expect(extraRate).toBeLessThanOrEqual(0.05);
  });
});

describe('float feature path', () => {
  // Halving every weight and node threshold scales feature values by an exact power of two, so decisions are the
  // same; the non-integer weights route evaluation through the general float code instead of the integer one.
  it.each([
    ['haarcascade_frontalface_alt2.xml', 'simd'],
    ['haarcascade_frontalface_alt2.xml', 'wasm'],
    ['haarcascade_frontalface_alt2.xml', 'js'],
    ['haarcascade_frontalface_default.xml', 'simd'],
    ['haarcascade_frontalface_default.xml', 'wasm'],
    ['haarcascade_frontalface_default.xml', 'js'],
  ] as const)('gives the same boxes for %s (%s scan)', async (file, scan) => {
    const c = cascade(file);
    const halved: HaarCascade = {
      ...c,
      featureWeights: c.featureWeights.map((w) => w / 2),
      nodeThreshold: c.nodeThreshold.map((t) => t / 2),
    };
    const runs = fixture.runs.filter((r) => r.cascade === file && r.params === 'defaults').slice(0, 4);
    expect(runs.length).toBe(4);
    for (const run of runs) {
      const got = detectMultiScale(halved, await gray(run.image), run.options, scan).map(toArr);
      expect({ image: run.image, boxes: got }).toEqual({ image: run.image, boxes: run.boxes });
    }
  });
});

describe('parseHaarCascade', () => {
  it('reads the product model (tree cascade, 20x20)', () => {
    const c = cascade('haarcascade_frontalface_alt2.xml');
    expect([c.windowWidth, c.windowHeight, c.stageCount, c.maxNodesPerTree, c.hasTiltedFeatures]).toEqual([20, 20, 20, 2, false]);
    expect(c.treeCount).toBe(c.stageTreeStart[c.stageCount]);
    // Stage thresholds are float(t) - 1e-5f, as OpenCV stores them.
    expect(c.stageThreshold[0]).toBe(Math.fround(Math.fround(0.35069230198860168) - Math.fround(1e-5)));
  });

  it('reads stump cascades with a 24x24 window and tilted features', () => {
    const def = cascade('haarcascade_frontalface_default.xml');
    expect([def.windowWidth, def.windowHeight, def.stageCount, def.maxNodesPerTree]).toEqual([24, 24, 25, 1]);
    const upper = cascade('haarcascade_upperbody.xml');
    expect(upper.hasTiltedFeatures).toBe(true);
  });

  it('ships the product model byte for byte with the sha256 in MODELS.md', () => {
    const bytes = readFileSync(PRODUCT_MODEL);
    const digest = createHash('sha256').update(bytes).digest('hex');
    expect(readFileSync(resolve(ROOT, 'public/models/MODELS.md'), 'utf8')).toContain(digest);
  });

  const base = (inner: string, head = '<stageType>BOOST</stageType><featureType>HAAR</featureType>') =>
    `<?xml version="1.0"?><opencv_storage><cascade type_id="opencv-cascade-classifier">${head}` +
    `<height>20</height><width>20</width><featureParams><maxCatCount>0</maxCatCount></featureParams>${inner}</cascade></opencv_storage>`;
  const stage = (nodes: string, leaves = '0.1 0.9') =>
    `<stages><_><maxWeakCount>1</maxWeakCount><stageThreshold>0.5</stageThreshold><weakClassifiers><_>` +
    `<internalNodes>${nodes}</internalNodes><leafValues>${leaves}</leafValues></_></weakClassifiers></_></stages>`;
  const features = '<features><_><rects><_>0 0 4 4 -1.</_><_>0 0 4 2 2.</_></rects></_></features>';

  it('accepts a minimal hand-written cascade', () => {
    const c = parseHaarCascade(base(stage('0 -1 0 0.25') + features));
    expect([c.stageCount, c.treeCount, c.featureCount, c.maxNodesPerTree]).toEqual([1, 1, 1, 1]);
  });

  it.each([
    ['empty input', '', /empty input/],
    ['malformed XML', '<opencv_storage><cascade></opencv_storage>', /malformed XML at line 1/],
    ['a non-FileStorage XML', '<root/>', /no <opencv_storage> root/],
    [
      'an old-format cascade',
      readFileSync(resolve(OPENCV_CASCADES, 'haarcascade_licence_plate_rus_16stages.xml'), 'utf8'),
      /old-format cascade/,
    ],
    [
      'an LBP cascade',
      base(stage('0 -1 0 0.25') + features, '<stageType>BOOST</stageType><featureType>LBP</featureType>'),
      /unsupported featureType "LBP"/,
    ],
    [
      'a non-BOOST cascade',
      base(stage('0 -1 0 0.25') + features, '<stageType>GAB</stageType><featureType>HAAR</featureType>'),
      /unsupported stageType/,
    ],
    ['missing stages', base(features), /<stages> is missing/],
    ['a bad feature index', base(stage('0 -1 7 0.25') + features), /feature 7 out of range/],
    ['a non-numeric threshold', base(stage('0 -1 0 abc') + features), /"abc" is not a number/],
    ['a truncated node', base(stage('0 -1 0') + features), /internalNodes/],
    ['a dangling child', base(stage('0 5 0 0.25') + features), /child 5 is not a valid node or leaf/],
    [
      'a rect outside the window',
      base(`${stage('0 -1 0 0.25')}<features><_><rects><_>18 0 4 4 -1.</_></rects></_></features>`),
      /outside the 20x20 window/,
    ],
  ])('rejects %s with a clear message', (_what, xml, message) => {
    expect(() => parseHaarCascade(xml)).toThrow(HaarCascadeParseError);
    expect(() => parseHaarCascade(xml)).toThrow(message);
  });
});

describe('tiltedIntegral', () => {
  it("matches the third output of OpenCV's integral3", () => {
    const { width, height, data, tilted } = fixture.integral;
    const out = new Int32Array((width + 1) * (height + 1));
    tiltedIntegral(Uint8Array.from(data), width, height, out, 0, width + 1);
    expect(Array.from(out)).toEqual(tilted);
  });
});

describe('groupRectangles', () => {
  const r = (x: number, y: number, w: number, h = w): Rect => ({ x, y, width: w, height: h });

  it('returns the candidates unchanged for groupThreshold 0', () => {
    const rects = [r(0, 0, 10), r(100, 100, 10)];
    expect(groupRectangles(rects, 0)).toEqual(rects);
  });

  it('averages clusters with float 1/n and round-half-even, and drops small clusters', () => {
    // x sum 1 * float(1/3) rounds to 0; y: 2 * float(1/3) = 0.6666667 rounds to 1; width 31 * 1/3 = 10.333 -> 10.
    const cluster = [r(0, 0, 10), r(0, 1, 10), r(1, 1, 11)];
    expect(groupRectangles([...cluster, r(200, 200, 10)], 2)).toEqual([{ x: 0, y: 1, width: 10, height: 10 }]);
    expect(groupRectangles(cluster, 3)).toEqual([]);
  });

  it('removes a small group inside a larger, stronger one', () => {
    const big = [r(100, 100, 100), r(101, 100, 100), r(100, 101, 100), r(101, 101, 100), r(100, 100, 101)];
    const small = [r(130, 130, 30), r(131, 130, 30)];
    expect(groupRectangles([...big, ...small], 1)).toEqual([{ x: 100, y: 100, width: 100, height: 100 }]);
  });
});

describe('detectMultiScale options', () => {
  const img: GrayImage = { width: 64, height: 48, data: new Uint8Array(64 * 48) };
  it('rejects invalid parameters', () => {
    const c = cascade('haarcascade_frontalface_alt2.xml');
    expect(() => detectMultiScale(c, img, { scaleFactor: 1 })).toThrow(/scaleFactor/);
    expect(() => detectMultiScale(c, img, { minNeighbors: -1 })).toThrow(/minNeighbors/);
    expect(() => detectMultiScale(c, img, { minSize: { width: -1, height: 0 } })).toThrow(/minSize/);
  });
  it('finds nothing in a flat image and in an image smaller than the window', () => {
    const c = cascade('haarcascade_frontalface_alt2.xml');
    expect(detectMultiScale(c, img, { minNeighbors: 0, minSize: { width: 0, height: 0 } })).toEqual([]);
    expect(detectMultiScale(c, { width: 10, height: 10, data: new Uint8Array(100) })).toEqual([]);
  });
});

describe('WebAssembly scan', () => {
  it('runs with SIMD in Node', () => {
    expect(haarWasmUnavailable()).toBeNull();
    expect(haarScanFor(cascade('haarcascade_frontalface_alt2.xml'))).toBe('simd');
  });

  it('rounds row strides to powers of two up to 1024, then to steps of 512', () => {
    expect([1, 128, 129, 399, 512, 513, 1024, 1025, 1119, 1536, 1537].map(strideFor)).toEqual([
      128, 128, 256, 512, 512, 1024, 1024, 1536, 1536, 1536, 2048,
    ]);
    expect(haarKernel(cascade('haarcascade_frontalface_alt2.xml'), 1119)!.stride).toBe(1536);
  });

  it('stays identical to the JavaScript scan when kernels of several cascades and row strides take turns in the one memory', async () => {
    const images = await Promise.all(fixture.images.slice(0, 3).map((i) => gray(i.image)));
    const small = images[0];
    // A large frame: its first pyramid level is over 1024 wide, the stride steps of large photos.
    const large = resizeLinearExact(small, 1800, 1350);
    const work = [
      ['haarcascade_frontalface_alt2.xml', large],
      ['haarcascade_frontalface_default.xml', small],
      ['haarcascade_upperbody.xml', images[1]],
      ['haarcascade_frontalface_alt2.xml', images[2]],
      ['haarcascade_frontalface_alt2.xml', small],
      ['haarcascade_frontalface_default.xml', large],
      ['haarcascade_frontalface_alt2.xml', images[1]],
    ] as const;
    for (const [file, img] of work) {
      const options = { minNeighbors: 0 };
      const simd = detectMultiScale(cascade(file), img, options, 'simd');
      expect(simd.length, `${file} ${img.width}x${img.height}`).toBeGreaterThan(0);
      expect(simd, `${file} ${img.width}x${img.height}`).toEqual(detectMultiScale(cascade(file), img, options, 'js'));
    }
  });
});

describe('without WebAssembly', () => {
  it('detects with the JavaScript scan, says why, and refuses a forced WebAssembly scan', async () => {
    vi.resetModules();
    vi.stubGlobal('WebAssembly', undefined);
    try {
      const haar = await import('./haar-cascade.js');
      const wasmModule = await import('./haar-wasm.js');
      expect(wasmModule.haarWasmUnavailable()).toBe('this runtime has no WebAssembly');
      const c = haar.parseHaarCascade(readFileSync(PRODUCT_MODEL, 'utf8'));
      expect(wasmModule.haarScanFor(c)).toBe('js');
      const run = fixture.runs.find(
        (r) => r.cascade === 'haarcascade_frontalface_alt2.xml' && r.params === 'defaults' && r.boxes.length > 0,
      )!;
      const img = await gray(run.image);
      expect(haar.detectMultiScale(c, img, run.options).map(toArr)).toEqual(run.boxes);
      expect(() => haar.detectMultiScale(c, img, run.options, 'wasm')).toThrow(/no WebAssembly/);
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
  });
});
