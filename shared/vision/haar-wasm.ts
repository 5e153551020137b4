/**
 * The Haar cascade's window scan as WebAssembly generated from the cascade itself: every rect corner becomes a
 * load with a constant offset, every weight, threshold and leaf an immediate. It computes exactly what
 * haar-cascade.ts's JavaScript scan computes (OpenCV 4.6's runAt): integer rect sums, the feature value in
 * float (f32 ops round as Math.fround does), the stage sum in double, the same window order and stage-0 skip
 * rule. Pyramid levels scanned at step 1 (most windows) go four adjacent windows at a time with SIMD, lane by
 * lane the same arithmetic. The same module resizes each level and writes its integrals (pyramid-wasm.ts).
 * On a 640x480 frame (same run, Node 20): JavaScript 159 ms, scalar WebAssembly 76 ms, with SIMD 53 ms; the
 * server and the browser's engine worker run the same code. Hosts without SIMD get the scalar module, hosts
 * without WebAssembly the JavaScript.
 *
 * Memory (one per thread, shared by its kernels) starts with the integral rows, each row interleaving the planes
 * the scan reads: the sum, the squared sum and, for cascades with tilted features, the tilted sum, each `stride`
 * cells wide. So a rect corner's offset depends on the stride alone; a module serves every image whose pyramid
 * fits that stride.
 */
import { buildModule, Code, F32, F64, I32, op, simd, V128, type FunctionDef } from '../wasm/builder.js';
import { axisTable } from '../image/ops.js';
import type { HaarCascade } from './haar-cascade.js';
import { hlineFunction, integralsFunction, resizeFunction } from './pyramid-wasm.js';

/** A compiled scan for one cascade and one row stride. */
export interface HaarKernel {
  /** Cells per plane row: the widest level's width + 1 fits. */
  readonly stride: number;
  /** Cells per memory row (planes x stride). */
  readonly pitch: number;
  /** Cell offset of the squared-sum plane and, for tilted cascades, of the tilted plane, within a row. */
  readonly sqOffset: number;
  readonly tiltedOffset: number;
  /** Whether step-1 levels are scanned four windows at a time (WebAssembly SIMD). */
  readonly simd: boolean;
  /**
   * Starts a pyramid: lays out the memory for an 8-bit `srcW` x `srcH` image whose first (largest) level is
   * `w0` x `h0`, and copies the image in.
   */
  begin(src: Uint8Array, srcW: number, srcH: number, w0: number, h0: number): void;
  /** Resizes the image to the level's `lw` x `lh` (INTER_LINEAR_EXACT) and writes its sum and squared-sum integrals. */
  level(lw: number, lh: number): void;
  /**
   * The level's pixels and the integral cells, for a tilted integral written in JavaScript (tiltedIntegral at
   * `tiltedOffset`, row stride `pitch`); valid until the next `begin`.
   */
  views(lw: number, lh: number): { pixels: Uint8Array; cells: Int32Array };
  /**
   * Scans a level's windows (x < workW, y < workH, step `ystep`) and returns the accepted windows' cell
   * indices (y * pitch + x) in OpenCV's order.
   */
  scan(workW: number, workH: number, ystep: number): Int32Array;
}

const PAGE = 65536;
/**
 * Scalar scan: trees with at most this many nodes pick their leaf with a select (a stump: no extra work); deeper
 * trees branch, which measured faster than evaluating every node (alt2: 75 vs 87 ms per 640x480 frame).
 */
const BRANCH_FREE_NODES = 1;

/** The part of the WebAssembly JavaScript API used here (shared/ is typed without the DOM's or Node's globals). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
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

/** Byte offsets, from the window's top-left sum cell, of the four corners of rect `r` of feature `f`. */
function rectCorners(c: HaarCascade, L: Layout, f: number, r: number): number[] {
  const b = f * 12 + r * 4;
  const x = c.featureRects[b];
  const y = c.featureRects[b + 1];
  const w = c.featureRects[b + 2];
  const h = c.featureRects[b + 3];
  const pitch = L.pitch;
  // CV_TILTED_OFS / CV_SUM_OFS corners, as cells; tilted ones in the tilted plane.
  const corners =
    c.featureTilted[f] !== 0
      ? [x + pitch * y, x - h + pitch * (y + h), x + w + pitch * (y + w), x + w - h + pitch * (y + w + h)].map((cell) => cell + L.tiltedOffset)
      : [x + pitch * y, x + w + pitch * y, x + pitch * (y + h), x + w + pitch * (y + h)];
  return corners.map((cell) => cell * 4);
}

