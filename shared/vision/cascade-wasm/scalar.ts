/**
 * The scalar kernel: scan (every window of a level, one at a time, in OpenCV's order with its stage-0 skip rule
 * and setWindow's normalisation), evalWindow (runAt: the stages in turn) and one function per stage that sums its
 * trees' leaves in double, each tree a select (stumps) or branches (deeper trees). Runs where the host has no
 * WebAssembly SIMD, and for the step-2 levels of cascades with tilted features. Part of haar-wasm.ts.
 */
import { Code, F32, F64, I32, op, type FunctionDef } from '../../wasm/builder.js';
import type { HaarCascade } from '../cascade/parse.js';
import { emitCondition, links, normRect, type Layout } from './emit.js';

/**
 * Scalar scan: trees with at most this many nodes pick their leaf with a select (a stump: no extra work); deeper
 * trees branch, which measured faster than evaluating every node (alt2: 75 vs 87 ms per 640x480 frame).
 */
const BRANCH_FREE_NODES = 1;

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

/** scan(workW, workH, ystep, outBase) -> count: a level's windows one at a time, as OpenCV walks them. */
export function scalarScan(c: HaarCascade, L: Layout, evalIndex: number): FunctionDef {
  const [workW, workH, ystep, outBase, y, x, p, valsum, rowCell, count, r, nf, vnf] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const { area, corners } = normRect(c, L);
  const code = new Code();
  const rectSum = (plane: number) => {
    const [a, b, d, e] = corners.map((cell) => (plane + cell) * 4);
    code
      .localGet(p)
      .i32Load(a)
      .localGet(p)
      .i32Load(b)
      .op(op.i32Sub)
      .localGet(p)
      .i32Load(d)
      .op(op.i32Sub)
      .localGet(p)
      .i32Load(e)
      .op(op.i32Add);
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
export function evalWindow(c: HaarCascade, firstStage: number): FunctionDef {
  const code = new Code();
  for (let s = 0; s < c.stageCount; s++) {
    code
      .localGet(0)
      .localGet(1)
      .call(firstStage + s)
      .op(op.i32Eqz)
      .open(op.if)
      .i32Const(-s)
      .op(op.return)
      .op(op.end);
  }
  code.i32Const(1);
  return { params: [I32, F32], results: [I32], locals: [], body: code };
}

/** stage s (p, vnf) -> 1 when the sum of its trees' leaves (in double, in order) is not below its threshold. */
export function stage(c: HaarCascade, L: Layout, s: number): FunctionDef {
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
