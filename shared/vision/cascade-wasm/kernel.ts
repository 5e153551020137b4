/**
 * One compiled kernel: the module generated for a cascade and a row stride (the scalar functions, the pyramid's
 * resize and integrals, and with SIMD the four-window ones), instantiated on the thread's one shared memory, and
 * the memory plan of a pyramid (integral rows from address 0, then the accepted windows, the source image, the
 * resize tables and the level) behind the HaarKernel interface. Part of haar-wasm.ts, which caches kernels.
 */
import { buildModule, type FunctionDef } from '../../wasm/builder.js';
import { type WasmMemory, wasm, WASM_PAGE as PAGE } from '../../wasm/runtime.js';
import { axisTable } from '../../image/ops.js';
import type { HaarCascade } from '../cascade/parse.js';
import { hlineFunction, integralsFunction, integralsSplitFunction, resizeFunction } from '../pyramid-wasm.js';
import type { Layout } from './emit.js';
import { evalWindow, scalarScan, stage } from './scalar.js';
import { eval4, maxTreeDepth, scan4, stage4 } from './simd.js';

/** A compiled scan for one cascade and one row stride. */
export interface HaarKernel {
  /** Cells per plane row: the widest level's width + 1 fits. */
  readonly stride: number;
  /** Cells per memory row (planes x stride). */
  readonly pitch: number;
  /** Cell offset of the squared-sum plane and, for tilted cascades, of the tilted plane, within a row. */
  readonly sqOffset: number;
  readonly tiltedOffset: number;
  /** Whether levels are scanned four windows at a time (WebAssembly SIMD): step-2 ones too unless the cascade is tilted. */
  readonly simd: boolean;
  /**
   * Starts a pyramid: lays out the memory for an 8-bit `srcW` x `srcH` image whose first (largest) level is
   * `w0` x `h0`, and copies the image in.
   */
  begin(src: Uint8Array, srcW: number, srcH: number, w0: number, h0: number): void;
  /**
   * Resizes the image to the level's `lw` x `lh` (INTER_LINEAR_EXACT) and writes its sum and squared-sum integrals,
   * in the layout the scan of a level at `ystep` reads (the split one for step 2 with SIMD: see emit.ts).
   */
  level(lw: number, lh: number, ystep?: number): void;
  /**
   * The level's pixels and the integral cells (plain layout: tilted cascades are never split), for a tilted
   * integral written in JavaScript (tiltedIntegral at `tiltedOffset`, row stride `pitch`); valid until the next `begin`.
   */
  views(lw: number, lh: number): { pixels: Uint8Array; cells: Int32Array };
  /**
   * Scans the last level's windows (x < workW, y < workH, step `ystep`, as given to `level`) and returns the
   * accepted windows' cell indices (y * pitch + x) in OpenCV's order.
   */
  scan(workW: number, workH: number, ystep: number): Int32Array;
}

/**
 * The module, exporting resize and integrals (a level's image work, pyramid-wasm.ts), scan (any level, one window
 * at a time) and, with `withSimd`, scan4 (step-1 levels, four windows at a time) and, for cascades without tilted
 * features, integrals2 and scan4x2 (step-2 levels in the split layout). Functions: scan, evalWindow, the stages,
 * hline, resize, integrals; then scan4, eval4 and the SIMD stages; then integrals2, scan4x2, its eval4 and stages.
 */
function generate(c: HaarCascade, L: Layout, withSimd: boolean): Uint8Array {
  const EVAL = 1;
  const FIRST_STAGE = 2;
  const functions: FunctionDef[] = [scalarScan(c, L, EVAL), evalWindow(c, FIRST_STAGE)];
  for (let s = 0; s < c.stageCount; s++) functions.push(stage(c, L, s));
  const hline = functions.length;
  functions.push(
    hlineFunction(),
    { ...resizeFunction(hline), name: 'resize' },
    { ...integralsFunction(L.pitch, L.sqOffset), name: 'integrals' },
  );
  if (withSimd) {
    const scan4Index = functions.length;
    const eval4Index = scan4Index + 1;
    const firstStage4 = scan4Index + 2;
    functions.push(scan4(c, L, eval4Index, firstStage4), eval4(c, firstStage4));
    const depth = maxTreeDepth(c);
    for (let s = 0; s < c.stageCount; s++) functions.push(stage4(c, L, s, depth));
    // Split planes of a tilted cascade would need the tilted integral split too: its step-2 levels stay scalar.
    if (!c.hasTiltedFeatures) {
      const split: Layout = { ...L, half: L.stride / 2 };
      functions.push({ ...integralsSplitFunction(L.pitch, L.sqOffset, split.half!), name: 'integrals2' });
      const scan4x2Index = functions.length;
      functions.push(scan4(c, split, scan4x2Index + 1, scan4x2Index + 2, 2), eval4(c, scan4x2Index + 2));
      for (let s = 0; s < c.stageCount; s++) functions.push(stage4(c, split, s, depth));
    }
  }
  return buildModule(functions);
}

/** Bytes past the planes' end that a 16-byte load of the last row's last group may touch. */
const SLACK_BYTES = 64;

/**
 * The one memory every kernel of this thread works in (detection is synchronous, so they never overlap): it
 * grows to the largest pyramid seen and is shared, not multiplied by the number of kernels.
 */
