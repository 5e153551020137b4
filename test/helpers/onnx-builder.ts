/**
 * Test-only ONNX models (on the protobuf writer of shared/objects/onnx-proto.ts): encoding of just the parts of onnx.proto (onnx/onnx,
 * onnx/onnx.proto) needed to build tiny models whose outputs are known constants. No YOLO weights exist here,
 * so the YOLO tests run such models through onnxruntime to exercise the real session path.
 *
 * Field numbers used (onnx.proto):
 *   ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8, metadata_props 14
 *   StringStringEntryProto: key 1, value 2
 *   OperatorSetIdProto: domain 1, version 2
 *   GraphProto: node 1, name 2, initializer 5, input 11, output 12
 *   NodeProto: input 1, output 2, name 3, op_type 4, attribute 5
 *   AttributeProto: name 1, f 2, i 3, t 5, ints 8, type 20 (FLOAT 1, INT 2, TENSOR 4, INTS 7)
 *   TensorProto: dims 1, data_type 2 (FLOAT 1, INT64 7), name 8, raw_data 9
 *   ValueInfoProto: name 1, type 2; TypeProto: tensor_type 1; TypeProto.Tensor: elem_type 1, shape 2
 *   TensorShapeProto: dim 1; Dimension: dim_value 1, dim_param 2
 */
import { ProtobufWriter } from '../../shared/objects/onnx-proto.js';

// ---- ONNX messages ------------------------------------------------------------------------------------

export const ONNX_FLOAT = 1;
export const ONNX_INT64 = 7;

/** A dimension: a number (dim_value) or a name (dim_param, a symbolic dimension). */
export type Dim = number | string;

export interface TensorSpec {
  dims: readonly number[];
  /** Float data (row-major), or int64 data when `type` is ONNX_INT64. */
  data: ArrayLike<number>;
  type?: typeof ONNX_FLOAT | typeof ONNX_INT64;
}

export type AttributeValue =
  | { kind: 'float'; value: number }
  | { kind: 'int'; value: number }
  | { kind: 'ints'; value: readonly number[] }
  | { kind: 'tensor'; value: TensorSpec };

export interface NodeSpec {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attributes?: Record<string, AttributeValue>;
}

export interface ValueSpec {
  name: string;
  /** Omit for a value of unknown shape. */
  shape?: readonly Dim[];
  elemType?: number;
}

export interface GraphSpec {
  inputs: readonly ValueSpec[];
  outputs: readonly ValueSpec[];
  nodes: readonly NodeSpec[];
  initializers?: Record<string, TensorSpec>;
  irVersion?: number;
  opset?: number;
  /** ModelProto.metadata_props, e.g. Ultralytics' `names`: `{0: 'person', 1: 'Hardhat'}`. */
  metadata?: Record<string, string>;
}

function tensorBytes(t: TensorSpec): Uint8Array {
  const n = t.dims.reduce((a, b) => a * b, 1);
  if (t.data.length !== n) throw new RangeError(`tensor data has ${t.data.length} values, dims ${t.dims.join('x')} need ${n}`);
  if ((t.type ?? ONNX_FLOAT) === ONNX_INT64) {
    const out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) out[i] = BigInt(t.data[i]);
    return new Uint8Array(out.buffer);
  }
  return new Uint8Array(Float32Array.from(t.data).buffer);
}

function writeTensor(w: ProtobufWriter, t: TensorSpec, name?: string): void {
  for (const d of t.dims) w.int(1, d);
  w.int(2, t.type ?? ONNX_FLOAT);
  if (name) w.string(8, name);
  // raw_data must be little-endian; typed arrays are little-endian on every platform Node runs on here.
  w.bytes(9, tensorBytes(t));
}

function writeAttribute(w: ProtobufWriter, name: string, a: AttributeValue): void {
  w.string(1, name);
  switch (a.kind) {
    case 'float':
      w.float(2, a.value).int(20, 1);
      break;
    case 'int':
      w.int(3, a.value).int(20, 2);
      break;
    case 'tensor':
      w.message(5, (t) => writeTensor(t, a.value)).int(20, 4);
      break;
    case 'ints':
      for (const v of a.value) w.int(8, v);
      w.int(20, 7);
      break;
  }
}

function writeValueInfo(w: ProtobufWriter, v: ValueSpec): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, v.elemType ?? ONNX_FLOAT);
      if (v.shape) {
        const shape = v.shape;
        tensor.message(2, (s) => {
          for (const d of shape) s.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
        });
      }
    }),
  );
}

