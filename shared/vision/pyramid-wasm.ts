/**
 * The cascade pyramid's per-level image work as WebAssembly, for the kernels of haar-wasm.ts: OpenCV 4.6's
 * INTER_LINEAR_EXACT resize (a port of shared/image/ops.ts resizeLinearExactInto, the same fixed-point steps, so
 * the same bytes) and the integral images in the kernel's interleaved row layout (as cascade/evaluate.ts's
 * integrals()), plain or, for step-2 levels scanned with SIMD, split into even and odd columns. In JavaScript
 * both were a fifth of a frame's cascade time.
 */
import { Code, I32, op, type FunctionDef } from '../wasm/builder.js';

const i32s = (n: number) => Array<typeof I32>(n).fill(I32);

/** `for (; i < end; i++) body()` over i32 locals. */
function loopTo(code: Code, i: number, end: number, body: () => void): void {
  code.open(op.block).open(op.loop);
  code.localGet(i).localGet(end).op(op.i32GeS).brIf(1);
  body();
  code.localGet(i).i32Const(1).op(op.i32Add).localSet(i).br(0);
  code.op(op.end).op(op.end);
}

/** Pushes base + i * 4 (the address of i32 cell i of an array at byte `base`). */
function cellAddress(code: Code, base: number, i: number): void {
  code.localGet(base).localGet(i).i32Const(2).op(op.i32Shl).op(op.i32Add);
}

/**
 * hline(srcRow, srcW, dstW, xofs, xc1, xmin, xmax, out): the source row at byte `srcRow` resized horizontally into
 * 8.8 fixed point, i32 cells at `out` (OpenCV's hlineResizeCn<uint8_t, ufixedpoint16, 2, true, 1>).
 */
export function hlineFunction(): FunctionDef {
  const [SRCROW, SRCW, DSTW, XOFS, XC1, XMIN, XMAX, OUT, X, V, C, P] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const code = new Code();
  code.i32Const(0).localSet(X);
  // Left of the source's first pixel centre: that pixel.
  code.localGet(SRCROW).i32Load8U(0).i32Const(8).op(op.i32Shl).localSet(V);
  loopTo(code, X, XMIN, () => {
    cellAddress(code, OUT, X);
    code.localGet(V).i32Store(0);
  });
  loopTo(code, X, XMAX, () => {
    code.localGet(SRCROW);
    cellAddress(code, XOFS, X);
    code.i32Load(0).op(op.i32Add).localSet(P);
    cellAddress(code, XC1, X);
    code.i32Load(0).localSet(C);
    cellAddress(code, OUT, X);
    code.i32Const(256).localGet(C).op(op.i32Sub).localGet(P).i32Load8U(0).op(op.i32Mul);
    code.localGet(C).localGet(P).i32Load8U(1).op(op.i32Mul).op(op.i32Add).i32Store(0);
  });
  // Right of the last pixel centre: the row's last pixel.
  code.localGet(SRCROW).localGet(SRCW).op(op.i32Add).i32Const(1).op(op.i32Sub).i32Load8U(0).i32Const(8).op(op.i32Shl).localSet(V);
  loopTo(code, X, DSTW, () => {
    cellAddress(code, OUT, X);
    code.localGet(V).i32Store(0);
  });
  return { params: i32s(8), results: [], locals: i32s(4), body: code };
}

/**
 * resize(src, srcW, srcH, dst, dstW, dstH, xofs, xc1, xmin, xmax, yofs, yc1, ymin, ymax, bufA, bufB): 8-bit
 * `src` into `dst` with the axis tables of ops.ts axisTable() (i32 arrays at xofs, xc1, yofs, yc1), through two
 * row buffers of dstW i32 cells, reusing a source row's horizontal pass for the next destination row.
 * `hline` is the index of hlineFunction in the module. The same-size copy is the caller's.
 */
