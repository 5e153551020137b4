/**
 * A minimal ONNX model writer: protobuf encoding of the parts of onnx.proto (github.com/onnx/onnx,
 * onnx/onnx.proto, proto2) a plain feed-forward graph needs, so a model can be built in memory and handed to
 * onnxruntime (node or web) without a protobuf dependency. Weights travel as `raw_data` views: megabytes of
 * floats are copied once, into the final buffer. No `node:` imports, no DOM.
 *
 * Field numbers (onnx.proto):
 *   ModelProto: ir_version 1, producer_name 2, producer_version 3, graph 7, opset_import 8
 *   OperatorSetIdProto: domain 1, version 2
 *   GraphProto: node 1, name 2, initializer 5, input 11, output 12
 *   NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7
 *   AttributeProto: name 1, f 2, i 3, s 4, ints 8, type 20 (FLOAT 1, INT 2, STRING 3, INTS 7)
 *   TensorProto: dims 1, data_type 2 (FLOAT 1, INT64 7), name 8, raw_data 9
 *   ValueInfoProto: name 1, type 2; TypeProto: tensor_type 1; TypeProto.Tensor: elem_type 1, shape 2
 *   TensorShapeProto: dim 1; Dimension: dim_value 1
 */

const VARINT = 0;
const I32 = 5;
const LEN = 2;

/** Protobuf wire-format writer; nested messages are length-prefixed chunks, joined once in `finish()`. */
export class ProtobufWriter {
  readonly chunks: Uint8Array[] = [];
  length = 0;
  #small: number[] = [];

  #flush(): void {
    if (!this.#small.length) return;
    this.chunks.push(Uint8Array.from(this.#small));
    this.#small = [];
  }

  #byte(b: number): void {
    this.#small.push(b);
    this.length++;
  }

  varint(value: number): this {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer: ${value}`);
    // Negative int64 is its 64-bit two's complement (10 bytes), as protobuf writes it.
    let v = BigInt.asUintN(64, BigInt(value));
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) b |= 0x80;
      this.#byte(b);
    } while (v !== 0n);
    return this;
  }

  #tag(field: number, wire: number): this {
    return this.varint((field << 3) | wire);
  }

  int(field: number, value: number): this {
    return this.#tag(field, VARINT).varint(value);
  }

  float(field: number, value: number): this {
    this.#tag(field, I32);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    for (const x of b) this.#byte(x);
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.#tag(field, LEN).varint(data.length);
    this.#flush();
    this.chunks.push(data);
    this.length += data.length;
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: ProtobufWriter) => void): this {
    const inner = new ProtobufWriter();
    build(inner);
    inner.#flush();
    this.#tag(field, LEN).varint(inner.length);
    this.#flush();
    this.chunks.push(...inner.chunks);
    this.length += inner.length;
    return this;
  }

  finish(): Uint8Array {
    this.#flush();
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export type OnnxAttribute = { float: number } | { int: number } | { ints: readonly number[] } | { string: string };

export interface OnnxNode {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  name?: string;
  attributes?: Record<string, OnnxAttribute>;
}

export interface OnnxInitializer {
  name: string;
  dims: readonly number[];
  data: Float32Array | BigInt64Array;
}

export interface OnnxValue {
  name: string;
  /** Static shape; float32 is the only element type written. */
  shape: readonly number[];
}

export interface OnnxGraph {
  name: string;
  nodes: readonly OnnxNode[];
  initializers: readonly OnnxInitializer[];
  inputs: readonly OnnxValue[];
  outputs: readonly OnnxValue[];
}

export interface OnnxModel {
  graph: OnnxGraph;
  /** Default-domain opset. */
  opset: number;
  irVersion: number;
  producer: string;
  producerVersion?: string;
}

const FLOAT = 1;
const INT64 = 7;

function writeAttribute(w: ProtobufWriter, name: string, a: OnnxAttribute): void {
  w.string(1, name);
  if ('float' in a) w.float(2, a.float).int(20, 1);
  else if ('int' in a) w.int(3, a.int).int(20, 2);
  else if ('string' in a) w.string(4, a.string).int(20, 3);
  else {
    for (const v of a.ints) w.int(8, v);
    w.int(20, 7);
  }
}

function writeValue(w: ProtobufWriter, v: OnnxValue): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, FLOAT);
      tensor.message(2, (shape) => {
        for (const d of v.shape) shape.message(1, (dim) => dim.int(1, d));
      });
    }),
  );
}

function writeInitializer(w: ProtobufWriter, t: OnnxInitializer): void {
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.data instanceof Float32Array ? FLOAT : INT64);
  w.string(8, t.name);
  // Little-endian, as raw_data requires (every platform Lookout runs on is).
  w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

/** The model as ONNX protobuf bytes, ready for `InferenceSession.create`. Same model, same bytes. */
export function encodeOnnxModel(model: OnnxModel): Uint8Array {
  const w = new ProtobufWriter();
  w.int(1, model.irVersion);
  w.string(2, model.producer);
  if (model.producerVersion) w.string(3, model.producerVersion);
  w.message(7, (g) => {
    for (const n of model.graph.nodes) {
      g.message(1, (node) => {
        for (const i of n.inputs) node.string(1, i);
        for (const o of n.outputs) node.string(2, o);
        if (n.name) node.string(3, n.name);
        node.string(4, n.op);
        for (const [k, a] of Object.entries(n.attributes ?? {})) node.message(5, (attr) => writeAttribute(attr, k, a));
      });
    }
    g.string(2, model.graph.name);
    for (const t of model.graph.initializers) g.message(5, (init) => writeInitializer(init, t));
    for (const v of model.graph.inputs) g.message(11, (value) => writeValue(value, v));
    for (const v of model.graph.outputs) g.message(12, (value) => writeValue(value, v));
  });
  w.message(8, (op) => op.string(1, '').int(2, model.opset));
  return w.finish();
}
