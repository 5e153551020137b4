/**
 * The Haar cascade's window scan as WebAssembly generated from the cascade itself: every rect corner becomes a
 * load with a constant offset, every weight, threshold and leaf an immediate, every tree of up to three nodes a
 * branch-free select. It computes exactly what haar-cascade.ts's JavaScript scan computes (OpenCV 4.6's runAt):
 * integer rect sums, the feature value in float (f32 ops round as Math.fround does), the stage sum in double,
 * the same window order and stage-0 skip rule. About twice as fast as the JavaScript scan, on the server and
 * in the browser's engine worker alike.
 *
 * Memory holds one integral row after another, each row interleaving the planes the scan reads: the sum, the
 * squared sum and, for cascades with tilted features, the tilted sum, each `stride` cells wide. So a rect
 * corner's offset depends on the stride alone; a module serves every image whose pyramid fits that stride.
 */
import { buildModule, Code, F32, F64, I32, op, type FunctionDef } from '../wasm/builder.js';
import type { HaarCascade } from './haar-cascade.js';

/** A compiled scan for one cascade and one row stride. */
export interface HaarKernel {
  /** Cells per plane row: the widest level's width + 1 fits. */
  readonly stride: number;
  /** Cells per memory row (planes x stride). */
  readonly pitch: number;
  /** Cell offset of the squared-sum plane and, for tilted cascades, of the tilted plane, within a row. */
  readonly sqOffset: number;
  readonly tiltedOffset: number;
  /**
   * The integral memory for a level of `height` rows, to be filled before `scan`; valid until the next call
   * (growing the memory moves it).
   */
  integralMemory(height: number, windows: number): Int32Array;
  /**
   * Scans a level's windows (x < workW, y < workH, step `ystep`) and returns the accepted windows' cell
   * indices (y * pitch + x) in OpenCV's order.
   */
  scan(workW: number, workH: number, ystep: number): Int32Array;
}

const PAGE = 65536;
/** Trees with at most this many nodes are evaluated without branches (every node, then selects). */
const BRANCH_FREE_NODES = 3;

/** The part of the WebAssembly JavaScript API used here (shared/ is typed without the DOM's or Node's globals). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** Why the generated kernel cannot run here (no WebAssembly, or it failed to compile), or null. */
let unavailable: string | null = wasm ? null : 'this runtime has no WebAssembly';

/** Why the WebAssembly scan is not used here, or null when it is. */
export function haarWasmUnavailable(): string | null {
  return unavailable;
}

interface Layout {
  stride: number;
  pitch: number;
  sqOffset: number;
  tiltedOffset: number;
}

/** Emits the feature value test of `node`: float(w0*s0 + w1*s1 [+ w2*s2]) * vnf < threshold, as an i32. */
function emitCondition(c: HaarCascade, L: Layout, code: Code, node: number, P: number, VNF: number): void {
  const f = c.nodeFeature[node];
  const tilted = c.featureTilted[f] !== 0;
  const base = tilted ? L.tiltedOffset : 0;
  const pitch = L.pitch;
  for (let r = 0; r < 3; r++) {
    const weight = c.featureWeights[f * 3 + r];
    // OpenCV adds the third rect only when its weight is not zero; the first two always.
    if (r === 2 && weight === 0) break;
    const b = f * 12 + r * 4;
    const x = c.featureRects[b];
    const y = c.featureRects[b + 1];
    const w = c.featureRects[b + 2];
    const h = c.featureRects[b + 3];
    // CV_SUM_OFS / CV_TILTED_OFS corners, as cells from the window's top-left cell.
    const corners = tilted
      ? [x + pitch * y, x - h + pitch * (y + h), x + w + pitch * (y + w), x + w - h + pitch * (y + w + h)]
      : [x + pitch * y, x + w + pitch * y, x + pitch * (y + h), x + w + pitch * (y + h)];
    const [o0, o1, o2, o3] = corners.map((cell) => (base + cell) * 4);
    code.localGet(P).i32Load(o0).localGet(P).i32Load(o1).op(op.i32Sub);
    code.localGet(P).i32Load(o2).op(op.i32Sub).localGet(P).i32Load(o3).op(op.i32Add);
    code.op(op.f32ConvertI32S).f32Const(weight).op(op.f32Mul);
    if (r > 0) code.op(op.f32Add);
  }
  code.localGet(VNF).op(op.f32Mul).f32Const(c.nodeThreshold[node]).op(op.f32Lt);
}

