/**
 * The SIMD kernel: scan4 takes four windows of a row at a time (norms and stage 0 for all four, then OpenCV's walk
 * replayed on the lane bits), eval4 runs the later stages while any lane is alive, and each stage4 evaluates a tree
 * for all four lanes (branches no live lane takes are skipped) and sums each lane's leaves in double, as the scalar
 * stage does. Step-1 levels take four adjacent windows from the plain layout; step-2 levels the windows x, x+2,
 * x+4, x+6 from the split layout (emit.ts), one set of these functions per layout. Part of haar-wasm.ts.
 */
import { Code, I32, op, simd, V128, type FunctionDef } from '../../wasm/builder.js';
import type { HaarCascade } from '../cascade/parse.js';
import { emitCondition, FOUR, links, normRect, type Layout } from './emit.js';

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
function emitTree4(
  c: HaarCascade,
  L: Layout,
  code: Code,
  tree: number,
  P: number,
  VNF4: number,
  ALIVE: number,
  condLocal: (depth: number) => number,
): void {
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
export function maxTreeDepth(c: HaarCascade): number {
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
export function stage4(c: HaarCascade, L: Layout, s: number, depth: number): FunctionDef {
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
export function eval4(c: HaarCascade, firstStage4: number): FunctionDef {
  const [P, VNF4, ALIVE] = [0, 1, 2];
  const code = new Code();
  for (let s = 1; s < c.stageCount; s++) {
    code
      .localGet(ALIVE)
      .localGet(P)
      .localGet(VNF4)
      .localGet(ALIVE)
      .call(firstStage4 + s)
      .simd(simd.v128And)
      .localTee(ALIVE);
    code.simd(simd.v128AnyTrue).op(op.i32Eqz).open(op.if).localGet(ALIVE).op(op.return).op(op.end);
  }
  code.localGet(ALIVE);
  return { params: [I32, V128, V128], results: [V128], locals: [], body: code };
}

/**
 * scan4(workW, workH, outBase) -> count: a level scanned at `step` (1 or 2; 2 needs the split layout), four
 * windows (x, x + step, x + 2 step, x + 3 step) at a time. The norm and stage 0 are computed for all four; OpenCV's
 * walk is then replayed on the lane bits (a window rejected by stage 0 skips the next position, carried into the
 * next group), and the windows still alive run the later stages together. Accepted windows are stored as plain
 * cell indices (y * pitch + x) in either layout.
 */
export function scan4(c: HaarCascade, L: Layout, eval4Index: number, firstStage4: number, step: 1 | 2 = 1): FunctionDef {
  if (step === 2 && !L.half) throw new Error('scan4: step-2 levels need the split layout');
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
  // The window's cell: x in the plain layout, x / 2 (its even column's index) in the split one.
  code.localGet(rowCell).localGet(x);
  if (step === 2) code.i32Const(1).op(op.i32ShrU);
  code.op(op.i32Add).i32Const(2).op(op.i32Shl).localSet(p);
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
  // Lanes inside the level: nIn = min(ceil((workW - x) / step), 4).
  code.localGet(workW).localGet(x).op(op.i32Sub);
  if (step === 2) code.i32Const(1).op(op.i32Add).i32Const(1).op(op.i32ShrU);
  code.localSet(nIn);
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
    code
      .localGet(E)
      .i32Const(1 << k)
      .op(op.i32Or)
      .localSet(E);
    code.localGet(F0).i32Const(k).op(op.i32ShrU).i32Const(1).op(op.i32And).localSet(carry);
    code.op(op.end);
  }
  code.op(op.end);
  code.localGet(A).localGet(E).op(op.i32And).localTee(bits).op(op.i32Eqz).brIf(0);
  code.localGet(p).localGet(VNF4);
  laneMask(bits);
  code.call(eval4Index).simd(simd.i32x4Bitmask).localTee(bits).op(op.i32Eqz).brIf(0);
  for (let k = 0; k < 4; k++) {
    code
      .localGet(bits)
      .i32Const(1 << k)
      .op(op.i32And)
      .open(op.if);
    code.localGet(outBase).localGet(count).i32Const(2).op(op.i32Shl).op(op.i32Add);
    code
      .localGet(rowCell)
      .localGet(x)
      .op(op.i32Add)
      .i32Const(k * step)
      .op(op.i32Add)
      .i32Store(0);
    code.localGet(count).i32Const(1).op(op.i32Add).localSet(count);
    code.op(op.end);
  }
  code.op(op.end); // next group
  code
    .localGet(x)
    .i32Const(4 * step)
    .op(op.i32Add)
    .localSet(x)
    .br(0);
  code.op(op.end).op(op.end);
  code.localGet(y).i32Const(step).op(op.i32Add).localSet(y).br(0);
  code.op(op.end).op(op.end);
  code.localGet(count);
  const i32s = Array<typeof I32>(12).fill(I32);
  const v128s = Array<typeof V128>(8).fill(V128);
  return { name: step === 1 ? 'scan4' : 'scan4x2', params: [I32, I32, I32], results: [I32], locals: [...i32s, ...v128s], body: code };
}