/** Serializes a ModelProto for the given graph (default IR version 8, default-domain opset 13). */
export function buildModel(spec: GraphSpec): Uint8Array {
  const w = new ProtobufWriter();
  w.int(1, spec.irVersion ?? 8);
  w.string(2, 'lookout-test-onnx-builder');
  w.message(7, (g) => {
    spec.nodes.forEach((node, i) => {
      g.message(1, (n) => {
        for (const input of node.inputs) n.string(1, input);
        for (const output of node.outputs) n.string(2, output);
        n.string(3, `${node.op.toLowerCase()}_${i}`);
        n.string(4, node.op);
        for (const [name, value] of Object.entries(node.attributes ?? {})) n.message(5, (a) => writeAttribute(a, name, value));
      });
    });
    g.string(2, 'graph');
    for (const [name, t] of Object.entries(spec.initializers ?? {})) g.message(5, (tw) => writeTensor(tw, t, name));
    for (const v of spec.inputs) g.message(11, (vi) => writeValueInfo(vi, v));
    for (const v of spec.outputs) g.message(12, (vi) => writeValueInfo(vi, v));
  });
  w.message(8, (o) => o.string(1, '').int(2, spec.opset ?? 13));
  for (const [key, value] of Object.entries(spec.metadata ?? {})) w.message(14, (e) => e.string(1, key).string(2, value));
  return w.finish();
}

export interface ConstantOutputModel {
  /** Input name; YOLO exports call it `images`. */
  inputName?: string;
  /** Input shape as declared, e.g. [1, 3, 640, 640] or ['batch', 3, 'height', 'width']. */
  inputShape: readonly Dim[];
  outputName?: string;
  /** The output's value: returned whatever the input. */
  output: TensorSpec;
  /** The output shape as declared in the graph; defaults to `output.dims`. */
  declaredOutputShape?: readonly Dim[];
  /**
   * Times the mean of the input tensor, added to the output (default 0): a number for every value, or one
   * gain per output value (same length as `output.data`) to make chosen values report what the model was fed.
   * With 0 the output is the constant, but still computed from the input, so onnxruntime keeps the input.
   */
  inputMeanGain?: number | ArrayLike<number>;
  /** ModelProto.metadata_props (see GraphSpec.metadata). */
  metadata?: Record<string, string>;
}

/**
 * A model `output = constant + gain * ReduceMean(input)`: ReduceMean over all axes with keepdims=0 gives a
 * scalar, which broadcasts over the constant (or the per-value gain) without changing its shape (opset 13 ReduceMean takes `axes`
 * as an attribute; leaving it out reduces every axis).
 */
export function buildConstantOutputModel(spec: ConstantOutputModel): Uint8Array {
  const input = spec.inputName ?? 'images';
  const output = spec.outputName ?? 'output0';
  return buildModel({
    metadata: spec.metadata,
    inputs: [{ name: input, shape: spec.inputShape }],
    outputs: [{ name: output, shape: spec.declaredOutputShape ?? spec.output.dims }],
    initializers: {
      gain:
        typeof spec.inputMeanGain === 'object'
          ? { dims: spec.output.dims, data: spec.inputMeanGain }
          : { dims: [], data: [spec.inputMeanGain ?? 0] },
    },
    nodes: [
      { op: 'Constant', inputs: [], outputs: ['known'], attributes: { value: { kind: 'tensor', value: spec.output } } },
      { op: 'ReduceMean', inputs: [input], outputs: ['mean'], attributes: { keepdims: { kind: 'int', value: 0 } } },
      { op: 'Mul', inputs: ['mean', 'gain'], outputs: ['scaled'] },
      { op: 'Add', inputs: ['known', 'scaled'], outputs: [output] },
    ],
  });
}

// ---- YOLO outputs -------------------------------------------------------------------------------------

/** One YOLO candidate in model-input pixels; `scores` maps class id → class score (others 0). */
export interface YoloCandidate {
  cx: number;
  cy: number;
  w: number;
  h: number;
  /** YOLOv5 only; default 1. */
  objectness?: number;
  scores: Record<number, number>;
}

/**
 * The raw output tensor a YOLO export would give for these candidates: YOLOv5 `[1, N, 85]` rows of
 * (cx, cy, w, h, objectness, 80 scores), or YOLOv8 `[1, 84, N]`, (cx, cy, w, h, 80 scores) per column;
 * `numClasses` other than COCO's 80 gives `[1, N, 5 + nc]` / `[1, 4 + nc, N]`.
 */
export function yoloOutput(layout: 'v5' | 'v8', candidates: readonly YoloCandidate[], numClasses = 80): { dims: number[]; data: number[] } {
  const n = candidates.length;
  const attrs = (layout === 'v5' ? 5 : 4) + numClasses;
  // Plain numbers (doubles) so decoder tests can sit exactly on a threshold; models store them as float32.
  const data = new Array<number>(n * attrs).fill(0);
  const at = (i: number, a: number) => (layout === 'v5' ? i * attrs + a : a * n + i);
  candidates.forEach((c, i) => {
    const first = layout === 'v5' ? 5 : 4;
    data[at(i, 0)] = c.cx;
    data[at(i, 1)] = c.cy;
    data[at(i, 2)] = c.w;
    data[at(i, 3)] = c.h;
    if (layout === 'v5') data[at(i, 4)] = c.objectness ?? 1;
    for (const [cls, score] of Object.entries(c.scores)) data[at(i, first + Number(cls))] = score;
  });
  return { dims: layout === 'v5' ? [1, n, attrs] : [1, attrs, n], data };
}