/** The instructions a feature test is written in: one window (scalar) or four adjacent ones (SIMD lanes). */
interface Lanes {
  /** The i32 cell(s) at the window's address plus a byte offset. */
  load(code: Code, offset: number): void;
  isub: (code: Code) => void;
  iadd: (code: Code) => void;
  toFloat: (code: Code) => void;
  /** An f32 constant, in every lane. */
  fconst(code: Code, v: number): void;
  fadd: (code: Code) => void;
  fmul: (code: Code) => void;
  flt: (code: Code) => void;
}

const ONE: Lanes = {
  load: (code, offset) => code.i32Load(offset),
  isub: (code) => code.op(op.i32Sub),
  iadd: (code) => code.op(op.i32Add),
  toFloat: (code) => code.op(op.f32ConvertI32S),
  fconst: (code, v) => code.f32Const(v),
  fadd: (code) => code.op(op.f32Add),
  fmul: (code) => code.op(op.f32Mul),
  flt: (code) => code.op(op.f32Lt),
};

/** Four windows at cells p .. p+3 (a step-1 row): each corner is one 16-byte load. */
const FOUR: Lanes = {
  load: (code, offset) => code.v128Load(offset),
  isub: (code) => code.simd(simd.i32x4Sub),
  iadd: (code) => code.simd(simd.i32x4Add),
  toFloat: (code) => code.simd(simd.f32x4ConvertI32x4S),
  fconst: (code, v) => code.f32Const(v).simd(simd.f32x4Splat),
  fadd: (code) => code.simd(simd.f32x4Add),
  fmul: (code) => code.simd(simd.f32x4Mul),
  flt: (code) => code.simd(simd.f32x4Lt),
};

/**
 * Emits the feature test of `node`: float(w0*s0 + w1*s1 [+ w2*s2]) * vnf < threshold, with integer rect sums, as an
 * i32 (ONE) or an i32x4 mask (FOUR, lane by lane the same operations).
 */