/** Links as OpenCV reads them: >= 0 a node index, < 0 the complement of a leaf index. */
function links(c: HaarCascade, tree: number): { left: Int32Array; right: Int32Array } {
  const root = c.treeNodeStart[tree];
  const end = c.treeNodeStart[tree + 1];
  const leaf = c.treeLeafStart[tree];
  const left = new Int32Array(end - root);
  const right = new Int32Array(end - root);
  const link = (child: number) => (child > 0 ? root + child : ~(leaf - child));
  for (let n = root; n < end; n++) {
    left[n - root] = link(c.nodeLeft[n]);
    right[n - root] = link(c.nodeRight[n]);
  }
  if (c.maxNodesPerTree === 1) {
    // OpenCV's Stump takes the tree's first two leaves as left/right, whatever the node's links say.
    left[0] = ~leaf;
    right[0] = ~(leaf + 1);
  }
  return { left, right };
}

/** Emits the leaf value (f64) the tree gives the window. */
function emitTree(c: HaarCascade, L: Layout, code: Code, tree: number, P: number, VNF: number): void {
  const root = c.treeNodeStart[tree];
  const { left, right } = links(c, tree);
  const nodes = c.treeNodeStart[tree + 1] - root;
  const branchFree = nodes <= BRANCH_FREE_NODES;
  const emit = (link: number): void => {
    if (link < 0) {
      code.f64Const(c.leafValues[~link]);
      return;
    }
    if (branchFree) {
      emit(left[link - root]);
      emit(right[link - root]);
      emitCondition(c, L, code, link, P, VNF);
      code.op(op.select);
    } else {
      emitCondition(c, L, code, link, P, VNF);
      code.open(op.if, F64);
      emit(left[link - root]);
      code.op(op.else);
      emit(right[link - root]);
      code.op(op.end);
    }
  };
  emit(root);
}

/** The module: scan(workW, workH, ystep, outBase) -> count; evalWindow(p, vnf) -> runAt's result; one function per stage. */
function generate(c: HaarCascade, L: Layout): Uint8Array {
  const EVAL = 1;
  const STAGE0 = 2;
  const functions: FunctionDef[] = [];

  // scan (function 0): params workW 0, workH 1, ystep 2, outBase 3; locals y 4, x 5, p 6, valsum 7, rowCell 8, count 9, r 10, nf 11 (f64), vnf 12 (f32)
  {
    const [workW, workH, ystep, outBase, y, x, p, valsum, rowCell, count, r, nf, vnf] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    const nw = c.windowWidth - 2;
    const nh = c.windowHeight - 2;
    const area = nw * nh;
    // setWindow's normalisation rect (1, 1, w - 2, h - 2): corners in cells from the window's top-left.
    const norm = [1 + L.pitch, 1 + nw + L.pitch, 1 + L.pitch * (1 + nh), 1 + nw + L.pitch * (1 + nh)];
    const rectSum = (plane: number) => {
      const [a, b, d, e] = norm.map((cell) => (plane + cell) * 4);
      code.localGet(p).i32Load(a).localGet(p).i32Load(b).op(op.i32Sub).localGet(p).i32Load(d).op(op.i32Sub).localGet(p).i32Load(e).op(op.i32Add);
    };
    const code = new Code();
    code.i32Const(0).localSet(count).i32Const(0).localSet(y);
    code.open(op.block).open(op.loop);
    code.localGet(y).localGet(workH).op(op.i32GeS).brIf(1);
    code.localGet(y).i32Const(L.pitch).op(op.i32Mul).localSet(rowCell);
    code.i32Const(0).localSet(x);
    code.open(op.block).open(op.loop);
    code.localGet(x).localGet(workW).op(op.i32GeS).brIf(1);
    code.localGet(rowCell).localGet(x).op(op.i32Add).i32Const(2).op(op.i32Shl).localSet(p);
    // nf = area * (unsigned) sqsum - (double) sum * sum; setWindow fails unless nf > 0 and area / sqrt(nf) < 0.1.
    rectSum(0);
    code.localSet(valsum);
    code.f64Const(area);
    rectSum(L.sqOffset);
    code.op(op.f64ConvertI32U).op(op.f64Mul);
    code.localGet(valsum).op(op.f64ConvertI32S).localGet(valsum).op(op.f64ConvertI32S).op(op.f64Mul).op(op.f64Sub).localTee(nf);
    code.f64Const(0).op(op.f64Gt).open(op.if);
    code.f64Const(1).localGet(nf).op(op.f64Sqrt).op(op.f64Div).op(op.f32DemoteF64).localTee(vnf);
    code.op(op.f64PromoteF32).f64Const(area).op(op.f64Mul).f64Const(0.1).op(op.f64Lt).open(op.if);
    code.localGet(p).localGet(vnf).call(EVAL).localTee(r).i32Const(1).op(op.i32Eq).open(op.if);
    // Accepted: append the window's cell index.
    code.localGet(outBase).localGet(count).i32Const(2).op(op.i32Shl).op(op.i32Add).localGet(rowCell).localGet(x).op(op.i32Add).i32Store(0);
    code.localGet(count).i32Const(1).op(op.i32Add).localSet(count);
    code.op(op.else);
    // Rejected by stage 0: OpenCV skips the next position too.
    code.localGet(r).op(op.i32Eqz).open(op.if).localGet(x).localGet(ystep).op(op.i32Add).localSet(x).op(op.end);
    code.op(op.end).op(op.end).op(op.end);
    code.localGet(x).localGet(ystep).op(op.i32Add).localSet(x).br(0);
    code.op(op.end).op(op.end);
    code.localGet(y).localGet(ystep).op(op.i32Add).localSet(y).br(0);
    code.op(op.end).op(op.end);
    code.localGet(count);
    functions.push({ name: 'scan', params: [I32, I32, I32, I32], results: [I32], locals: [I32, I32, I32, I32, I32, I32, I32, F64, F32], body: code });
  }

  // evalWindow(p, vnf): 1 when every stage passes, else minus the failing stage's index (0 for stage 0).
  {
    const code = new Code();
    for (let s = 0; s < c.stageCount; s++) {
      code.localGet(0).localGet(1).call(STAGE0 + s).op(op.i32Eqz).open(op.if).i32Const(-s).op(op.return).op(op.end);
    }
    code.i32Const(1);
    functions.push({ name: 'evalWindow', params: [I32, F32], results: [I32], locals: [], body: code });
  }

  // stage s (p, vnf): 1 when the sum of its trees' leaves (in double, in order) is not below its threshold.
  for (let s = 0; s < c.stageCount; s++) {
    const code = new Code();
    const first = c.stageTreeStart[s];
    const end = c.stageTreeStart[s + 1];
    if (end === first) code.f64Const(0);
    for (let t = first; t < end; t++) {
      emitTree(c, L, code, t, 0, 1);
      if (t > first) code.op(op.f64Add);
    }
    code.f64Const(c.stageThreshold[s]).op(op.f64Lt).op(op.i32Eqz);
    functions.push({ params: [I32, F32], results: [I32], locals: [], body: code });
  }
  return buildModule(functions, 1);
}