let sharedMemory: WasmMemory | null = null;

export class Kernel implements HaarKernel {
  readonly stride: number;
  readonly pitch: number;
  readonly sqOffset: number;
  readonly tiltedOffset: number;
  readonly simd: boolean;
  private readonly memory: WasmMemory;
  private readonly fn: {
    scan: (workW: number, workH: number, ystep: number, outBase: number) => number;
    scan4?: (workW: number, workH: number, outBase: number) => number;
    scan4x2?: (workW: number, workH: number, outBase: number) => number;
    resize: (...args: number[]) => void;
    integrals: (img: number, w: number, h: number) => void;
    integrals2?: (img: number, w: number, h: number) => void;
  };
  /** Whether the last level was written in the split layout (scanned by scan4x2). */
  private split = false;
  private cells = new Int32Array(0);
  private bytes = new Uint8Array(0);
  /** Byte addresses of this pyramid's regions (see begin). */
  private at = { out: 0, src: 0, xofs: 0, xc1: 0, yofs: 0, yc1: 0, bufA: 0, bufB: 0, level: 0 };
  private src = { w: 0, h: 0 };

  constructor(cascade: HaarCascade, stride: number, withSimd: boolean) {
    const planes = cascade.hasTiltedFeatures ? 3 : 2;
    this.stride = stride;
    this.pitch = stride * planes;
    this.sqOffset = stride;
    this.tiltedOffset = cascade.hasTiltedFeatures ? 2 * stride : 0;
    this.simd = withSimd;
    const bytes = generate(cascade, this, withSimd);
    sharedMemory ??= new wasm!.Memory({ initial: 1 });
    const instance = new wasm!.Instance(new wasm!.Module(bytes), { env: { memory: sharedMemory } });
    this.memory = sharedMemory;
    this.fn = instance.exports as Kernel['fn'];
  }

  /** Views on the memory, made again when growing it has replaced its buffer. */
  private refresh(): void {
    if (this.cells.buffer !== this.memory.buffer) {
      this.cells = new Int32Array(this.memory.buffer);
      this.bytes = new Uint8Array(this.memory.buffer);
    }
  }

  begin(src: Uint8Array, srcW: number, srcH: number, w0: number, h0: number): void {
    // From address 0: the integral rows of the largest level (the scan's offsets count from there), slack, the
    // accepted windows (at most one per level pixel), the source image, the resize tables and row buffers, the level.
    const align = (n: number) => (n + 3) & ~3;
    const out = (h0 + 1) * this.pitch * 4 + SLACK_BYTES;
    const srcAt = out + (w0 + 1) * (h0 + 1) * 4;
    const xofs = align(srcAt + srcW * srcH);
    const xc1 = xofs + w0 * 4;
    const yofs = xc1 + w0 * 4;
    const yc1 = yofs + h0 * 4;
    const bufA = yc1 + h0 * 4;
    const bufB = bufA + w0 * 4;
    const level = bufB + w0 * 4;
    const need = level + w0 * h0;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / PAGE));
    this.refresh();
    this.at = { out, src: srcAt, xofs, xc1, yofs, yc1, bufA, bufB, level };
    this.src = { w: srcW, h: srcH };
    this.bytes.set(src.subarray(0, srcW * srcH), srcAt);
  }

  level(lw: number, lh: number, ystep = 1): void {
    const { at, src } = this;
    if (lw === src.w && lh === src.h) {
      this.bytes.copyWithin(at.level, at.src, at.src + lw * lh);
    } else {
      const xt = axisTable(src.w, lw);
      const yt = axisTable(src.h, lh);
      this.cells.set(xt.ofs, at.xofs >> 2);
      this.cells.set(xt.c1, at.xc1 >> 2);
      this.cells.set(yt.ofs, at.yofs >> 2);
      this.cells.set(yt.c1, at.yc1 >> 2);
      this.fn.resize(
        at.src,
        src.w,
        src.h,
        at.level,
        lw,
        lh,
        at.xofs,
        at.xc1,
        xt.min,
        xt.max,
        at.yofs,
        at.yc1,
        yt.min,
        yt.max,
        at.bufA,
        at.bufB,
      );
    }
    this.split = ystep === 2 && this.fn.integrals2 !== undefined;
    if (this.split) this.fn.integrals2!(at.level, lw, lh);
    else this.fn.integrals(at.level, lw, lh);
  }

  views(lw: number, lh: number): { pixels: Uint8Array; cells: Int32Array } {
    return { pixels: this.bytes.subarray(this.at.level, this.at.level + lw * lh), cells: this.cells };
  }

  scan(workW: number, workH: number, ystep: number): Int32Array {
    const out = this.at.out;
    let n: number;
    if (this.split) {
      if (ystep !== 2) throw new Error('HaarKernel.scan: the level was written for a step-2 scan');
      n = this.fn.scan4x2!(workW, workH, out);
    } else {
      n = ystep === 1 && this.fn.scan4 ? this.fn.scan4(workW, workH, out) : this.fn.scan(workW, workH, ystep, out);
    }
    return this.cells.subarray(out >> 2, (out >> 2) + n);
  }
}
