/**
 * What the scalar and SIMD kernels share when they write a cascade as WebAssembly: the memory layout of one row
 * stride (Layout), each rect corner as a constant byte offset, the feature test written once for one window (ONE)
 * or four adjacent windows in SIMD lanes (FOUR) with the same operations lane by lane, the tree links as OpenCV
 * reads them (stumps included) and setWindow's normalisation rect. Part of haar-wasm.ts.
 *
 * Two layouts of a row: `plain`, each plane's cells in column order (four adjacent windows are one 16-byte load:
 * step-1 levels), and `split` (step-2 levels with SIMD), each plane's even columns first, then its odd columns,
 * `half` cells each, so the windows at x, x+2, x+4, x+6 (x even, as step-2 windows always are) read four
 * consecutive cells of one half: the corner's column parity, hence its half, is known when the code is written.
 */
import { type Code, op, simd } from '../../wasm/builder.js';
import type { HaarCascade } from '../cascade/parse.js';

export interface Layout {
  stride: number;
  pitch: number;
  sqOffset: number;
  tiltedOffset: number;
  /** The split layout's cells per half plane (stride / 2); absent or 0: the plain layout. */
  half?: number;
}

/**
 * The cell of column dx, row dy (from the window's top-left) in the plane starting `plane` cells into a row, counted
 * from the window's own cell (in the split layout: its cell in the even half of the sum plane, x even).
 */
export function cellAt(L: Layout, plane: number, dx: number, dy: number): number {
  const column = L.half ? (dx & 1) * L.half + (dx >> 1) : dx;
  return plane + column + L.pitch * dy;
}

/** Byte offsets, from the window's top-left sum cell, of the four corners of rect `r` of feature `f`. */
function rectCorners(c: HaarCascade, L: Layout, f: number, r: number): number[] {
  const b = f * 12 + r * 4;
  const x = c.featureRects[b];
  const y = c.featureRects[b + 1];
  const w = c.featureRects[b + 2];
  const h = c.featureRects[b + 3];
  // CV_TILTED_OFS / CV_SUM_OFS corners, as (column, row); tilted ones in the tilted plane.
  const corners =
    c.featureTilted[f] !== 0
      ? [
          [x, y],
          [x - h, y + h],
          [x + w, y + w],
          [x + w - h, y + w + h],
        ].map(([dx, dy]) => cellAt(L, L.tiltedOffset, dx, dy))
      : [
          [x, y],
          [x + w, y],
          [x, y + h],
          [x + w, y + h],
        ].map(([dx, dy]) => cellAt(L, 0, dx, dy));
  return corners.map((cell) => cell * 4);
}

/** The instructions a feature test is written in: one window (scalar) or four adjacent ones (SIMD lanes). */
export interface Lanes {
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

/** Four windows at cells p .. p+3 (a step-1 row, or a split step-2 row): each corner is one 16-byte load. */
export const FOUR: Lanes = {
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
export function emitCondition(c: HaarCascade, L: Layout, code: Code, node: number, P: number, VNF: number, lanes: Lanes = ONE): void {
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
export function links(c: HaarCascade, tree: number): { left: Int32Array; right: Int32Array } {
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

/** setWindow's normalisation rect (1, 1, w - 2, h - 2): its area and corners in cells from the window's top-left. */
export function normRect(c: HaarCascade, L: Layout): { area: number; corners: number[] } {
  const nw = c.windowWidth - 2;
  const nh = c.windowHeight - 2;
  const corners = [
    [1, 1],
    [1 + nw, 1],
    [1, 1 + nh],
    [1 + nw, 1 + nh],
  ].map(([dx, dy]) => cellAt(L, 0, dx, dy));
  return { area: nw * nh, corners };
}
