/**
 * The Haar cascade's window scan as WebAssembly generated from the cascade itself: every rect corner becomes a
 * load with a constant offset, every weight, threshold and leaf an immediate. It computes exactly what
 * the JavaScript scan (cascade/evaluate.ts) computes (OpenCV 4.6's runAt): integer rect sums, the feature value in
 * float (f32 ops round as Math.fround does), the stage sum in double, the same window order and stage-0 skip
 * rule. With SIMD every level goes four windows at a time, lane by lane the same arithmetic: adjacent windows
 * on levels scanned at step 1, the windows x, x+2, x+4, x+6 on levels scanned at step 2, whose integrals are
 * then written with even and odd columns apart (cascade-wasm/emit.ts), so each corner is still one load (cascades
 * with tilted features keep their step-2 levels scalar). The same module resizes each level and writes its
 * integrals (pyramid-wasm.ts). On a 640x480 frame (same run, Node 20): JavaScript 159 ms, scalar WebAssembly
 * 76 ms, with SIMD 53 ms, and about 13% less CPU again with the step-2 levels in SIMD (issue #16); the server and
 * the browser's engine worker run the same code. Hosts without SIMD get the scalar module, hosts without
 * WebAssembly the JavaScript.
 *
 * Memory (one per thread, shared by its kernels) starts with the integral rows, each row interleaving the planes
 * the scan reads: the sum, the squared sum and, for cascades with tilted features, the tilted sum, each `stride`
 * cells wide. So a rect corner's offset depends on the stride alone; a module serves every image whose pyramid
 * fits that stride.
 *
 * This module is the public entry and keeps the kernels per cascade and stride; the generator lives in
 * cascade-wasm/: emit.ts (layouts and feature tests shared by both kernels), scalar.ts (one window at a time),
 * simd.ts (four windows at a time) and kernel.ts (the module, its memory plan and the HaarKernel it runs behind).
 */
import type { HaarCascade } from './haar-cascade.js';
import { wasm } from '../wasm/runtime.js';
import { Kernel, type HaarKernel } from './cascade-wasm/kernel.js';

export type { HaarKernel } from './cascade-wasm/kernel.js';

/** Why the generated kernel cannot run here (no WebAssembly, or it failed to compile), or null. */
let unavailable: string | null = wasm ? null : 'this runtime has no WebAssembly';

/** Why the WebAssembly scan is not used here, or null when it is. */
export function haarWasmUnavailable(): string | null {
  return unavailable;
}

// Modules per cascade, by stride: a new one costs ~60 to 160 ms to generate and compile (the step-2 levels' SIMD
// functions made it 1.5x), so strides come in steps, powers of two up to 1024 (a 640x480 frame's pyramid takes
// 512, 1280x720 1024), then multiples of 512 (rows at most 512 cells wider than needed for large photos).
const MIN_STRIDE = 128;
const LARGE_STRIDE_STEP = 512;
const MAX_MODULES_PER_CASCADE = 6;

/** The row stride of the kernel serving rows of at least `minStride` cells. */
export function strideFor(minStride: number): number {
  if (minStride > 1024) return Math.ceil(minStride / LARGE_STRIDE_STEP) * LARGE_STRIDE_STEP;
  let stride = MIN_STRIDE;
  while (stride < minStride) stride *= 2;
  return stride;
}

const kernels = new WeakMap<HaarCascade, Map<string, Kernel>>();
/** Set once a SIMD module failed to compile here (a host without WebAssembly SIMD): scalar modules from then on. */
let simdUnavailable = false;

/**
 * What detectMultiScale's `auto` scan runs on this host for `cascade`: `simd`, `wasm` (WebAssembly without SIMD)
 * or `js`. Finds out by compiling the kernel for rows of `minStride` cells (512: a 640x480 frame's), so the
 * first detection on such frames finds it ready.
 */
export function haarScanFor(cascade: HaarCascade, minStride = 512): 'simd' | 'wasm' | 'js' {
  const k = haarKernel(cascade, minStride);
  return k ? (k.simd ? 'simd' : 'wasm') : 'js';
}

/**
 * The kernel for `cascade` with rows of at least `minStride` cells, with SIMD when `withSimd` and the host has it,
 * or null where WebAssembly cannot be used (see haarWasmUnavailable): the caller then scans in JavaScript.
 */
export function haarKernel(cascade: HaarCascade, minStride: number, withSimd = true): HaarKernel | null {
  if (unavailable) return null;
  const stride = strideFor(minStride);
  let byKey = kernels.get(cascade);
  if (!byKey) {
    byKey = new Map();
    kernels.set(cascade, byKey);
  }
  const useSimd = withSimd && !simdUnavailable;
  const key = `${stride}${useSimd ? 's' : ''}`;
  let k = byKey.get(key);
  if (!k) {
    try {
      k = new Kernel(cascade, stride, useSimd);
    } catch (err) {
      if (useSimd) {
        simdUnavailable = true;
        return haarKernel(cascade, minStride, false);
      }
      // e.g. a browser's main thread refusing large synchronous compiles, or a CSP without wasm-unsafe-eval.
      unavailable = `the WebAssembly cascade could not be compiled here: ${err instanceof Error ? err.message : String(err)}`;
      return null;
    }
    if (byKey.size >= MAX_MODULES_PER_CASCADE) byKey.delete(byKey.keys().next().value as string);
    byKey.set(key, k);
  }
  return k;
}