function emitCondition(c: HaarCascade, L: Layout, code: Code, node: number, P: number, VNF: number, lanes: Lanes = ONE): void {
  const f = c.nodeFeature[node];
  for (let r = 0; r < 3; r++) {
    const weight = c.featureWeights[f * 3 + r];
    // OpenCV adds the third rect only when its weight is not zero; the first two always.
    if (r === 2 && weight === 0) break;
    const [o0, o1, o2, o3] = rectCorners(c, L, f, r);
    const corner = (offset: number) => {
      code.localGet(P);
      lanes.load(code, offset);
    };
    corner(o0);
    corner(o1);
    lanes.isub(code);
    corner(o2);
    lanes.isub(code);
    corner(o3);
    lanes.iadd(code);
    lanes.toFloat(code);
    lanes.fconst(code, weight);
    lanes.fmul(code);
    if (r > 0) lanes.fadd(code);
  }
  code.localGet(VNF);
  lanes.fmul(code);
  lanes.fconst(code, c.nodeThreshold[node]);
  lanes.flt(code);
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

/** setWindow's normalisation rect (1, 1, w - 2, h - 2): its area and corners in cells from the window's top-left. */
function normRect(c: HaarCascade, L: Layout): { area: number; corners: number[] } {
  const nw = c.windowWidth - 2;
  const nh = c.windowHeight - 2;
  return { area: nw * nh, corners: [1 + L.pitch, 1 + nw + L.pitch, 1 + L.pitch * (1 + nh), 1 + nw + L.pitch * (1 + nh)] };
}

/** scan(workW, workH, ystep, outBase) -> count: a level's windows one at a time, as OpenCV walks them. */
function scalarScan(c: HaarCascade, L: Layout, evalIndex: number): FunctionDef {
  const [workW, workH, ystep, outBase, y, x, p, valsum, rowCell, count, r, nf, vnf] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const { area, corners } = normRect(c, L);
  const code = new Code();
  const rectSum = (plane: number) => {
    const [a, b, d, e] = corners.map((cell) => (plane + cell) * 4);
    code.localGet(p).i32Load(a).localGet(p).i32Load(b).op(op.i32Sub).localGet(p).i32Load(d).op(op.i32Sub).localGet(p).i32Load(e).op(op.i32Add);
  };
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
  code.localGet(p).localGet(vnf).call(evalIndex).localTee(r).i32Const(1).op(op.i32Eq).open(op.if);
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
  return { name: 'scan', params: [I32, I32, I32, I32], results: [I32], locals: [I32, I32, I32, I32, I32, I32, I32, F64, F32], body: code };
}

/** evalWindow(p, vnf) -> runAt's result: 1 when every stage passes, else minus the failing stage (0 for stage 0). */
function evalWindow(c: HaarCascade, firstStage: number): FunctionDef {
  const code = new Code();
  for (let s = 0; s < c.stageCount; s++) {
    code.localGet(0).localGet(1).call(firstStage + s).op(op.i32Eqz).open(op.if).i32Const(-s).op(op.return).op(op.end);
  }
  code.i32Const(1);
  return { params: [I32, F32], results: [I32], locals: [], body: code };
}

/** stage s (p, vnf) -> 1 when the sum of its trees' leaves (in double, in order) is not below its threshold. */
function stage(c: HaarCascade, L: Layout, s: number): FunctionDef {
  const code = new Code();
  const first = c.stageTreeStart[s];
  const end = c.stageTreeStart[s + 1];
  if (end === first) code.f64Const(0);
  for (let t = first; t < end; t++) {
    emitTree(c, L, code, t, 0, 1);
    if (t > first) code.op(op.f64Add);
  }
  code.f64Const(c.stageThreshold[s]).op(op.f64Lt).op(op.i32Eqz);
  return { params: [I32, F32], results: [I32], locals: [], body: code };
}

// ------------------------------------------------------------------------------------------------ SIMD

// Byte lanes of i8x16.shuffle: the upper two f32/i32 lanes moved down (for the *_low conversions), two f32x4
// halves [a0 a1 _ _] [b0 b1 _ _] joined, and the low 32 bits of two i64x2 masks joined into one i32x4 mask.
const UPPER_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
const JOIN_LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const JOIN_I64_MASKS = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];

/**
 * The leaf values (f32x4) the tree gives the four windows. Every branch some live lane takes is evaluated for all
 * four lanes and the leaves chosen by bitselect; a branch no live lane takes is skipped (its lanes get 0, unused).
 * `condLocal(d)` is a v128 local for the condition at depth d.
 */
function emitTree4(c: HaarCascade, L: Layout, code: Code, tree: number, P: number, VNF4: number, ALIVE: number, condLocal: (depth: number) => number): void {
  const root = c.treeNodeStart[tree];
  const { left, right } = links(c, tree);
  const emit = (link: number, depth: number): void => {
    const C = condLocal(depth);
    emitCondition(c, L, code, link, P, VNF4, FOUR);
    code.localSet(C);
    const branch = (child: number, taken: () => void) => {
      if (child < 0) {
        code.f32Const(c.leafValues[~child]).simd(simd.f32x4Splat);
        return;
      }
      taken();
      code.localGet(ALIVE).simd(simd.v128And).simd(simd.v128AnyTrue).open(op.if, V128);
      emit(child, depth + 1);
      code.op(op.else).f32Const(0).simd(simd.f32x4Splat).op(op.end);
    };
    branch(left[link - root], () => code.localGet(C));
    branch(right[link - root], () => code.localGet(C).simd(simd.v128Not));
    code.localGet(C).simd(simd.v128Bitselect);
  };
  emit(root, 0);
}

/** Deepest node chain of any tree (1 for stumps). */
function maxTreeDepth(c: HaarCascade): number {
  let max = 1;
  for (let t = 0; t < c.treeCount; t++) {
    const root = c.treeNodeStart[t];
    const { left, right } = links(c, t);
    const depth = (link: number): number => (link < 0 ? 0 : 1 + Math.max(depth(left[link - root]), depth(right[link - root])));
    max = Math.max(max, depth(root));
  }
  return max;
}

/**
 * stage4 s (p, vnf4, alive4) -> i32x4 mask of the windows whose stage sum is not below the threshold (lanes not
 * alive: unspecified). Each lane sums its leaves in double in tree order (two f64x2 accumulators), as the scalar
 * stage does.
 */
