/**
 * Picks and starts the tfjs backend inside the engine worker: WebGPU where the browser has a (hardware)
 * adapter, else WebGL (OffscreenCanvas) on a real GPU, else WASM (SIMD, with threads when the page is
 * cross-origin isolated). Every backend that was skipped is reported with the reason, in words. The WASM
 * binaries are this app's own build assets (Vite `?url`), so nothing is fetched from another origin.
 *
 * tfjs is imported here, lazily (its own chunk), when init starts the backend.
 */
import wasmPlainUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimdUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreadedUrl from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';
// The threaded build's Emscripten glue as shipped (not minified by our build): see withThreadedSetup() below.
import threadedGlueUrl from '@tensorflow/tfjs-backend-wasm/wasm-out/tfjs-backend-wasm-threaded-simd.js?url';
import { errorText as messageOf } from '../../../shared/recognition/worker-messages';
import type { BackendAttempt, BackendChoice, BackendReport, TfBackend } from './protocol';
import { pthreadPoolSize, withPthreadPoolSize } from './pthread-pool';

export type Tf = typeof import('@tensorflow/tfjs');

const ORDER: TfBackend[] = ['webgpu', 'webgl', 'wasm'];

let tfModule: Promise<Tf> | null = null;

/** The one tfjs instance of this worker (face-api's no-bundle build imports the same modules). */
export function loadTf(): Promise<Tf> {
  tfModule ??= import('@tensorflow/tfjs');
  return tfModule;
}

// Renderers that emulate a GPU on the CPU: tfjs (and onnxruntime, objects.ts) on them is many times slower than on WASM.
export const SOFTWARE_GPU = /swiftshader|llvmpipe|softpipe|software|basic render/i;

/**
 * Why a backend cannot run here before tfjs tries it, or null when it may. With `auto`, a GPU backend that
 * is only a software emulation counts as unavailable (explicitly requested, it is used anyway).
 */
async function preflight(backend: TfBackend, auto: boolean): Promise<string | null> {
  if (backend === 'webgpu') {
    const gpu = (navigator as Navigator & { gpu?: { requestAdapter(): Promise<GpuAdapterLike | null> } }).gpu;
    if (!gpu) return 'this browser offers no WebGPU here (navigator.gpu is missing)';
    let adapter: GpuAdapterLike | null;
    try {
      adapter = await gpu.requestAdapter();
    } catch (err) {
      return `requesting a WebGPU adapter failed: ${messageOf(err)}`;
    }
    if (!adapter) return 'the browser found no WebGPU adapter (no usable GPU, or WebGPU is disabled)';
    const info = adapter.info;
    const name = [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ');
    if (auto && (info?.isFallbackAdapter || adapter.isFallbackAdapter || SOFTWARE_GPU.test(name))) {
      return `the only WebGPU adapter is a software emulation on the CPU (${name || 'fallback adapter'}), slower than WASM`;
    }
    return null;
  }
  if (backend === 'webgl') {
    if (typeof OffscreenCanvas === 'undefined') return 'this browser has no OffscreenCanvas, so WebGL cannot run in a worker';
    const canvas = new OffscreenCanvas(1, 1);
    const gl = (canvas.getContext('webgl2') ?? canvas.getContext('webgl')) as WebGLRenderingContext | null;
    if (!gl) return 'WebGL is not available (no GPU, or the browser disabled WebGL)';
    const debug = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(gl.getParameter(debug ? debug.UNMASKED_RENDERER_WEBGL : gl.RENDERER) ?? '');
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    if (auto && SOFTWARE_GPU.test(renderer)) return `WebGL runs on a software emulation of a GPU (${renderer}), slower than WASM`;
    return null;
  }
  if (typeof WebAssembly !== 'object') return 'this browser has no WebAssembly';
  return null;
}

interface GpuAdapterLike {
  isFallbackAdapter?: boolean;
  info?: { vendor?: string; architecture?: string; description?: string; isFallbackAdapter?: boolean };
}

/** tfjs logs a failed backend start with console.warn and returns false; keep the text as the reason. */
async function withWarnings<T>(fn: () => Promise<T>): Promise<{ value: T; warnings: string[] }> {
  const warnings: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    warnings.push(args.map(messageOf).join(' '));
    original.apply(console, args);
  };
  try {
    return { value: await fn(), warnings };
  } finally {
    console.warn = original;
  }
}

let wasmConfigured = false;

const THREADED_MAIN = 'var WasmBackendModuleThreadedSimd = ';

/** XNNPACK threads for the WASM backend: every core, up to 4. */
function wasmThreads(): number {
  return Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
}

