/**
 * Haar cascade benchmark: Lookout's detectMultiScale vs OpenCV 4.6 C++ (Python binding, cv2.setNumThreads(1)) on the
 * same 640x480 grayscale photo, same cascade file, same parameters.
 *
 * Input: test/fixtures/images/faces/sample5.jpg (a group photo; 5 faces found at 640x480), scaled by sharp to cover
 * 640x480 (aspect kept, centre crop; a plain 640x480 squeeze of sample1 only holds 2 faces), converted to gray with
 * rgbToGray and written to a temporary PNG that both sides read.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { rgbToGray } from '../shared/image/ops.js';
import { detectMultiScale, parseHaarCascade, type CascadeScan } from '../shared/vision/haar-cascade.js';
import { haarScanFor } from '../shared/vision/haar-wasm.js';
import { median, type BenchRow } from './types.js';

const PYTHON = '/usr/bin/python3';
const PARAMS = { scaleFactor: 1.1, minNeighbors: 5, minSize: { width: 30, height: 30 } };
const WARMUP = 5;
const RUNS = 30;

interface ReferenceResult {
  median_ms: number;
  runs: number;
  boxes: number[][];
  opencv_version: string;
}

export async function benchCascade(): Promise<BenchRow[]> {
  const root = process.cwd();
  const photo = resolve(root, 'test/fixtures/images/faces/sample5.jpg');
  const cascadePath = resolve(root, 'public/models/haarcascade_frontalface_alt2.xml');
  const script = resolve(root, 'bench/reference/opencv_cascade.py');

  const { data, info } = await sharp(photo).resize(640, 480, { fit: 'cover' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const gray = rgbToGray({ width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) });

  const dir = await mkdtemp(join(tmpdir(), 'lookout-cascade-bench-'));
  try {
    const png = join(dir, 'gray.png');
    await sharp(Buffer.from(gray.data), { raw: { width: gray.width, height: gray.height, channels: 1 } })
      .png()
      .toFile(png);
    const { stdout } = await promisify(execFile)(PYTHON, [
      script,
      png,
      cascadePath,
      String(PARAMS.scaleFactor),
      String(PARAMS.minNeighbors),
      String(PARAMS.minSize.width),
      String(RUNS),
    ]);
    const ref = JSON.parse(stdout) as ReferenceResult;

    const cascade = parseHaarCascade(await readFile(cascadePath, 'utf8'));
    // The product's scan (auto: WebAssembly SIMD here) and the two it falls back to, each timed the same way.
    const scans: [CascadeScan, string][] = [
      ['auto', `${{ simd: 'WebAssembly SIMD', wasm: 'WebAssembly', js: 'JavaScript' }[haarScanFor(cascade)]}, the product's`],
      ['wasm', 'WebAssembly without SIMD, the fallback'],
      ['js', 'JavaScript, the last fallback'],
    ];
    const rows: BenchRow[] = [];
    for (const [scan, what] of scans) {
      let boxes = detectMultiScale(cascade, gray, PARAMS, scan);
      for (let i = 1; i < WARMUP; i++) boxes = detectMultiScale(cascade, gray, PARAMS, scan);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        detectMultiScale(cascade, gray, PARAMS, scan);
        times.push(performance.now() - t0);
      }
      const lookout = median(times);
      const same = JSON.stringify(boxes.map((b) => [b.x, b.y, b.width, b.height])) === JSON.stringify(ref.boxes);
      rows.push({
        name: `cascade detectMultiScale, 640x480, frontalface_alt2, ${what} (${boxes.length} faces, ${same ? 'identical to' : 'DIFFERENT from'} OpenCV)`,
        unit: 'ms',
        lookout,
        reference: ref.median_ms,
        referenceName: `OpenCV ${ref.opencv_version} C++ (cv2.setNumThreads(1))`,
        ratio: lookout / ref.median_ms,
        ...(scan === 'auto' ? { goal: 'ratio <= 2' } : {}),
      });
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