function stage4(c: HaarCascade, L: Layout, s: number, depth: number): FunctionDef {
  const [P, VNF4, ALIVE, LO, HI, LEAF] = [0, 1, 2, 3, 4, 5];
  const code = new Code();
  const first = c.stageTreeStart[s];
  const end = c.stageTreeStart[s + 1];
  if (end === first) code.f64Const(0).simd(simd.f64x2Splat).localTee(LO).localSet(HI);
  for (let t = first; t < end; t++) {
    emitTree4(c, L, code, t, P, VNF4, ALIVE, (d) => LEAF + 1 + d);
    code.localTee(LEAF).simd(simd.f64x2PromoteLowF32x4);
    if (t > first) code.localGet(LO).simd(simd.f64x2Add);
    code.localSet(LO);
    code.localGet(LEAF).localGet(LEAF).shuffle(UPPER_HALF).simd(simd.f64x2PromoteLowF32x4);
    if (t > first) code.localGet(HI).simd(simd.f64x2Add);
    code.localSet(HI);
  }
  const threshold = () => code.f64Const(c.stageThreshold[s]).simd(simd.f64x2Splat);
  code.localGet(LO);
  threshold();
  code.simd(simd.f64x2Lt).localGet(HI);
  threshold();
  code.simd(simd.f64x2Lt).shuffle(JOIN_I64_MASKS).simd(simd.v128Not);
  return { params: [I32, V128, V128], results: [V128], locals: Array<typeof V128>(3 + depth).fill(V128), body: code };
}

/** eval4(p, vnf4, alive4) -> alive4 after stages 1.. (stage 0 is scan4's), stopping once no lane is alive. */
function eval4(c: HaarCascade, firstStage4: number): FunctionDef {
  const [P, VNF4, ALIVE] = [0, 1, 2];
  const code = new Code();
  for (let s = 1; s < c.stageCount; s++) {
    code.localGet(ALIVE).localGet(P).localGet(VNF4).localGet(ALIVE).call(firstStage4 + s).simd(simd.v128And).localTee(ALIVE);
    code.simd(simd.v128AnyTrue).op(op.i32Eqz).open(op.if).localGet(ALIVE).op(op.return).op(op.end);
  }
  code.localGet(ALIVE);
  return { params: [I32, V128, V128], results: [V128], locals: [], body: code };
}

/**
 * scan4(workW, workH, outBase) -> count: a step-1 level, four windows (x .. x+3) at a time. The norm and stage 0
 * are computed for all four; OpenCV's walk is then replayed on the lane bits (a window rejected by stage 0 skips
 * the next position, carried into the next group), and the windows still alive run the later stages together.
 */
