/**
 * A minimal WebAssembly binary writer: just what Lookout's generated kernels need (one imported memory,
 * functions over i32/f32/f64/v128, structured control flow), so a kernel can be specialised to its data (a cascade's
 * offsets and thresholds become immediates) and compiled by the host's own engine, in Node and in browsers alike.
 * Binary format: https://webassembly.github.io/spec/core/binary/
 *
 * Hand-made rather than a toolkit because modules are generated at run time, on the server and in every browser
 * worker that runs the cascade (client/src/engine/cascade-worker.ts): binaryen.js or wabt.js, C++ toolchains
 * compiled to JavaScript and megabytes each, would be loaded there to write some 80 opcodes into one fixed
 * module shape, which takes this file about 300 lines.
 */

export const I32 = 0x7f;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof F32 | typeof F64 | typeof V128;
/** Block type of a block that leaves nothing on the stack. */
export const VOID = 0x40;

/** Opcodes used by the kernels (single-byte ones). */
export const op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  return: 0x0f,
  call: 0x10,
  select: 0x1b,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  i32Load8U: 0x2d,
  i32Store: 0x36,
  i32Store8: 0x3a,
  i32Const: 0x41,
  f32Const: 0x43,
  f64Const: 0x44,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtS: 0x48,
  i32GtS: 0x4a,
  i32LeS: 0x4c,
  i32GeS: 0x4e,
  f32Lt: 0x5d,
  f64Lt: 0x63,
  f64Gt: 0x64,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Or: 0x72,
  i32Xor: 0x73,
  i32Shl: 0x74,
  i32ShrS: 0x75,
  i32ShrU: 0x76,
  f32Add: 0x92,
  f32Mul: 0x94,
  f64Sqrt: 0x9f,
  f64Add: 0xa0,
  f64Sub: 0xa1,
  f64Mul: 0xa2,
  f64Div: 0xa3,
  f32ConvertI32S: 0xb2,
  f32DemoteF64: 0xb6,
  f64ConvertI32S: 0xb7,
  f64ConvertI32U: 0xb8,
  f64PromoteF32: 0xbb,
} as const;

/** SIMD opcodes (after the 0xfd prefix), https://webassembly.github.io/spec/core/binary/instructions.html#vector-instructions */
export const simd = {
  v128Load: 0x00,
  v128Const: 0x0c,
  i8x16Shuffle: 0x0d,
  i32x4Splat: 0x11,
  f32x4Splat: 0x13,
  f64x2Splat: 0x14,
  i32x4Ne: 0x38,
  f32x4Lt: 0x43,
  f64x2Lt: 0x49,
  f64x2Gt: 0x4a,
  v128Not: 0x4d,
  v128And: 0x4e,
  v128Bitselect: 0x52,
  v128AnyTrue: 0x53,
  f32x4DemoteF64x2Zero: 0x5e,
  f64x2PromoteLowF32x4: 0x5f,
  i32x4Bitmask: 0xa4,
  i32x4Add: 0xae,
  i32x4Sub: 0xb1,
  f32x4Add: 0xe4,
  f32x4Mul: 0xe6,
  f64x2Sqrt: 0xef,
  f64x2Add: 0xf0,
  f64x2Sub: 0xf1,
  f64x2Mul: 0xf2,
  f64x2Div: 0xf3,
  f32x4ConvertI32x4S: 0xfa,
  f64x2ConvertLowI32x4S: 0xfe,
  f64x2ConvertLowI32x4U: 0xff,
} as const;

// Little-endian float encoding.
const scratch = new Uint8Array(16);
const scratchView = new DataView(scratch.buffer);

/** A growable byte buffer with the encodings instructions need. */
export class Code {
  private buf = new Uint8Array(256);
  private len = 0;

  get length(): number {
    return this.len;
  }

  byte(b: number): this {
    if (this.len === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.len++] = b;
    return this;
  }

  bytes(bs: ArrayLike<number>): this {
    for (let i = 0; i < bs.length; i++) this.byte(bs[i]);
    return this;
  }

