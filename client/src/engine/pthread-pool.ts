/**
 * The size of the threaded tfjs WASM backend's pthread pool (#38 part 3).
 *
 * tfjs-backend-wasm's threaded build is compiled with Emscripten's PTHREAD_POOL_SIZE=8: its glue starts 8
 * workers (`PThread.initMainThread`) and loads the WebAssembly module into each before the backend is ready,
 * whatever the threads XNNPACK is told to use (each idle one: about 2 MiB of the renderer's memory, and 16.5 MiB
 * in the JS heap the browser reports, its share of the shared WebAssembly memory included). The glue reads no Module
 * option for it; but it publishes its PThread object (`Module.PThread = PThread`) before it builds the pool,
 * and tfjs's Module is a plain object, so a setter on Object.prototype, there only while the backend starts,
 * sees that object and makes `initMainThread` start the workers that are used instead.
 *
 * The pool must hold every thread XNNPACK starts: its pool creation blocks the engine worker until they all run,
 * and a worker Emscripten created then, on demand, would only start once its parent returned to its event loop
 * (why Emscripten builds a pool in advance at all).
 */

/** The part of Emscripten's PThread object the pool size concerns. */
interface EmscriptenPThread {
  initMainThread(): void;
  allocateUnusedWorker(): void;
}

function isPThread(value: unknown): value is EmscriptenPThread {
  const candidate = value as Partial<EmscriptenPThread> | null;
  return typeof candidate?.initMainThread === 'function' && typeof candidate.allocateUnusedWorker === 'function';
}

/**
 * Workers the pool needs for XNNPACK on `threads` threads: pthreadpool_create(n) starts n - 1 threads (the
 * calling one computes too). At least 1: the glue resolves only once every pool worker has loaded the
 * module, a count it starts at the pool's size and never reaches from 0.
 */
export function pthreadPoolSize(threads: number): number {
  return Math.max(1, Math.floor(threads) - 1);
}

/** Runs `fn` (the backend's start) with Emscripten's pthread pool built at `size` workers rather than 8. */
export async function withPthreadPoolSize<T>(size: number, fn: () => Promise<T>): Promise<T> {
  const proto = Object.prototype as { PThread?: unknown };
  Object.defineProperty(proto, 'PThread', {
    configurable: true,
    set(this: object, value: unknown) {
      // The assignment still makes an ordinary property of the object it was made on (the glue's Module).
      Object.defineProperty(this, 'PThread', { value, writable: true, enumerable: true, configurable: true });
      if (!isPThread(value)) return;
      value.initMainThread = () => {
        for (let i = 0; i < size; i++) value.allocateUnusedWorker();
      };
    },
  });
  try {
    return await fn();
  } finally {
    delete proto.PThread;
  }
}
