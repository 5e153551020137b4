import { describe, expect, it, vi } from 'vitest';
import { defaultLanePlan, ObjectPool, type Lane } from './object-pool';
import type { DetectObjectsResult, FramePixels } from './protocol';

const frame: FramePixels = { kind: 'rgba', width: 1, height: 1, data: new Uint8Array(4) };

function answer(runtime = 'onnxruntime-web wasm'): DetectObjectsResult {
  return { objects: [], count: 0, summary: {}, detector: 'nanodet', runtime, timing: { totalMs: 1, convertMs: 0 } };
}

/** A call that answers when told to. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function setup(options: { loadFails?: boolean; plan?: { lanes: number; threadsPerLane: number } | null; idleMs?: number } = {}) {
  const mainCalls: ReturnType<typeof deferred<DetectObjectsResult>>[] = [];
  const lanes: { lane: Lane; loads: unknown[]; detects: ReturnType<typeof deferred<DetectObjectsResult>>[]; terminated: boolean }[] = [];
  const pool = new ObjectPool({
    main: () => {
      const d = deferred<DetectObjectsResult>();
      mainCalls.push(d);
      return d.promise;
    },
    urls: () => ({ nanodet: 'http://127.0.0.1/models/nanodet.json' }),
    plan: options.plan === undefined ? { lanes: 2, threadsPerLane: 1 } : options.plan,
    idleMs: options.idleMs ?? 60_000,
    startLane: () => {
      const state = {
        loads: [] as unknown[],
        detects: [] as ReturnType<typeof deferred<DetectObjectsResult>>[],
        terminated: false,
        lane: null as unknown as Lane,
      };
      state.lane = {
        run: ((op: string, args: unknown) => {
          if (op === 'load') {
            state.loads.push(args);
            return options.loadFails
              ? Promise.reject(new Error('no wasm'))
              : Promise.resolve({ detector: 'nanodet', runtime: 'onnxruntime-web wasm' });
          }
          const d = deferred<DetectObjectsResult>();
          state.detects.push(d);
          return d.promise;
        }) as Lane['run'],
        terminate: () => {
          state.terminated = true;
        },
      };
      lanes.push(state);
      return state.lane;
    },
  });
  return { pool, mainCalls, lanes };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('object lanes', () => {
  it('keeps frames one at a time on the engine worker, with no lane started', async () => {
    const { pool, mainCalls, lanes } = setup();
    for (let i = 0; i < 3; i++) {
      const p = pool.detect(frame, []);
      mainCalls[i].resolve(answer());
      expect((await p).lane).toBeUndefined();
    }
    expect(lanes).toHaveLength(0);
    expect(pool.laneCount).toBe(0);
  });

  it('starts single-threaded lanes when frames overlap, then spreads overlapping frames over them', async () => {
    const { pool, mainCalls, lanes } = setup();
    const first = pool.detect(frame, []);
    mainCalls[0].resolve(answer());
    await first;
    // Two at once: both on the engine worker while the lanes load.
    const a = pool.detect(frame, []);
    const b = pool.detect(frame, []);
    expect(mainCalls).toHaveLength(3);
    expect(lanes.map((l) => l.loads)).toEqual([
      [{ nanodet: 'http://127.0.0.1/models/nanodet.json', threads: 1 }],
      [{ nanodet: 'http://127.0.0.1/models/nanodet.json', threads: 1 }],
    ]);
    await pool.ready();
    mainCalls[1].resolve(answer());
    mainCalls[2].resolve(answer());
    await Promise.all([a, b]);
    expect(pool.laneCount).toBe(2);
    // Overlapping now: a lone first frame still goes to the engine worker, the next ones to the lanes.
    const c = pool.detect(frame, []);
    const d = pool.detect(frame, []);
    const e = pool.detect(frame, []);
    expect(mainCalls).toHaveLength(4);
    await tick();
    expect(lanes.map((l) => l.detects.length)).toEqual([1, 1]);
    mainCalls[3].resolve(answer());
    lanes[0].detects[0].resolve(answer());
    lanes[1].detects[0].resolve(answer());
    expect((await Promise.all([c, d, e])).map((r) => r.lane)).toEqual([undefined, 1, 2]);
    pool.terminate();
    expect(lanes.every((l) => l.terminated)).toBe(true);
  });

  it('stops idle lanes and never starts them off WASM, without a plan, or after they failed to load', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const idle = setup({ idleMs: 50 });
    const first = idle.pool.detect(frame, []);
    idle.mainCalls[0].resolve(answer());
    await first;
    const both = [idle.pool.detect(frame, []), idle.pool.detect(frame, [])];
    await idle.pool.ready();
    idle.mainCalls[1].resolve(answer());
    idle.mainCalls[2].resolve(answer());
    await Promise.all(both);
    expect(idle.pool.laneCount).toBe(2);
    await vi.waitFor(() => expect(idle.pool.laneCount).toBe(0));
    expect(idle.lanes.every((l) => l.terminated)).toBe(true);

    for (const [options, runtime] of [
      [{}, 'onnxruntime-web webgpu'],
      [{ plan: null }, 'onnxruntime-web wasm'],
      [{ loadFails: true }, 'onnxruntime-web wasm'],
    ] as const) {
      const { pool, mainCalls, lanes } = setup(options);
      for (let round = 0; round < 2; round++) {
        const calls = [pool.detect(frame, []), pool.detect(frame, [])];
        await pool.ready();
        for (const m of mainCalls.splice(0)) m.resolve(answer(runtime));
        expect((await Promise.all(calls)).map((r) => r.lane)).toEqual([undefined, undefined]);
      }
      expect(pool.laneCount).toBe(0);
      if ('loadFails' in options) expect(lanes.map((l) => l.terminated)).toEqual([true, true]);
      else expect(lanes).toHaveLength(0);
    }
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it('plans a lane per frame in flight from 2 cores, sharing up to 4 cores', () => {
    expect(defaultLanePlan(1)).toBeNull();
    expect(defaultLanePlan(2)).toEqual({ lanes: 2, threadsPerLane: 1 });
    expect(defaultLanePlan(3)).toEqual({ lanes: 2, threadsPerLane: 1 });
    expect(defaultLanePlan(16)).toEqual({ lanes: 2, threadsPerLane: 2 });
  });
});
