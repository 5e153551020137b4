import { describe, expect, it } from 'vitest';
import { buildModule, Code, F64, I32, op } from './builder.js';

// The WebAssembly API as the test uses it (the project's Node typings declare no WebAssembly values).
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Memory: new (d: { initial: number }) => { buffer: ArrayBuffer };
      Instance: new (module: object, imports: object) => { exports: { sum: (n: number) => number } };
    };
  }
).WebAssembly;

const hex = (c: Code) => Array.from(c.toBytes(), (b) => b.toString(16).padStart(2, '0')).join(' ');

describe('Code LEB128 encodings', () => {
  it('writes unsigned LEB128 as the spec examples', () => {
    expect(hex(new Code().u32(0))).toBe('00');
    expect(hex(new Code().u32(127))).toBe('7f');
    expect(hex(new Code().u32(128))).toBe('80 01');
    expect(hex(new Code().u32(624485))).toBe('e5 8e 26');
    expect(hex(new Code().u32(0xffffffff))).toBe('ff ff ff ff 0f');
    expect(() => new Code().u32(-1)).toThrow(RangeError);
  });

  it('writes signed LEB128 with the sign bit in the last byte', () => {
    expect(hex(new Code().s32(0))).toBe('00');
    expect(hex(new Code().s32(63))).toBe('3f');
    expect(hex(new Code().s32(64))).toBe('c0 00');
    expect(hex(new Code().s32(-1))).toBe('7f');
    expect(hex(new Code().s32(-64))).toBe('40');
    expect(hex(new Code().s32(-65))).toBe('bf 7f');
    expect(hex(new Code().s32(-123456))).toBe('c0 bb 78');
    expect(hex(new Code().s32(-0x80000000))).toBe('80 80 80 80 78');
  });
});

describe('buildModule', () => {
  it('makes a module the host compiles and runs: an imported memory, loads with offsets, loops, f64 maths', () => {
    // sum(n): the sum of i32 cells 1..n of memory, as f64 (a loop loading cell i + 1 as address i * 4, offset 4).
    const body = new Code();
    const [N, I, ACC] = [0, 1, 2];
    body.f64Const(0).localSet(ACC).i32Const(0).localSet(I);
    body.open(op.block).open(op.loop);
    body.localGet(I).localGet(N).op(op.i32GeS).brIf(1);
    body.localGet(ACC).localGet(I).i32Const(2).op(op.i32Shl).i32Load(4).op(op.f64ConvertI32S).op(op.f64Add).localSet(ACC);
    body.localGet(I).i32Const(1).op(op.i32Add).localSet(I).br(0);
    body.op(op.end).op(op.end).localGet(ACC);
    const bytes = buildModule([{ name: 'sum', params: [I32], results: [F64], locals: [I32, F64], body }]);
    const memory = new Wasm.Memory({ initial: 1 });
    const { exports } = new Wasm.Instance(new Wasm.Module(bytes), { env: { memory } });
    const cells = new Int32Array(memory.buffer);
    cells.set([5, -7, 1_000_000, 3]);
    expect(exports.sum(3)).toBe(999_996);
    expect(exports.sum(0)).toBe(0);
  });
});
