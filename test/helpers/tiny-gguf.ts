/**
 * TEST HELPER: writes a tiny random-weight GGUF v3 model that llama.cpp loads: the `llama` architecture with a
 * couple of layers, embedding 64, 2 heads, and a `llama` (SentencePiece) vocabulary of the byte tokens
 * `<0x00>`..`<0xFF>`, `<unk>`/`<s>`/`</s>`, and a few dozen lower-case pieces. All tensors are F32.
 *
 * The weights are random but rigged so generation never ends by itself and reads as (nonsense) words:
 * embedding dimension 0 is a large constant the layers never write to, and the output row of every token
 * is +B there for the lower-case pieces and -B for the rest (specials, bytes), so only the pieces can win.
 * A reply therefore runs until max_tokens, which is what the tests want.
 */
import fs from 'node:fs/promises';
import { seededRandom } from './seeded-random.js';

export interface TinyGgufOptions {
  layers?: number;
  embedding?: number;
  heads?: number;
  feedForward?: number;
  /** llama.context_length written to the file. */
  contextLength?: number;
  seed?: number;
  name?: string;
}

// GGUF value types.
const T_UINT32 = 4;
const T_INT32 = 5;
const T_FLOAT32 = 6;
const T_BOOL = 7;
const T_STRING = 8;
const T_ARRAY = 9;
/** ggml tensor type F32. */
const GGML_F32 = 0;
const ALIGN = 32;

type Kv =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'str'; value: string }
  | { type: 'str[]'; value: string[] }
  | { type: 'f32[]'; value: number[] }
  | { type: 'i32[]'; value: number[] };

class Writer {
  private readonly parts: Buffer[] = [];
  length = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  pad(): void {
    const n = (ALIGN - (this.length % ALIGN)) % ALIGN;
    if (n) this.push(Buffer.alloc(n));
  }
  buffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** The vocabulary: specials, 256 byte tokens, then word pieces (the only tokens generation picks). */
function vocabulary(): { tokens: string[]; scores: number[]; types: number[]; firstPiece: number } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3]; // UNKNOWN, CONTROL, CONTROL
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6); // BYTE
  }
  const firstPiece = tokens.length;
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  tokens.push('\u2581'); // the SentencePiece space
  for (const c of letters) tokens.push(c);
  for (const c of letters) tokens.push(`\u2581${c}`);
  for (const w of ['an', 'er', 'in', 'on', 'th', 'the', '\u2581the', '\u2581a', 'ing', 'ed']) if (!tokens.includes(w)) tokens.push(w);
  while (types.length < tokens.length) types.push(1); // NORMAL
  const scores = tokens.map((t, i) => (i < firstPiece ? 0 : -(i - firstPiece) / 10 + t.length));
  return { tokens, scores, types, firstPiece };
}