function scan4(c: HaarCascade, L: Layout, eval4Index: number, firstStage4: number): FunctionDef {
  const [workW, workH, outBase] = [0, 1, 2];
  const [y, x, p, rowCell, count, carry, V, A, E, nIn, bits, F0] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
  const [VNF4, SUM4, SQ4, T, NFLO, NFHI, VLO, VHI] = [15, 16, 17, 18, 19, 20, 21, 22];
  const { area, corners } = normRect(c, L);
  const code = new Code();
  const rectSum4 = (plane: number) => {
    const [a, b, d, e] = corners.map((cell) => (plane + cell) * 4);
    code.localGet(p).v128Load(a).localGet(p).v128Load(b).simd(simd.i32x4Sub).localGet(p).v128Load(d).simd(simd.i32x4Sub);
    code.localGet(p).v128Load(e).simd(simd.i32x4Add);
  };
  const splat = (v: number) => code.f64Const(v).simd(simd.f64x2Splat);
  // nf for two lanes: area * (unsigned) sqsum - (double) sum * sum; `upper` takes lanes 2, 3.
  const nfHalf = (upper: boolean) => {
    splat(area).localGet(SQ4);
    if (upper) code.localGet(SQ4).shuffle(UPPER_HALF);
    code.simd(simd.f64x2ConvertLowI32x4U).simd(simd.f64x2Mul).localGet(SUM4);
    if (upper) code.localGet(SUM4).shuffle(UPPER_HALF);
    code.simd(simd.f64x2ConvertLowI32x4S).localTee(T).localGet(T).simd(simd.f64x2Mul).simd(simd.f64x2Sub);
  };
  // float(1 / sqrt(nf)) for two lanes, in the low lanes of an f32x4.
  const vnfHalf = (nf: number) => {
    splat(1).localGet(nf).simd(simd.f64x2Sqrt).simd(simd.f64x2Div).simd(simd.f32x4DemoteF64x2Zero);
  };
  // setWindow's verdict for two lanes: nf > 0 and area * vnf < 0.1 (i64x2 mask).
  const okHalf = (nf: number, v: number) => {
    code.localGet(nf);
    splat(0);
    code.simd(simd.f64x2Gt).localGet(v).simd(simd.f64x2PromoteLowF32x4);
    splat(area);
    code.simd(simd.f64x2Mul);
    splat(0.1);
    code.simd(simd.f64x2Lt).simd(simd.v128And);
  };

  // Lane bits (1, 2, 4, 8) of an i32 as an i32x4 mask.
  const laneMask = (local: number) => {
    code.localGet(local).simd(simd.i32x4Splat).i32x4Const([1, 2, 4, 8]).simd(simd.v128And).i32x4Const([0, 0, 0, 0]).simd(simd.i32x4Ne);
  };

  code.i32Const(0).localSet(count).i32Const(0).localSet(y);
  code.open(op.block).open(op.loop);
  code.localGet(y).localGet(workH).op(op.i32GeS).brIf(1);
  code.localGet(y).i32Const(L.pitch).op(op.i32Mul).localSet(rowCell);
  code.i32Const(0).localSet(x).i32Const(0).localSet(carry);
  code.open(op.block).open(op.loop);
  code.localGet(x).localGet(workW).op(op.i32GeS).brIf(1);
  code.localGet(rowCell).localGet(x).op(op.i32Add).i32Const(2).op(op.i32Shl).localSet(p);
  code.open(op.block); // "next group"
  rectSum4(0);
  code.localSet(SUM4);
  rectSum4(L.sqOffset);
  code.localSet(SQ4);
  nfHalf(false);
  code.localSet(NFLO);
  nfHalf(true);
  code.localSet(NFHI);
  vnfHalf(NFLO);
  code.localSet(VLO);
  vnfHalf(NFHI);
  code.localSet(VHI);
  code.localGet(VLO).localGet(VHI).shuffle(JOIN_LOW_HALVES).localSet(VNF4);
  okHalf(NFLO, VLO);
  okHalf(NFHI, VHI);
  code.shuffle(JOIN_I64_MASKS).simd(simd.i32x4Bitmask);
  // Lanes inside the level: nIn = min(workW - x, 4).
  code.localGet(workW).localGet(x).op(op.i32Sub).localSet(nIn);
  code.localGet(nIn).i32Const(4).localGet(nIn).i32Const(4).op(op.i32LtS).op(op.select).localSet(nIn);
  code.i32Const(1).localGet(nIn).op(op.i32Shl).i32Const(1).op(op.i32Sub).op(op.i32And).localTee(V);
  // No window passes setWindow: none is skipped-over either, so nothing carries.
  code.op(op.i32Eqz).open(op.if).i32Const(0).localSet(carry).br(1).op(op.end);
  code.localGet(p).localGet(VNF4);
  laneMask(V);
  code.call(firstStage4).simd(simd.i32x4Bitmask).localGet(V).op(op.i32And).localSet(A);
  code.localGet(V).localGet(A).i32Const(-1).op(op.i32Xor).op(op.i32And).localSet(F0);
  // OpenCV's walk over the four positions: E = the windows it evaluates.
  code.i32Const(0).localSet(E);
  code.open(op.block);
  for (let k = 0; k < 4; k++) {
    code.localGet(nIn).i32Const(k).op(op.i32LeS).brIf(0);
    code.localGet(carry).open(op.if).i32Const(0).localSet(carry).op(op.else);
    code.localGet(E).i32Const(1 << k).op(op.i32Or).localSet(E);
    code.localGet(F0).i32Const(k).op(op.i32ShrU).i32Const(1).op(op.i32And).localSet(carry);
    code.op(op.end);
  }
  code.op(op.end);
  code.localGet(A).localGet(E).op(op.i32And).localTee(bits).op(op.i32Eqz).brIf(0);
  code.localGet(p).localGet(VNF4);
  laneMask(bits);
  code.call(eval4Index).simd(simd.i32x4Bitmask).localTee(bits).op(op.i32Eqz).brIf(0);
  for (let k = 0; k < 4; k++) {
    code.localGet(bits).i32Const(1 << k).op(op.i32And).open(op.if);
    code.localGet(outBase).localGet(count).i32Const(2).op(op.i32Shl).op(op.i32Add);
    code.localGet(rowCell).localGet(x).op(op.i32Add).i32Const(k).op(op.i32Add).i32Store(0);
    code.localGet(count).i32Const(1).op(op.i32Add).localSet(count);
    code.op(op.end);
  }
  code.op(op.end); // next group
  code.localGet(x).i32Const(4).op(op.i32Add).localSet(x).br(0);
  code.op(op.end).op(op.end);
  code.localGet(y).i32Const(1).op(op.i32Add).localSet(y).br(0);
  code.op(op.end).op(op.end);
  code.localGet(count);
  const i32s = Array<typeof I32>(12).fill(I32);
  const v128s = Array<typeof V128>(8).fill(V128);
  return { name: 'scan4', params: [I32, I32, I32], results: [I32], locals: [...i32s, ...v128s], body: code };
}