class Kernel implements HaarKernel {
  readonly stride: number;
  readonly pitch: number;
  readonly sqOffset: number;
  readonly tiltedOffset: number;
  private readonly memory: WasmMemory;
  private readonly scanFn: (workW: number, workH: number, ystep: number, outBase: number) => number;
  private outBase = 0;
  private cells: Int32Array;

  constructor(cascade: HaarCascade, stride: number) {
    const planes = cascade.hasTiltedFeatures ? 3 : 2;
    this.stride = stride;
    this.pitch = stride * planes;
    this.sqOffset = stride;
    this.tiltedOffset = cascade.hasTiltedFeatures ? 2 * stride : 0;
    const bytes = generate(cascade, this);
    const instance = new wasm!.Instance(new wasm!.Module(bytes));
    const exports = instance.exports as { memory: WasmMemory; scan: Kernel['scanFn'] };
    this.memory = exports.memory;
    this.scanFn = exports.scan;
    this.cells = new Int32Array(this.memory.buffer);
  }

  integralMemory(height: number, windows: number): Int32Array {
    const planeBytes = (height + 1) * this.pitch * 4;
    const need = planeBytes + windows * 4;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / PAGE));
    if (this.cells.buffer !== this.memory.buffer) this.cells = new Int32Array(this.memory.buffer);
    this.outBase = planeBytes;
    return this.cells;
  }

  scan(workW: number, workH: number, ystep: number): Int32Array {
    const n = this.scanFn(workW, workH, ystep, this.outBase);
    return this.cells.subarray(this.outBase >> 2, (this.outBase >> 2) + n);
  }
}

// Modules per cascade, by stride; strides are rounded up so images of similar widths share one.
const STRIDE_STEP = 64;
const MAX_MODULES_PER_CASCADE = 4;
const kernels = new WeakMap<HaarCascade, Map<number, Kernel>>();

/**
 * The kernel for `cascade` with rows of at least `minStride` cells, or null where WebAssembly cannot be used
 * (see haarWasmUnavailable): the caller then scans in JavaScript.
 */
export function haarKernel(cascade: HaarCascade, minStride: number): HaarKernel | null {
  if (unavailable) return null;
  const stride = Math.ceil(minStride / STRIDE_STEP) * STRIDE_STEP;
  let byStride = kernels.get(cascade);
  if (!byStride) kernels.set(cascade, (byStride = new Map()));
  let k = byStride.get(stride);
  if (!k) {
    try {
      k = new Kernel(cascade, stride);
    } catch (err) {
      // e.g. a browser's main thread refusing large synchronous compiles, or a CSP without wasm-unsafe-eval.
      unavailable = `the WebAssembly cascade could not be compiled here: ${err instanceof Error ? err.message : String(err)}`;
      return null;
    }
    if (byStride.size >= MAX_MODULES_PER_CASCADE) byStride.delete(byStride.keys().next().value as number);
    byStride.set(stride, k);
  }
  return k;
}