export function resizeFunction(hline: number): FunctionDef {
  const [SRC, SRCW, SRCH, DST, DSTW, DSTH, XOFS, XC1, XMIN, XMAX, YOFS, YC1, YMIN, YMAX, BUFA, BUFB] = Array.from(
    { length: 16 },
    (_, i) => i,
  );
  const [DY, X, ROWA, ROWB, IY, T, C0, C1, O] = [16, 17, 18, 19, 20, 21, 22, 23, 24];
  const code = new Code();
  // hline of source row `row` (a local, or -1: pushed by `pushRow`) into buffer `buf`.
  const hlineRow = (pushRow: () => void, buf: number) => {
    code.localGet(SRC);
    pushRow();
    code.localGet(SRCW).op(op.i32Mul).op(op.i32Add);
    code.localGet(SRCW).localGet(DSTW).localGet(XOFS).localGet(XC1).localGet(XMIN).localGet(XMAX).localGet(buf).call(hline);
  };
  // Rows outside the source's first/last pixel centres: one buffer, rounded back to 8 bits.
  const edgeRows = (end: number, buf: number) => {
    loopTo(code, DY, end, () => {
      code.localGet(DST).localGet(DY).localGet(DSTW).op(op.i32Mul).op(op.i32Add).localSet(O);
      code.i32Const(0).localSet(X);
      loopTo(code, X, DSTW, () => {
        code.localGet(O).localGet(X).op(op.i32Add);
        cellAddress(code, buf, X);
        code.i32Load(0).i32Const(128).op(op.i32Add).i32Const(8).op(op.i32ShrS).i32Store8(0);
      });
    });
  };
  code.i32Const(0).localSet(DY).i32Const(-1).localSet(ROWA).i32Const(-1).localSet(ROWB);
  code.localGet(YMIN).i32Const(0).op(op.i32GtS).open(op.if);
  hlineRow(() => code.i32Const(0), BUFA);
  code.i32Const(0).localSet(ROWA);
  edgeRows(YMIN, BUFA);
  code.op(op.end);
  loopTo(code, DY, YMAX, () => {
    cellAddress(code, YOFS, DY);
    code.i32Load(0).localSet(IY);
    // Keep source rows iy and iy + 1 in bufA and bufB, reusing what the previous destination row computed.
    code.localGet(ROWA).localGet(IY).op(op.i32Ne).open(op.if);
    code.localGet(ROWB).localGet(IY).op(op.i32Eq).open(op.if);
    code.localGet(BUFA).localSet(T).localGet(BUFB).localSet(BUFA).localGet(T).localSet(BUFB);
    code.localGet(IY).localSet(ROWA).i32Const(-1).localSet(ROWB);
    code.op(op.else);
    hlineRow(() => code.localGet(IY), BUFA);
    code.localGet(IY).localSet(ROWA);
    code.op(op.end).op(op.end);
    code.localGet(ROWB).localGet(IY).i32Const(1).op(op.i32Add).op(op.i32Ne).open(op.if);
    hlineRow(() => code.localGet(IY).i32Const(1).op(op.i32Add), BUFB);
    code.localGet(IY).i32Const(1).op(op.i32Add).localSet(ROWB);
    code.op(op.end);
    cellAddress(code, YC1, DY);
    code.i32Load(0).localSet(C1).i32Const(256).localGet(C1).op(op.i32Sub).localSet(C0);
    code.localGet(DST).localGet(DY).localGet(DSTW).op(op.i32Mul).op(op.i32Add).localSet(O);
    code.i32Const(0).localSet(X);
    loopTo(code, X, DSTW, () => {
      code.localGet(O).localGet(X).op(op.i32Add);
      cellAddress(code, BUFA, X);
      code.i32Load(0).localGet(C0).op(op.i32Mul);
      cellAddress(code, BUFB, X);
      code.i32Load(0).localGet(C1).op(op.i32Mul).op(op.i32Add).i32Const(32768).op(op.i32Add).i32Const(16).op(op.i32ShrS).i32Store8(0);
    });
  });
  // Below the last source row's centre: that row (already in a buffer when the loop used it).
  code.localGet(DY).localGet(DSTH).op(op.i32LtS).open(op.if);
  code.localGet(ROWA).localGet(SRCH).i32Const(1).op(op.i32Sub).op(op.i32Eq).open(op.if);
  edgeRows(DSTH, BUFA);
  code.op(op.else);
  code.localGet(ROWB).localGet(SRCH).i32Const(1).op(op.i32Sub).op(op.i32Eq).open(op.if);
  edgeRows(DSTH, BUFB);
  code.op(op.else);
  hlineRow(() => code.localGet(SRCH).i32Const(1).op(op.i32Sub), BUFA);
  edgeRows(DSTH, BUFA);
  code.op(op.end).op(op.end).op(op.end);
  return { params: i32s(16), results: [], locals: i32s(9), body: code };
}

/**
 * The start of integral row y + 1, in both integral functions (whose first eleven locals are IMG, W, H, X, Y, S, Q,
 * V, ROW, PREV, SRC): PREV and ROW the byte addresses of rows y and y + 1, the row's first cell zero (sum and
 * squared sum), the running sums and X zero, SRC at the image's row y.
 */
function startIntegralRow(code: Code, pitch: number, sq: number): void {
  const [IMG, W, X, Y, S, Q, ROW, PREV, SRC] = [0, 1, 3, 4, 5, 6, 8, 9, 10];
  code
    .localGet(Y)
    .i32Const(pitch * 4)
    .op(op.i32Mul)
    .localTee(PREV)
    .i32Const(pitch * 4)
    .op(op.i32Add)
    .localTee(ROW);
  code.i32Const(0).i32Store(0).localGet(ROW).i32Const(0).i32Store(sq);
  code.i32Const(0).localSet(S).i32Const(0).localSet(Q).i32Const(0).localSet(X);
  code.localGet(IMG).localGet(Y).localGet(W).op(op.i32Mul).op(op.i32Add).localSet(SRC);
}

/**
 * integrals2(img, w, h): the same integrals in the split layout (emit.ts), for step-2 levels scanned with SIMD:
 * each plane row holds its even columns in its first `half` cells and its odd columns in the next `half`. Pixels go
 * in pairs: pixel x (x even) closes column x + 1 (odd, cell x / 2 of the odd half), pixel x + 1 column x + 2 (even,
 * cell x / 2 + 1).
 */