/**
 * The module, exporting resize and integrals (a level's image work, pyramid-wasm.ts), scan (any level, one window
 * at a time) and, with `withSimd`, scan4 (step-1 levels, four windows at a time). Functions: scan, evalWindow, the
 * stages, hline, resize, integrals; then scan4, eval4 and the SIMD stages.
 */
function generate(c: HaarCascade, L: Layout, withSimd: boolean): Uint8Array {
  const EVAL = 1;
  const FIRST_STAGE = 2;
  const functions: FunctionDef[] = [scalarScan(c, L, EVAL), evalWindow(c, FIRST_STAGE)];
  for (let s = 0; s < c.stageCount; s++) functions.push(stage(c, L, s));
  const hline = functions.length;
  functions.push(hlineFunction(), { ...resizeFunction(hline), name: 'resize' }, { ...integralsFunction(L.pitch, L.sqOffset), name: 'integrals' });
  if (withSimd) {
    const scan4Index = functions.length;
    const eval4Index = scan4Index + 1;
    const firstStage4 = scan4Index + 2;
    functions.push(scan4(c, L, eval4Index, firstStage4), eval4(c, firstStage4));
    const depth = maxTreeDepth(c);
    for (let s = 0; s < c.stageCount; s++) functions.push(stage4(c, L, s, depth));
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

class Kernel implements HaarKernel {
  readonly stride: number;
  readonly pitch: number;
  readonly sqOffset: number;
  readonly tiltedOffset: number;
  readonly simd: boolean;
  private readonly memory: WasmMemory;
  private readonly fn: {
    scan: (workW: number, workH: number, ystep: number, outBase: number) => number;
    scan4?: (workW: number, workH: number, outBase: number) => number;
    resize: (...args: number[]) => void;
    integrals: (img: number, w: number, h: number) => void;
  };
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

  level(lw: number, lh: number): void {
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
      this.fn.resize(at.src, src.w, src.h, at.level, lw, lh, at.xofs, at.xc1, xt.min, xt.max, at.yofs, at.yc1, yt.min, yt.max, at.bufA, at.bufB);
    }
    this.fn.integrals(at.level, lw, lh);
  }

  views(lw: number, lh: number): { pixels: Uint8Array; cells: Int32Array } {
    return { pixels: this.bytes.subarray(this.at.level, this.at.level + lw * lh), cells: this.cells };
  }

  scan(workW: number, workH: number, ystep: number): Int32Array {
    const out = this.at.out;
    const n = ystep === 1 && this.fn.scan4 ? this.fn.scan4(workW, workH, out) : this.fn.scan(workW, workH, ystep, out);
    return this.cells.subarray(out >> 2, (out >> 2) + n);
  }
}

// Modules per cascade, by stride: a new one costs ~100 ms to generate and compile, so strides come in steps, powers
// of two up to 1024 (a 640x480 frame's pyramid takes 512, 1280x720 1024), then multiples of 512 (rows at most
// 512 cells wider than needed for large photos).
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
  if (!byKey) kernels.set(cascade, (byKey = new Map()));
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
