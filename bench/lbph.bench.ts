/**
 * LBPH predict: Lookout vs OpenCV 4.6 (`LBPHFaceRecognizer.predict`, cv2.setNumThreads(1)) on the
 * same 5 labels x 5 crops model and the same 100x100 query crop, both measured in this run.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { GrayImage } from '../shared/image/types.js';
import { predictLbph, trainLbph } from '../shared/lbph/lbph.js';
import { median, type BenchRow } from './types.js';

const PYTHON = '/usr/bin/python3';
const RUNS = 500;

async function loadGray(path: string): Promise<GrayImage> {
  const { data, info } = await sharp(path).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data.buffer, data.byteOffset, data.length) };
}

export async function benchLbph(): Promise<BenchRow[]> {
  const root = process.cwd();
  const fix = join(root, 'test/fixtures/opencv/lbph');
  const expected = JSON.parse(readFileSync(join(fix, 'expected.json'), 'utf8')) as {
    train: { file: string; label: number }[];
    queries: { file: string }[];
  };
  const trainFiles = expected.train.map((t) => t.file);
  const queryFile = expected.queries[0].file;
  const model = trainLbph(
    await Promise.all(trainFiles.map((f) => loadGray(join(fix, f)))),
    expected.train.map((t) => t.label),
  );
  const query = await loadGray(join(fix, queryFile));

  // Warm-up lets the JIT settle before timing.
  let sink = 0;
  for (let i = 0; i < 300; i++) sink += predictLbph(model, query).distance;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    sink += predictLbph(model, query).distance;
    times.push(performance.now() - t0);
  }
  if (!Number.isFinite(sink)) throw new Error('unreachable');
  const lookout = median(times);

  const row: BenchRow = {
    name: `LBPH predict, 100x100 crop vs ${model.labels.length} samples (${new Set(model.labels).size} labels)`,
    unit: 'ms',
    lookout,
    goal: 'ratio <= 1.5',
  };
  try {
    const out = execFileSync(PYTHON, [join(root, 'bench/reference/opencv_lbph.py'), fix, String(RUNS), queryFile, ...trainFiles], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ref = JSON.parse(out.trim().split('\n').pop() as string) as { medianMs: number; opencv: string };
    row.reference = ref.medianMs;
    row.referenceName = `OpenCV ${ref.opencv} cv2.face LBPHFaceRecognizer.predict (cv2.setNumThreads(1))`;
    row.ratio = lookout / ref.medianMs;
  } catch (err) {
    row.referenceName = `OpenCV reference unavailable: ${(err as Error).message.split('\n')[0]}`;
  }
  return [row];
}