  /** Unsigned LEB128. */
  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`u32 out of range: ${v}`);
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v !== 0) b |= 0x80;
      this.byte(b);
    } while (v !== 0);
    return this;
  }

  /** Signed LEB128 (32-bit). */
  s32(v: number): this {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new RangeError(`s32 out of range: ${v}`);
    for (;;) {
      const b = v & 0x7f;
      v >>= 7;
      const done = (v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0);
      this.byte(done ? b : b | 0x80);
      if (done) return this;
    }
  }

  op(code: number): this {
    return this.byte(code);
  }

  localGet(i: number): this {
    return this.byte(op.localGet).u32(i);
  }

  localSet(i: number): this {
    return this.byte(op.localSet).u32(i);
  }

  localTee(i: number): this {
    return this.byte(op.localTee).u32(i);
  }

  i32Const(v: number): this {
    return this.byte(op.i32Const).s32(v);
  }

  f32Const(v: number): this {
    scratchView.setFloat32(0, v, true);
    return this.byte(op.f32Const).bytes(scratch.subarray(0, 4));
  }

  f64Const(v: number): this {
    scratchView.setFloat64(0, v, true);
    return this.byte(op.f64Const).bytes(scratch.subarray(0, 8));
  }

  /** i32.load with a constant byte offset added to the address on the stack (4-byte aligned). */
  i32Load(offset: number): this {
    return this.byte(op.i32Load).u32(2).u32(offset);
  }

  i32Store(offset: number): this {
    return this.byte(op.i32Store).u32(2).u32(offset);
  }

  /** One byte, zero-extended; and its store. */
  i32Load8U(offset: number): this {
    return this.byte(op.i32Load8U).u32(0).u32(offset);
  }

  i32Store8(offset: number): this {
    return this.byte(op.i32Store8).u32(0).u32(offset);
  }

  /** A SIMD instruction without immediates. */
  simd(code: number): this {
    return this.byte(0xfd).u32(code);
  }

  /** v128.load of 16 bytes at the address on the stack plus `offset` (4-byte aligned). */
  v128Load(offset: number): this {
    return this.simd(simd.v128Load).u32(2).u32(offset);
  }

  /** i8x16.shuffle: byte lanes 0-15 from the first operand, 16-31 from the second. */
  shuffle(lanes: readonly number[]): this {
    if (lanes.length !== 16 || lanes.some((l) => !Number.isInteger(l) || l < 0 || l > 31))
      throw new RangeError('shuffle needs 16 lanes in 0..31');
    return this.simd(simd.i8x16Shuffle).bytes(lanes);
  }

  /** v128.const of four i32 lanes. */
  i32x4Const(lanes: readonly [number, number, number, number]): this {
    lanes.forEach((v, i) => {
      scratchView.setInt32(i * 4, v, true);
    });
    return this.simd(simd.v128Const).bytes(scratch);
  }

  call(fn: number): this {
    return this.byte(op.call).u32(fn);
  }

  /** block/loop/if with a block type (VOID or a value type). */
  open(kind: typeof op.block | typeof op.loop | typeof op.if, type: number = VOID): this {
    return this.byte(kind).byte(type);
  }

  br(depth: number): this {
    return this.byte(op.br).u32(depth);
  }

  brIf(depth: number): this {
    return this.byte(op.brIf).u32(depth);
  }

  toBytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

export interface FunctionDef {
  name?: string;
  params: ValType[];
  results: ValType[];
  /** Extra locals after the parameters, in order. */
  locals: ValType[];
  /** The body's instructions, without the final `end`. */
  body: Code;
}

function section(out: Code, id: number, content: Code): void {
  out.byte(id).u32(content.length).bytes(content.toBytes());
}

function name(out: Code, text: string): void {
  const b = new TextEncoder().encode(text);
  out.u32(b.length).bytes(b);
}

/**
 * A module of `functions` (indices in order) using one memory it imports as `env.memory` (so several modules can
 * share one); functions with a name are exported under it.
 */
export function buildModule(functions: readonly FunctionDef[]): Uint8Array {
  const out = new Code().bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  // One type per function keeps the writer simple; engines deduplicate them.
  const types = new Code().u32(functions.length);
  for (const f of functions) {
    types.byte(0x60).u32(f.params.length).bytes(f.params).u32(f.results.length).bytes(f.results);
  }
  section(out, 1, types);
  const imports = new Code().u32(1);
  name(imports, 'env');
  name(imports, 'memory');
  imports.byte(0x02).byte(0x00).u32(1); // memory, at least one page, no maximum
  section(out, 2, imports);
  const funcs = new Code().u32(functions.length);
  functions.forEach((_, i) => {
    funcs.u32(i);
  });
  section(out, 3, funcs);
  const exported = functions.map((f, i) => ({ f, i })).filter(({ f }) => f.name !== undefined);
  const exports = new Code().u32(exported.length);
  for (const { f, i } of exported) {
    name(exports, f.name!);
    exports.byte(0x00).u32(i);
  }
  section(out, 7, exports);
  const code = new Code().u32(functions.length);
  for (const f of functions) {
    const body = new Code();
    // Locals as runs of one type.
    const runs: [number, ValType][] = [];
    for (const t of f.locals) {
      const last = runs[runs.length - 1];
      if (last && last[1] === t) last[0]++;
      else runs.push([1, t]);
    }
    body.u32(runs.length);
    for (const [n, t] of runs) body.u32(n).byte(t);
    body.bytes(f.body.toBytes()).op(op.end);
    code.u32(body.length).bytes(body.toBytes());
  }
  section(out, 10, code);
  return out.toBytes();
}