/**
 * Runs `fn` (the WASM backend's start) with three fixes for its threaded build:
 * - The Blob tfjs makes for its threads holds the Emscripten factory's source text (`Function.toString()`).
 *   Our minified bundle renames a variable that text reads from its enclosing scope, so in a thread it fails
 *   ("e is not defined"); the Blob loads the shipped glue file instead, which is what tfjs's own bundles hand over.
 * - The C++ side caps its pool at half the logical cores (it assumes hyper-threading): for the start, the
 *   worker reports twice the threads wanted, so a 2-core device computes on 2 threads, not 1.
 * - Emscripten's pthread pool is built with the workers those threads need, not the build's fixed 8
 *   (pthread-pool.ts).
 */
async function withThreadedSetup<T>(fn: () => Promise<T>): Promise<T> {
  const RealBlob = self.Blob;
  const glue = new URL(threadedGlueUrl, self.location.href).href;
  class GlueBlob extends RealBlob {
    constructor(parts?: BlobPart[], options?: BlobPropertyBag) {
      const text = parts?.length === 1 && typeof parts[0] === 'string' ? parts[0] : null;
      super(text?.startsWith(THREADED_MAIN) ? [`importScripts(${JSON.stringify(glue)});`] : parts, options);
    }
  }
  self.Blob = GlueBlob;
  const nav = self.navigator;
  const threads = wasmThreads(); // before the line below changes what it reads
  Object.defineProperty(nav, 'hardwareConcurrency', { value: 2 * threads, configurable: true });
  try {
    return await withPthreadPoolSize(pthreadPoolSize(threads), fn);
  } finally {
    self.Blob = RealBlob;
    delete (nav as { hardwareConcurrency?: number }).hardwareConcurrency; // back to the real getter
  }
}

async function start(tf: Tf, backend: TfBackend, auto: boolean): Promise<string | null> {
  const why = await preflight(backend, auto);
  if (why) return why;
  if (backend === 'webgpu') await import('@tensorflow/tfjs-backend-webgpu');
  if (backend === 'wasm' && !wasmConfigured) {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    // Before the backend first starts (tfjs refuses later): every binary from this origin.
    wasm.setWasmPaths({
      'tfjs-backend-wasm.wasm': wasmPlainUrl,
      'tfjs-backend-wasm-simd.wasm': wasmSimdUrl,
      'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedUrl,
    });
    wasm.setThreadsCount(wasmThreads());
    wasmConfigured = true;
  }
  let started: { value: boolean; warnings: string[] };
  try {
    started = await withWarnings(() => (backend === 'wasm' ? withThreadedSetup(() => tf.setBackend(backend)) : tf.setBackend(backend)));
  } catch (err) {
    return `tfjs could not start ${backend}: ${messageOf(err)}`;
  }
  if (!started.value) {
    const detail = started.warnings.filter((w) => w.trim()).join('; ');
    return `tfjs could not start ${backend}${detail ? `: ${detail}` : ''}`;
  }
  // A backend that starts but cannot compute (a lost context, a broken driver) is no better than none.
  try {
    await tf.ready();
    const probe = tf.add(tf.scalar(1), tf.scalar(2));
    const value = (await probe.data())[0];
    probe.dispose();
    if (value !== 3) return `${backend} computed 1 + 2 = ${value}`;
  } catch (err) {
    return `${backend} started but failed a test computation: ${messageOf(err)}`;
  }
  return null;
}

/**
 * Starts the requested backend, or the first that works in the order WebGPU, WebGL, WASM (for an explicit
 * request, the ones after it are the fallbacks); `auto` passes over GPUs emulated in software. Throws only
 * when none starts.
 */
export async function startBackend(requested: BackendChoice): Promise<{ tf: Tf; report: BackendReport }> {
  const tf = await loadTf();
  const candidates =
    requested === 'auto' ? ORDER : [requested, ...ORDER.filter((b) => b !== requested && ORDER.indexOf(b) > ORDER.indexOf(requested))];
  const attempts: BackendAttempt[] = [];
  for (const backend of candidates) {
    // A fallback after an explicit request is chosen as `auto` would choose it.
    const reason = await start(tf, backend, requested === 'auto' || backend !== requested);
    if (reason === null) {
      attempts.push({ backend, ok: true });
      const report: BackendReport = { requested, backend, attempts, crossOriginIsolated: self.crossOriginIsolated === true };
      if (backend === 'wasm') {
        const wasm = await import('@tensorflow/tfjs-backend-wasm');
        report.wasm = {
          simd: (await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) === true,
          threads: (await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT')) === true,
          threadsCount: wasm.getThreadsCount(),
        };
      }
      return { tf, report };
    }
    attempts.push({ backend, ok: false, reason });
  }
  throw new Error(`no tfjs backend could start: ${attempts.map((a) => `${a.backend}: ${a.reason}`).join('; ')}`);
}