export function integralsSplitFunction(pitch: number, sqOffset: number, half: number): FunctionDef {
  const [_IMG, W, H, X, Y, S, Q, V, ROW, PREV, SRC, J, LAST] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
  const sq = sqOffset * 4;
  const odd = half * 4;
  const code = new Code();
  // Row 0: zero, both planes, both halves.
  code.i32Const(0).localSet(X);
  code.i32Const(half * 2).localSet(V);
  loopTo(code, X, V, () => {
    code.localGet(X).i32Const(2).op(op.i32Shl).localTee(ROW).i32Const(0).i32Store(0).localGet(ROW).i32Const(0).i32Store(sq);
  });
  // Adds pixel `at` (a byte offset from SRC + X) to the row's sums and closes the column at byte `column` from ROW + J.
  const pixel = (at: number, column: number) => {
    code.localGet(SRC).localGet(X).op(op.i32Add).i32Load8U(at).localSet(V);
    code.localGet(S).localGet(V).op(op.i32Add).localSet(S);
    code.localGet(Q).localGet(V).localGet(V).op(op.i32Mul).op(op.i32Add).localSet(Q);
    code.localGet(ROW).localGet(J).op(op.i32Add);
    code.localGet(PREV).localGet(J).op(op.i32Add).i32Load(column).localGet(S).op(op.i32Add).i32Store(column);
    code.localGet(ROW).localGet(J).op(op.i32Add);
    code
      .localGet(PREV)
      .localGet(J)
      .op(op.i32Add)
      .i32Load(column + sq)
      .localGet(Q)
      .op(op.i32Add)
      .i32Store(column + sq);
  };
  code.localGet(W).i32Const(1).op(op.i32Sub).localSet(LAST);
  code.i32Const(0).localSet(Y);
  loopTo(code, Y, H, () => {
    startIntegralRow(code, pitch, sq);
    // Pairs while x + 1 < w; J = x * 2 is the byte offset of cell x / 2.
    code.open(op.block).open(op.loop);
    code.localGet(X).localGet(LAST).op(op.i32GeS).brIf(1);
    code.localGet(X).i32Const(1).op(op.i32Shl).localSet(J);
    pixel(0, odd);
    pixel(1, 4);
    code.localGet(X).i32Const(2).op(op.i32Add).localSet(X).br(0);
    code.op(op.end).op(op.end);
    // An odd width leaves pixel w - 1, which closes the last (odd) column.
    code.localGet(X).localGet(W).op(op.i32LtS).open(op.if);
    code.localGet(X).i32Const(1).op(op.i32Shl).localSet(J);
    pixel(0, odd);
    code.op(op.end);
  });
  return { params: i32s(3), results: [], locals: i32s(10), body: code };
}

/**
 * integrals(img, w, h): the sum and squared-sum integrals (int32, wrapping like OpenCV's CV_32S) of the w x h
 * image at byte `img`, into memory from address 0 in rows of `pitch` cells, the squared sums `sqOffset` cells
 * into each row (haar-wasm.ts's layout); row 0 and column 0 are zero.
 */
export function integralsFunction(pitch: number, sqOffset: number): FunctionDef {
  const [_IMG, W, H, X, Y, S, Q, V, ROW, PREV, SRC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const sq = sqOffset * 4;
  const code = new Code();
  code.i32Const(0).localSet(X);
  code.localGet(W).i32Const(1).op(op.i32Add).localSet(V);
  loopTo(code, X, V, () => {
    code.localGet(X).i32Const(2).op(op.i32Shl).localTee(ROW).i32Const(0).i32Store(0).localGet(ROW).i32Const(0).i32Store(sq);
  });
  code.i32Const(0).localSet(Y);
  loopTo(code, Y, H, () => {
    startIntegralRow(code, pitch, sq);
    loopTo(code, X, W, () => {
      code.localGet(SRC).localGet(X).op(op.i32Add).i32Load8U(0).localSet(V);
      code.localGet(S).localGet(V).op(op.i32Add).localSet(S);
      code.localGet(Q).localGet(V).localGet(V).op(op.i32Mul).op(op.i32Add).localSet(Q);
      // Cell x + 1 of each row: the byte address (x + 1) * 4 from the row's start.
      code.localGet(ROW).localGet(X).i32Const(2).op(op.i32Shl).op(op.i32Add);
      code.localGet(PREV).localGet(X).i32Const(2).op(op.i32Shl).op(op.i32Add).i32Load(4).localGet(S).op(op.i32Add).i32Store(4);
      code.localGet(ROW).localGet(X).i32Const(2).op(op.i32Shl).op(op.i32Add);
      code
        .localGet(PREV)
        .localGet(X)
        .i32Const(2)
        .op(op.i32Shl)
        .op(op.i32Add)
        .i32Load(4 + sq)
        .localGet(Q)
        .op(op.i32Add)
        .i32Store(4 + sq);
    });
  });
  return { params: i32s(3), results: [], locals: i32s(8), body: code };
}
