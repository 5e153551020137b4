/**
 * In-browser engines (issue #7) in headless Chromium on this machine: frames per second of live recognition
 * (cascade + LBPH, cascade + embedding) on a 640x480 fake camera, and object detection per frame, for each
 * tfjs backend (WASM, WebGL on SwiftShader, WebGPU with --enable-unsafe-webgpu on SwiftShader; NanoDet itself
 * runs on onnxruntime-web's WASM provider unless the WebGPU adapter is a real GPU). The page is
 * client/bench.html: live recognition and object detection as the live pages run them (each camera frame once,
 * the next sent while one is analysed; objects spread over single-threaded object lanes where the page does).
 * Reference in the same run: the same work done by this server over HTTP (POST /api/recognize with the same
 * recognizer, POST /api/objects/detect) for the same frame as JPEG, one request at a time, which is what the
 * page would do without in-browser engines.
 */
import path from 'node:path';
import sharp from 'sharp';
import { chromiumInstalled, launchChromium, startBenchServer, trainPerson, type BenchServer } from './browser.js';
import type { EngineBenchResult } from '../shared/bench/engine-bench.js';
import { makeY4m } from './fake-camera.js';
import { median, type BenchRow } from './types.js';

const SECONDS = 8;
const ALL_BACKENDS = ['wasm', 'webgl', 'webgpu'] as const;
const ALL_MODES = ['lbph', 'embedding', 'objects'] as const;
type Mode = (typeof ALL_MODES)[number];

/** A comma list from the environment (e.g. BENCH_MODES=lbph BENCH_BACKENDS=wasm), restricted to `all`; unset: all. */
function subset<T extends string>(variable: string, all: readonly T[]): readonly T[] {
  const wanted = process.env[variable]
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!wanted?.length) return all;
  const unknown = wanted.filter((w) => !all.includes(w as T));
  if (unknown.length) throw new Error(`${variable}: unknown ${unknown.join(', ')} (choose from ${all.join(', ')})`);
  return all.filter((a) => wanted.includes(a));
}

async function post(url: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function runPage(server: BenchServer, y4m: string, backend: string, mode: Mode): Promise<EngineBenchResult | string> {
  const args = ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-video-capture=${y4m}`];
  if (backend === 'webgpu') args.push('--enable-unsafe-webgpu');
  const browser = await launchChromium(args);
  try {
    const page = await browser.newPage();
    // BENCH_DEPTH=1: without the pipeline (each frame waits for the previous answer), to compare. Objects:
    // BENCH_OBJECT_LANES=0 detects on the engine worker alone, N on N single-threaded lanes (default: the page's).
    const depth = process.env.BENCH_DEPTH ? `&depth=${process.env.BENCH_DEPTH}` : '';
    const lanes = mode === 'objects' && process.env.BENCH_OBJECT_LANES ? `&lanes=${process.env.BENCH_OBJECT_LANES}` : '';
    await page.goto(`${server.url}/bench.html?mode=${mode}&backend=${backend}&seconds=${SECONDS}${depth}${lanes}`);
    // The page's globals (see client/src/bench/main.ts); this file is compiled without the DOM's types.
    type BenchWindow = { __benchResult?: EngineBenchResult; __benchError?: string };
    await page.waitForFunction(
      () => (globalThis as BenchWindow).__benchResult !== undefined || (globalThis as BenchWindow).__benchError !== undefined,
      undefined,
      {
        timeout: 180_000,
      },
    );
    const { result, error } = await page.evaluate(() => ({
      result: (globalThis as BenchWindow).__benchResult,
      error: (globalThis as BenchWindow).__benchError,
    }));
    if (error || !result) return error ?? 'no result';
    // A backend that could not start falls back; report only runs on the backend asked for.
    if (result.backend !== backend) return `ran on ${result.backend} instead (${JSON.stringify(result.backend_attempts)})`;
    return result;
  } finally {
    await browser.close();
  }
}

/** The server doing the same work over HTTP, one request at a time: frames per second and ms per frame. */
async function serverReference(server: BenchServer, frameJpeg: Buffer, mode: Mode): Promise<number> {
  const image = frameJpeg.toString('base64');
  if (mode !== 'objects')
    await fetch(`${server.url}/api/models/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ recognition_model: mode }),
    });
  const call = () =>
    mode === 'objects' ? post(`${server.url}/api/objects/detect`, { image }) : post(`${server.url}/api/recognize`, { image });
  for (let i = 0; i < 3; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return median(times);
}

