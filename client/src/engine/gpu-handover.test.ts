/**
 * #29: the first object detection never waits for WebGPU. No GPU is lent to these tests: the GPU lane is a slow
 * fake backend (its load takes WARM_MS, like onnxruntime-web's WebGPU session creation, 29.7 s on an H100), and
 * the engine worker a fast fake WASM one. What is tested is the switching: who answers each frame, that the
 * WebGPU session is created once, and what the page is told.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Lane, type ObjectBackend, ObjectPool } from './object-pool';
import type { DetectObjectsResult, FramePixels } from './protocol';

const frame: FramePixels = { kind: 'rgba', width: 1, height: 1, data: new Uint8Array(4) };
const WARM_MS = 400;

function answer(runtime: string): DetectObjectsResult {
  return { objects: [], count: 0, summary: {}, detector: 'nanodet', runtime, timing: { totalMs: 1, convertMs: 0 } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface GpuFake {
  loads: unknown[];
  detects: number;
  terminated: boolean;
}

function setup(options: { gpu?: 'ok' | 'unavailable' | 'wasm-instead' | 'crashes'; yolo?: boolean; mainMs?: number } = {}) {
  const gpuLanes: GpuFake[] = [];
  const seen: ObjectBackend[] = [];
  let mainDetects = 0;
  const pool = new ObjectPool({
    main: async () => {
      mainDetects++;
      await sleep(options.mainMs ?? 5);
      return answer('onnxruntime-web wasm');
    },
    urls: () => ({ nanodet: 'http://127.0.0.1/models/nanodet.json', ...(options.yolo ? { yolo: 'http://127.0.0.1/models/y.onnx' } : {}) }),
    plan: null,
    onBackend: (b) => seen.push({ ...b }),
    startGpuLane: () => {
      const fake: GpuFake = { loads: [], detects: 0, terminated: false };
      gpuLanes.push(fake);
      return {
        run: (async (op: string, args: unknown) => {
          if (fake.terminated) throw new Error('the WebGPU object lane was stopped');
          if (op === 'load') {
            fake.loads.push(args);
            await sleep(WARM_MS); // the slow part: session creation and shader compilation
            if (options.gpu === 'unavailable') throw new Error('this worker has no WebGPU adapter on a real GPU');
            return {
              detector: 'nanodet',
              runtime: options.gpu === 'wasm-instead' ? 'onnxruntime-web wasm' : 'onnxruntime-web webgpu',
              loadMs: WARM_MS,
            };
          }
          fake.detects++;
          if (options.gpu === 'crashes') throw new Error('device lost');
          return answer('onnxruntime-web webgpu');
        }) as Lane['run'],
        terminate: () => {
          fake.terminated = true;
        },
      };
    },
  });
  return { pool, gpuLanes, seen, mainDetects: () => mainDetects };
}

afterEach(() => vi.restoreAllMocks());

describe('WebGPU takes over object detection once warm', () => {
  it('answers the first frames on WASM at once, then every frame on WebGPU, creating its session once', async () => {
    const { pool, gpuLanes, seen, mainDetects } = setup();
    pool.useGpu(true);
    const first = await pool.detect(frame, []);
    // Answered while the WebGPU session was still being created: nobody waited for it.
    expect(first.runtime).toBe('onnxruntime-web wasm');
    expect(pool.current).toEqual({ runtime: 'onnxruntime-web wasm', gpu: 'warming' });

    // Frames and further warm-up calls while it warms: all on WASM, still one session being created.
    for (let i = 0; i < 5; i++) {
      pool.warmGpu();
      expect((await pool.detect(frame, [])).runtime).toBe('onnxruntime-web wasm');
    }
    expect(gpuLanes).toHaveLength(1);
    expect(gpuLanes[0].loads).toEqual([{ nanodet: 'http://127.0.0.1/models/nanodet.json', threads: 1, gpu: true }]);

    await pool.gpuReady();
    expect(pool.current).toEqual({ runtime: 'onnxruntime-web wasm', gpu: 'warm', gpuWarmMs: WARM_MS });
    const after = await Promise.all([pool.detect(frame, []), pool.detect(frame, []), pool.detect(frame, [])]);
    expect(after.map((r) => r.runtime)).toEqual(Array(3).fill('onnxruntime-web webgpu'));
    pool.warmGpu();
    await pool.detect(frame, []);

    // Each frame once, by one backend; one lane, one load, ever.
    expect(mainDetects()).toBe(6);
    expect(gpuLanes[0].detects).toBe(4);
    expect(gpuLanes).toHaveLength(1);
    expect(gpuLanes[0].loads).toHaveLength(1);
    expect(seen.map((b) => [b.gpu, b.runtime])).toEqual([
      ['warming', null],
      ['warming', 'onnxruntime-web wasm'],
      ['warm', 'onnxruntime-web wasm'],
      ['warm', 'onnxruntime-web webgpu'],
    ]);
    pool.terminate();
    expect(gpuLanes[0].terminated).toBe(true);
  });

  it('a WASM frame still in flight when WebGPU takes over ends on WASM without the page going back to WASM', async () => {
    const { pool, seen } = setup({ mainMs: WARM_MS * 2 });
    pool.useGpu(true);
    const slowFirst = pool.detect(frame, []);
    await pool.gpuReady();
    expect((await pool.detect(frame, [])).runtime).toBe('onnxruntime-web webgpu');
    expect((await slowFirst).runtime).toBe('onnxruntime-web wasm');
    expect(pool.current.runtime).toBe('onnxruntime-web webgpu');
    expect(seen.at(-1)).toEqual({ runtime: 'onnxruntime-web webgpu', gpu: 'warm', gpuWarmMs: WARM_MS });
    pool.terminate();
  });

  it('gives WebGPU up for good, with the reason, when its lane cannot run it, and stays on WASM', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    for (const [gpu, reason] of [
      ['unavailable', 'this worker has no WebGPU adapter on a real GPU'],
      ['wasm-instead', 'the WebGPU lane runs onnxruntime-web wasm'],
    ] as const) {
      const { pool, gpuLanes } = setup({ gpu });
      pool.useGpu(true);
      expect((await pool.detect(frame, [])).runtime).toBe('onnxruntime-web wasm');
      await pool.gpuReady();
      expect(pool.current).toEqual({ runtime: 'onnxruntime-web wasm', gpu: 'failed', gpuReason: reason });
      expect(gpuLanes[0].terminated).toBe(true);
      for (let i = 0; i < 3; i++) expect((await pool.detect(frame, [])).runtime).toBe('onnxruntime-web wasm');
      pool.warmGpu();
      expect(gpuLanes).toHaveLength(1); // never a second try
    }
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('falls back to WASM for the next frames when the warm GPU lane fails (that frame fails: its pixels went with it)', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { pool, gpuLanes, mainDetects } = setup({ gpu: 'crashes' });
    pool.useGpu(true);
    await pool.detect(frame, []);
    await pool.gpuReady();
    await expect(pool.detect(frame, [])).rejects.toThrow('device lost');
    expect(pool.current.gpu).toBe('failed');
    expect(pool.current.gpuReason).toBe('WebGPU stopped: device lost');
    expect((await pool.detect(frame, [])).runtime).toBe('onnxruntime-web wasm');
    expect(mainDetects()).toBe(2);
    expect(gpuLanes).toHaveLength(1);
    expect(gpuLanes[0].terminated).toBe(true);
  });

  it('starts no GPU lane without a hardware WebGPU backend or for a YOLO model, and stops a warming one with the pool', async () => {
    const off = setup();
    await off.pool.detect(frame, []);
    off.pool.warmGpu();
    expect(off.gpuLanes).toHaveLength(0);
    expect(off.pool.current).toEqual({ runtime: 'onnxruntime-web wasm', gpu: 'off' });

    const yolo = setup({ yolo: true });
    yolo.pool.useGpu(true);
    await yolo.pool.detect(frame, []);
    expect(yolo.gpuLanes).toHaveLength(0);

    const stopped = setup();
    stopped.pool.useGpu(true);
    await stopped.pool.detect(frame, []);
    stopped.pool.terminate();
    expect(stopped.gpuLanes[0].terminated).toBe(true);
    await stopped.pool.gpuReady();
    expect(stopped.pool.current.gpu).toBe('off');
  });
});
