/**
 * #38 part 3: the threaded tfjs WASM backend starts the pthread workers it computes on, not Emscripten's fixed 8.
 * The glue is the shipped one (the file Vite bundles), run as in a worker with a fake Worker that counts what it
 * starts; its WebAssembly is never instantiated (the pool is built before), so nothing runs on the threads.
 */
import glueSource from '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js?raw';
import { describe, expect, it } from 'vitest';
import { pthreadPoolSize, withPthreadPoolSize } from './pthread-pool';

/** Calls the glue's factory as tfjs does (a plain Module object) and counts the workers it starts. */
function startGlue(): { workers: string[]; module: Record<string, unknown> } {
  const workers: string[] = [];
  const globals: Record<string, unknown> = {
    importScripts() {},
    location: { href: 'http://127.0.0.1/assets/worker.js' },
    navigator: { hardwareConcurrency: 4 },
    Worker: class {
      constructor(url: string) {
        workers.push(url);
      }
      postMessage() {}
      terminate() {}
    },
    // Not Node: without these the glue takes the worker's paths.
    process: undefined,
    require: undefined,
    module: undefined,
    exports: undefined,
  };
  globals.self = globals;
  const names = Object.keys(globals);
  const factory = new Function(...names, `${glueSource}\nreturn WasmBackendModuleThreadedSimd;`)(...names.map((n) => globals[n])) as (
    m: object,
  ) => Promise<unknown>;
  const module: Record<string, unknown> = {
    locateFile: (file: string) => `blob:${file}`,
    // Never answered: the factory stops where it would load the module into the pool's workers.
    instantiateWasm: () => ({}),
  };
  void factory(module);
  return { workers, module };
}

describe('the threaded WASM backend’s pthread pool', () => {
  it('is sized to the threads XNNPACK starts besides the engine worker, at least 1', () => {
    expect(pthreadPoolSize(1)).toBe(1);
    expect(pthreadPoolSize(2)).toBe(1);
    expect(pthreadPoolSize(4)).toBe(3);
  });

  it('is 8 workers in the shipped glue, whatever the threads', () => {
    expect(startGlue().workers).toHaveLength(8);
  });

  it('starts only the workers asked for while the backend starts, and 8 again after', async () => {
    let started: ReturnType<typeof startGlue> | null = null;
    await withPthreadPoolSize(1, async () => {
      started = startGlue();
    });
    expect(started!.workers).toEqual(['blob:tfjs-backend-wasm-threaded-simd.worker.js']);
    // The glue's own property, as without the hook; nothing left on Object.prototype.
    expect(Object.hasOwn(started!.module, 'PThread')).toBe(true);
    expect('PThread' in {}).toBe(false);
    expect(startGlue().workers).toHaveLength(8);

    await withPthreadPoolSize(3, async () => {
      started = startGlue();
    });
    expect(started!.workers).toHaveLength(3);
  });

  it('leaves other objects’ PThread properties as plain properties', async () => {
    const other: { PThread?: unknown } = {};
    await withPthreadPoolSize(1, async () => {
      other.PThread = 42;
    });
    expect(Object.getOwnPropertyDescriptor(other, 'PThread')).toMatchObject({ value: 42, writable: true, enumerable: true });
  });
});