export async function benchBrowserEngines(repoRoot: string, testdata: string): Promise<BenchRow[]> {
  if (!(await chromiumInstalled())) {
    console.log('in-browser engines: skipped, Chromium is not installed (apt-get install -y chromium)');
    return [];
  }
  const photo = path.join(testdata, 'faces/grace_hopper.jpg');
  const server = await startBenchServer(repoRoot);
  const rows: BenchRow[] = [];
  try {
    await trainPerson(server, photo);
    const y4m = await makeY4m(photo);
    const frameJpeg = await sharp(photo)
      .resize(640, 480, { fit: 'contain', background: { r: 0, g: 0, b: 0 } })
      .jpeg({ quality: 90 })
      .toBuffer();
    for (const mode of subset('BENCH_MODES', ALL_MODES)) {
      const referenceMs = await serverReference(server, frameJpeg, mode);
      for (const backend of subset('BENCH_BACKENDS', ALL_BACKENDS)) {
        const r = await runPage(server, y4m, backend, mode);
        const what = mode === 'objects' ? 'object detection (NanoDet)' : `live recognition (cascade + ${mode})`;
        if (process.env.BENCH_VERBOSE) console.log(JSON.stringify(r));
        if (typeof r === 'string') {
          console.log(`in-browser ${what} on ${backend}: not measured: ${r}`);
          continue;
        }
        const threads = r.wasm && backend === 'wasm' ? `, WASM SIMD ${r.wasm.simd ? 'on' : 'off'}, ${r.wasm.threadsCount} threads` : '';
        if (mode === 'objects') {
          // NanoDet runs on onnxruntime-web (WASM, or WebGPU on a real GPU), not on the tfjs backend named here.
          const w = r.worker_ms_median;
          const steps = ['preprocessMs', 'inferenceMs', 'decodeMs'].every((k) => typeof w[k] === 'number')
            ? `; worker per frame: pixels ${(w.convertMs ?? 0).toFixed(1)} ms, letterbox ${w.preprocessMs.toFixed(1)} ms, network ${w.inferenceMs.toFixed(1)} ms, decode ${w.decodeMs.toFixed(1)} ms`
            : '';
          rows.push({
            // The page's rate with its frames in flight (the Objects page's pipeline), against the server's.
            name: `in-browser ${what} at 416x416, 640x480 fake camera, tfjs backend ${backend}${threads}, ${r.depth ?? 1} frames in flight, ${r.object_lanes ? `${r.object_lanes} object lanes` : 'the engine worker alone'} (${r.frames} frames, page round trip ${r.ms_per_frame_median.toFixed(1)} ms${steps})`,
            unit: 'fps',
            lookout: r.fps,
            reference: 1000 / referenceMs,
            referenceName: 'POST /api/objects/detect round trips, same frame',
            ratio: r.fps / (1000 / referenceMs),
            ...(backend === 'wasm' ? { goal: '>= 10 fps' } : {}),
          });
        } else {
          // Where a frame's time goes inside the engine worker (medians): pixels to gray, the cascade, the recognizer.
          const w = r.worker_ms_median;
          const steps = ['convertMs', 'detectMs', 'recognizeMs'].every((k) => typeof w[k] === 'number')
            ? `; worker per frame: pixels ${w.convertMs.toFixed(1)} ms, cascade ${w.detectMs.toFixed(1)} ms (${r.cascade_scan} scan, ${r.cascade_threads} threads), ${mode} ${w.recognizeMs.toFixed(1)} ms; page: frame grab ${(w.grabMs ?? 0).toFixed(1)} ms, round trip ${r.ms_per_frame_median.toFixed(1)} ms`
            : '';
          rows.push({
            name: `in-browser ${what}, 640x480 fake camera, ${backend}${threads} (${r.frames} frames, labels ${r.labels.join(',') || 'none'}${steps})`,
            unit: 'fps',
            lookout: r.fps,
            reference: 1000 / referenceMs,
            referenceName: 'POST /api/recognize round trips, same frame',
            ratio: r.fps / (1000 / referenceMs),
            ...(mode === 'lbph' && backend === 'wasm' ? { goal: '>= 15 fps' } : {}),
          });
        }
      }
    }
    return rows;
  } finally {
    await server.close();
  }
}