/** Writes the model to `file`; resolves with its size in bytes. */
export async function writeTinyGguf(file: string, opts: TinyGgufOptions = {}): Promise<number> {
  const nLayer = opts.layers ?? 2;
  const nEmbd = opts.embedding ?? 64;
  const nHead = opts.heads ?? 2;
  const nFf = opts.feedForward ?? 128;
  const nCtx = opts.contextLength ?? 2048;
  const headDim = nEmbd / nHead;
  if (!Number.isInteger(headDim) || headDim % 2) throw new RangeError('embedding / heads must be an even integer');
  const rand = seededRandom(opts.seed ?? 1234);
  const { tokens, scores, types, firstPiece } = vocabulary();
  const nVocab = tokens.length;

  const kvs: Array<[string, Kv]> = [
    ['general.architecture', { type: 'str', value: 'llama' }],
    ['general.name', { type: 'str', value: opts.name ?? 'lookout-tiny-test' }],
    ['general.alignment', { type: 'u32', value: ALIGN }],
    ['llama.context_length', { type: 'u32', value: nCtx }],
    ['llama.embedding_length', { type: 'u32', value: nEmbd }],
    ['llama.block_count', { type: 'u32', value: nLayer }],
    ['llama.feed_forward_length', { type: 'u32', value: nFf }],
    ['llama.attention.head_count', { type: 'u32', value: nHead }],
    ['llama.attention.head_count_kv', { type: 'u32', value: nHead }],
    ['llama.rope.dimension_count', { type: 'u32', value: headDim }],
    ['llama.rope.freq_base', { type: 'f32', value: 10000 }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.vocab_size', { type: 'u32', value: nVocab }],
    ['tokenizer.ggml.model', { type: 'str', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'str[]', value: tokens }],
    ['tokenizer.ggml.scores', { type: 'f32[]', value: scores }],
    ['tokenizer.ggml.token_type', { type: 'i32[]', value: types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ];

  // Tensors: name, ggml shape (ne0 first: the input dimension of a matrix), data.
  const tensors: Array<{ name: string; shape: number[]; data: Float32Array }> = [];
  const randn = (n: number, scale: number) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = (rand() * 2 - 1) * scale;
    return a;
  };
  const ones = (n: number) => new Float32Array(n).fill(1);
  /** A matrix whose output dimension 0 (its first row of `ne0` values) is zero: the layers never touch dim 0. */
  const noDim0 = (ne0: number, ne1: number, scale: number) => {
    const a = randn(ne0 * ne1, scale);
    a.fill(0, 0, ne0);
    return a;
  };

  const CONST = 8; // embedding dim 0 of every token
  const B = 4; // output weight of dim 0: + for pieces, - for the rest
  const embd = randn(nEmbd * nVocab, 0.5);
  for (let t = 0; t < nVocab; t++) embd[t * nEmbd] = CONST;
  const out = randn(nEmbd * nVocab, 0.5);
  for (let t = 0; t < nVocab; t++) out[t * nEmbd] = t >= firstPiece ? B : -B;

  tensors.push({ name: 'token_embd.weight', shape: [nEmbd, nVocab], data: embd });
  tensors.push({ name: 'output_norm.weight', shape: [nEmbd], data: ones(nEmbd) });
  tensors.push({ name: 'output.weight', shape: [nEmbd, nVocab], data: out });
  const s = 1 / Math.sqrt(nEmbd);
  for (let l = 0; l < nLayer; l++) {
    const p = `blk.${l}.`;
    tensors.push({ name: `${p}attn_norm.weight`, shape: [nEmbd], data: ones(nEmbd) });
    tensors.push({ name: `${p}attn_q.weight`, shape: [nEmbd, nEmbd], data: randn(nEmbd * nEmbd, s) });
    tensors.push({ name: `${p}attn_k.weight`, shape: [nEmbd, nEmbd], data: randn(nEmbd * nEmbd, s) });
    tensors.push({ name: `${p}attn_v.weight`, shape: [nEmbd, nEmbd], data: randn(nEmbd * nEmbd, s) });
    tensors.push({ name: `${p}attn_output.weight`, shape: [nEmbd, nEmbd], data: noDim0(nEmbd, nEmbd, s) });
    tensors.push({ name: `${p}ffn_norm.weight`, shape: [nEmbd], data: ones(nEmbd) });
    tensors.push({ name: `${p}ffn_gate.weight`, shape: [nEmbd, nFf], data: randn(nEmbd * nFf, s) });
    tensors.push({ name: `${p}ffn_up.weight`, shape: [nEmbd, nFf], data: randn(nEmbd * nFf, s) });
    tensors.push({ name: `${p}ffn_down.weight`, shape: [nFf, nEmbd], data: noDim0(nFf, nEmbd, 1 / Math.sqrt(nFf)) });
  }

  const w = new Writer();
  w.push(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kvs.length);
  // A GGUF array value: element type, count, then the elements.
  const writeArray = <T>(type: number, items: readonly T[], write: (v: T) => void) => {
    w.u32(T_ARRAY);
    w.u32(type);
    w.u64(items.length);
    for (const v of items) write(v);
  };
  for (const [key, kv] of kvs) {
    w.str(key);
    switch (kv.type) {
      case 'u32':
        w.u32(T_UINT32);
        w.u32(kv.value);
        break;
      case 'f32':
        w.u32(T_FLOAT32);
        w.f32(kv.value);
        break;
      case 'bool':
        w.u32(T_BOOL);
        w.push(Buffer.from([kv.value ? 1 : 0]));
        break;
      case 'str':
        w.u32(T_STRING);
        w.str(kv.value);
        break;
      case 'str[]':
        writeArray(T_STRING, kv.value, (v) => w.str(v));
        break;
      case 'f32[]':
        writeArray(T_FLOAT32, kv.value, (v) => w.f32(v));
        break;
      case 'i32[]':
        writeArray(T_INT32, kv.value, (v) => w.i32(v));
        break;
    }
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    w.str(t.name);
    w.u32(t.shape.length);
    for (const d of t.shape) w.u64(d);
    w.u32(GGML_F32);
    w.u64(offset);
    offsets.push(offset);
    offset += Math.ceil(t.data.byteLength / ALIGN) * ALIGN;
  }
  w.pad();
  const dataStart = w.length;
  for (let i = 0; i < tensors.length; i++) {
    const t = tensors[i];
    if (w.length - dataStart !== offsets[i]) throw new Error('tensor offset mismatch');
    w.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  const buf = w.buffer();
  await fs.writeFile(file, buf);
  return buf.length;
}
