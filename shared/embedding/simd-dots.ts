/**
 * Dot products of one query with every template of a model, four float32 lanes at a time (WebAssembly SIMD), for
 * the one-pass ranking in matcher.ts. The templates are copied once into the module's memory (one contiguous
 * block per model; the last model ranked stays resident, another one replaces it). Where WebAssembly SIMD is
 * missing or refused (an old browser, a page without 'wasm-unsafe-eval'), `simdDots` is null and the matcher uses
 * its JavaScript loop. Runs in Node and browsers (no Node APIs).
 *
 * The module, one function written with the project's module writer (shared/wasm/builder.ts):
 *   dots(d, q, n, dim, out): for each of the n rows of dim float32 at d (dim a multiple of 8, n >= 1), two f32x4
 *   running sums of row * query, 8 values a turn; out[i] (f64) = the 8 lanes, promoted to f64 and added.
 */
import { buildModule, Code, I32, op, simd, V128 } from '../wasm/builder.js';
import { wasm, WASM_PAGE as PAGE } from '../wasm/runtime.js';

// Opcodes the writer's tables do not name yet.
const I32_LT_U = 0x49;
const F64_STORE = 0x39;
const F32X4_EXTRACT_LANE = 0x1f;

// Locals: 0 d, 1 q, 2 n, 3 dim, 4 out (params); 5 i, 6 k, 7 row bytes (i32); 8, 9 the two sums (v128).
const [D, Q, N, DIM, OUT, I, K, ROW, ACC0, ACC1] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

function dotsFunction(): Uint8Array {
  const c = new Code();
  c.localGet(DIM).i32Const(2).op(op.i32Shl).localSet(ROW);
  c.open(op.loop); // rows
  c.i32x4Const([0, 0, 0, 0]).localSet(ACC0);
  c.i32x4Const([0, 0, 0, 0]).localSet(ACC1);
  c.i32Const(0).localSet(K);
  c.open(op.loop); // 8 values a turn
  for (const [acc, offset] of [
    [ACC0, 0],
    [ACC1, 16],
  ]) {
    c.localGet(acc);
    c.localGet(D).localGet(K).op(op.i32Add).v128Load(offset);
    c.localGet(Q).localGet(K).op(op.i32Add).v128Load(offset);
    c.simd(simd.f32x4Mul).simd(simd.f32x4Add).localSet(acc);
  }
  c.localGet(K).i32Const(32).op(op.i32Add).localTee(K).localGet(ROW).op(I32_LT_U).brIf(0);
  c.op(op.end);
  // out + i * 8 = ((l0 + l1) + (l2 + l3)) of each sum, in f64, added
  c.localGet(OUT).localGet(I).i32Const(3).op(op.i32Shl).op(op.i32Add);
  for (const acc of [ACC0, ACC1]) {
    for (const lane of [0, 1, 2, 3]) {
      c.localGet(acc).simd(F32X4_EXTRACT_LANE).byte(lane).op(op.f64PromoteF32);
      if (lane % 2 === 1) c.op(op.f64Add);
    }
    c.op(op.f64Add);
  }
  c.op(op.f64Add).byte(F64_STORE).u32(3).u32(0);
  c.localGet(D).localGet(ROW).op(op.i32Add).localSet(D);
  c.localGet(I).i32Const(1).op(op.i32Add).localTee(I).localGet(N).op(I32_LT_U).brIf(0);
  c.op(op.end);
  return buildModule([{ name: 'dots', params: [I32, I32, I32, I32, I32], results: [], locals: [I32, I32, I32, V128, V128], body: c }]);
}

const align16 = (n: number) => (n + 15) & ~15;

/** A dot-product engine over one resident model's templates. */
export interface SimdDots {
  /**
   * Writes q.x_i for every template i of `templates` (n x dim, dim a multiple of 8) into `out` (f64). The query is
   * rounded to float32 first; the products and the two running sums per lane are float32. False when the
   * templates do not fit in the module's memory (then nothing is written).
   */
  dots(templates: Float32Array, dim: number, query: ArrayLike<number>, out: Float64Array): boolean;
}

function create(): SimdDots | null {
  if (!wasm) return null;
  const memory = new wasm.Memory({ initial: 1 });
  // Throws where SIMD is not supported: no engine then.
  const instance = new wasm.Instance(new wasm.Module(dotsFunction()), { env: { memory } });
  const run = instance.exports.dots as (d: number, q: number, n: number, dim: number, out: number) => void;
  let resident: Float32Array | null = null;
  let residentDim = 0;
  let layout = { query: 0, out: 0, templates: 0 };
  return {
    dots(templates, dim, query, out) {
      const n = templates.length / dim;
      if (resident !== templates || residentDim !== dim) {
        resident = null;
        const queryAt = 0;
        const outAt = align16(dim * 4);
        const templatesAt = align16(outAt + n * 8);
        const bytes = templatesAt + templates.length * 4;
        if (bytes > memory.buffer.byteLength) {
          try {
            memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
          } catch {
            return false;
          }
        }
        new Float32Array(memory.buffer, templatesAt, templates.length).set(templates);
        layout = { query: queryAt, out: outAt, templates: templatesAt };
        resident = templates;
        residentDim = dim;
      }
      const q = new Float32Array(memory.buffer, layout.query, dim);
      for (let k = 0; k < dim; k++) q[k] = query[k];
      run(layout.templates, layout.query, n, dim, layout.out);
      out.set(new Float64Array(memory.buffer, layout.out, n));
      return true;
    },
  };
}

let engine: SimdDots | null | undefined;

/** The SIMD engine, made on first use; null where WebAssembly SIMD is not available. */
export function simdDots(): SimdDots | null {
  if (engine === undefined) {
    try {
      engine = create();
    } catch {
      engine = null;
    }
  }
  return engine;
}
