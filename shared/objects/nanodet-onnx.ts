/**
 * Converts the shipped NanoDet tfjs graph (public/models/nanodet.json + nanodet.bin) back to ONNX, at load
 * time and in memory, so onnxruntime runs the same weights (onnxruntime-node on the server, onnxruntime-web's
 * WASM or WebGPU execution provider in the browser). No file is written; no `node:` imports, no DOM.
 *
 * The tfjs graph is an ONNX -> TensorFlow -> tfjs conversion: activations are NCHW as in the original ONNX
 * export, and every TF op that only runs NHWC (Conv2D, MaxPool, ResizeBilinear) is wrapped in a pair of
 * Transposes (83 in all). ONNX's Conv/MaxPool/Resize are NCHW, so the pairs cancel: each tensor is tracked as
 * an ONNX tensor plus the axis permutation that gives the TF tensor (`perm[i]`: the ONNX axis holding TF axis
 * i). A Transpose only changes that permutation; an op that needs another layout gets a real Transpose (only
 * the six head outputs, [1, C, cells] -> [1, cells, C], do). On the way:
 *  - a zero Pad feeding a VALID Conv2D and the -inf PadV2 feeding the MaxPool become the op's `pads`;
 *  - a bias Add after a convolution becomes the Conv's bias input (onnxruntime then fuses Conv + LeakyRelu);
 *  - constant subgraphs (the Reshape shapes, built with SparseToDense + AddV2) are evaluated here;
 *  - float16-quantised weights are widened to float32 exactly as tfjs does (every half is a float).
 *
 * Ops in the shipped graph, all handled: Placeholder, Const, Transpose, Pad, PadV2, Conv2D, Add, AddV2,
 * LeakyRelu, MaxPool, ConcatV2, ResizeBilinear, SplitV, Sigmoid, Reshape, SparseToDense (constant), Identity.
 * Anything else throws with the op's name; so does a layout the rules above do not cover.
 */
import { encodeOnnxModel, type OnnxInitializer, type OnnxNode, type OnnxValue } from './onnx-proto.js';

/** The slice of a tfjs graph model's artifacts the converter reads (model.json's topology, the weights). */
export interface TfjsGraphArtifacts {
  modelTopology: unknown;
  /** model.json's signature (inputs and outputs by name), for tfjs. */
  signature?: unknown;
  weightSpecs: readonly TfjsWeightSpec[];
  weightData: ArrayBuffer | Uint8Array;
}

export interface TfjsWeightSpec {
  name: string;
  shape: readonly number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number };
}

interface TfAttr {
  s?: string;
  i?: string | number;
  f?: number;
  b?: boolean;
  list?: { i?: (string | number)[] };
  shape?: { dim?: { size: string | number }[] };
}

interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttr>;
}

export interface NanoDetOnnx {
  /** The ONNX model (opset 13), for `InferenceSession.create`. The same files give the same bytes. */
  bytes: Uint8Array;
  /** Name and shape of the one input, [1, 3, 416, 416] for the shipped graph (NCHW, BGR normalised). */
  input: OnnxValue;
  outputs: OnnxValue[];
  stats: { tfNodes: number; onnxNodes: number; transposes: number };
}

const OPSET = 13;
const IR_VERSION = 7;

interface Const {
  shape: number[];
  data: Float32Array | Int32Array;
}

/** An ONNX tensor; `pad` while it is a Pad not yet written (it may fold into the Conv or MaxPool reading it). */
interface Tensor {
  name: string;
  shape: number[];
  written: boolean;
  pad?: { src: string; pads: number[]; value: number };
  /** The Conv node producing it, while its bias is still open. */
  conv?: OnnxNode;
}

/** A TF tensor: ONNX tensor `t` read through `perm` (TF axis i is axis perm[i] of `t`). */
interface Val {
  t: Tensor;
  perm: number[];
}

const NHWC = [0, 2, 3, 1];
const identity = (n: number) => Array.from({ length: n }, (_, i) => i);
const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => v === b[i]);
const b64text = (s: string | undefined) => (s === undefined ? undefined : atob(s));
/** `node:1` -> [node, 1]; `node` and `node:0` -> [node, 0]. */
function splitRef(ref: string): [string, number] {
  const m = /^(.*):(\d+)$/.exec(ref);
  return m ? [m[1], Number(m[2])] : [ref, 0];
}

let halves: Float32Array | null = null;
/** float16 bits -> float32, through a table of all 65536 halves (ten times faster than per-value arithmetic). */
function halfTable(): Float32Array {
  if (halves) return halves;
  halves = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) halves[h] = halfToFloat(h);
  return halves;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** The weights by name, widened to float32 / int32 as tfjs's loader does. */
function readWeights(specs: readonly TfjsWeightSpec[], data: ArrayBuffer | Uint8Array): Map<string, Const> {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Map<string, Const>();
  let at = 0;
  for (const spec of specs) {
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const stored = spec.quantization?.dtype ?? spec.dtype;
    const shape = [...spec.shape];
    if (spec.dtype === 'float32' && stored === 'float16') {
      const table = halfTable();
      const f = new Float32Array(count);
      for (let k = 0; k < count; k++) f[k] = table[view.getUint16(at + 2 * k, true)];
      out.set(spec.name, { shape, data: f });
      at += 2 * count;
    } else if (spec.dtype === 'float32' && stored === 'float32') {
      const f = new Float32Array(count);
      for (let k = 0; k < count; k++) f[k] = view.getFloat32(at + 4 * k, true);
      out.set(spec.name, { shape, data: f });
      at += 4 * count;
    } else if (spec.dtype === 'int32' && stored === 'int32') {
      const v = new Int32Array(count);
      for (let k = 0; k < count; k++) v[k] = view.getInt32(at + 4 * k, true);
      out.set(spec.name, { shape, data: v });
      at += 4 * count;
    } else {
      throw new Error(`weight ${spec.name}: unsupported dtype ${spec.dtype} stored as ${stored}`);
    }
    if (at > bytes.byteLength) throw new Error(`the weights end before ${spec.name} (${bytes.byteLength} bytes)`);
  }
  return out;
}

const ints = (list: TfAttr | undefined) => (list?.list?.i ?? []).map(Number);

/** TF padding attributes to ONNX [top, left, bottom, right] for an NHWC op with this window. */
function spatialPads(node: TfNode, inHW: number[], kernel: number[], strides: number[], dilations: number[]): number[] {
  const padding = b64text(node.attr?.padding?.s);
  if (padding === 'VALID') return [0, 0, 0, 0];
  if (padding === 'EXPLICIT') {
    const p = ints(node.attr?.explicit_paddings);
    if (p.length !== 8 || p[0] || p[1] || p[6] || p[7]) throw new Error(`${node.name}: explicit paddings ${p} pad batch or channels`);
    return [p[2], p[4], p[3], p[5]];
  }
  if (padding === 'SAME') {
    const total = inHW.map((n, a) => Math.max((Math.ceil(n / strides[a]) - 1) * strides[a] + (kernel[a] - 1) * dilations[a] + 1 - n, 0));
    return [Math.floor(total[0] / 2), Math.floor(total[1] / 2), total[0] - Math.floor(total[0] / 2), total[1] - Math.floor(total[1] / 2)];
  }
  throw new Error(`${node.name}: unsupported padding ${padding}`);
}

/** Converts the artifacts of the NanoDet tfjs graph; throws on anything it does not support (see the file comment). */
export function nanoDetToOnnx(artifacts: TfjsGraphArtifacts): NanoDetOnnx {
  const tfNodes = (artifacts.modelTopology as { node?: TfNode[] } | undefined)?.node;
  if (!Array.isArray(tfNodes)) throw new Error('not a tfjs graph model (no modelTopology.node)');
  const weights = readWeights(artifacts.weightSpecs, artifacts.weightData);
  const byName = new Map(tfNodes.map((n) => [n.name, n]));
  const consts = new Map<string, Const>();
  const vals = new Map<string, Val>();
  const nodes: OnnxNode[] = [];
  const inits: OnnxInitializer[] = [];
  const inputs: OnnxValue[] = [];
  const outputs: OnnxValue[] = [];
  const transposed = new Map<string, string>();
  let transposes = 0;

  // Readers of each TF tensor, to know when a bias Add is a convolution's only reader.
  const readers = new Map<string, number>();
  for (const n of tfNodes) for (const i of n.input ?? []) readers.set(i.replace(/:0$/, ''), (readers.get(i.replace(/:0$/, '')) ?? 0) + 1);

  const constOf = (ref: string): Const | undefined => consts.get(ref.replace(/:0$/, ''));
  const needConst = (ref: string, node: TfNode): Const => {
    const c = constOf(ref);
    if (!c) throw new Error(`${node.name} (${node.op}): input ${ref} must be a constant`);
    return c;
  };
  const valOf = (ref: string, node: TfNode): Val => {
    const v = vals.get(ref.replace(/:0$/, ''));
    if (!v) throw new Error(`${node.name} (${node.op}): input ${ref} is not a tensor the converter produced`);
    return v;
  };
  const addInit = (name: string, dims: number[], data: Float32Array | BigInt64Array): string => {
    inits.push({ name, dims, data });
    return name;
  };
  const int64 = (values: readonly number[]) => BigInt64Array.from(values.map((v) => BigInt(v)));
  const tfShape = (v: Val) => v.perm.map((a) => v.t.shape[a]);

  /** The ONNX name of `t`, writing its Pad node first if it was still pending. */
  const written = (t: Tensor): string => {
    if (!t.written && t.pad) {
      const { src, pads, value } = t.pad;
      nodes.push({
        op: 'Pad',
        name: t.name,
        inputs: [src, addInit(`${t.name}/pads`, [pads.length], int64(pads)), addInit(`${t.name}/value`, [], Float32Array.of(value))],
        outputs: [t.name],
        attributes: { mode: { string: 'constant' } },
      });
      t.written = true;
    }
    return t.name;
  };
  /** An ONNX tensor holding `v` with TF axis i on axis `perm[i]`: `v`'s own, or a Transpose of it. */
  const inLayout = (v: Val, perm: number[], outName?: string): string => {
    const src = written(v.t);
    if (same(v.perm, perm) && !outName) return src;
    const inverse: number[] = [];
    perm.forEach((a, i) => {
      inverse[a] = i;
    });
    const p = inverse.map((i) => v.perm[i]);
    const key = `${src}|${p.join(',')}|${outName ?? ''}`;
    let name = transposed.get(key);
    if (!name) {
      name = outName ?? `${src}/perm_${p.join('')}`;
      if (same(p, identity(p.length))) nodes.push({ op: 'Identity', inputs: [src], outputs: [name] });
      else {
        nodes.push({ op: 'Transpose', inputs: [src], outputs: [name], attributes: { perm: { ints: p } } });
        transposes++;
      }
      transposed.set(key, name);
    }
    return name;
  };
  const fresh = (name: string, shape: number[], conv?: OnnxNode): Tensor => ({ name, shape, written: true, conv });
  /**
   * The NCHW input of a Conv/MaxPool reading NHWC `x`: a pending Pad of H and W with `value` is skipped and
   * returned as [top, left, bottom, right] for the op's own `pads`; otherwise `x` itself (transposed if need be).
   */
  const foldPad = (x: Val, value: number): { src: string; pads: number[] } => {
    const pad = x.t.pad;
    if (!x.t.written && pad && pad.value === value && same(x.perm, NHWC) && [0, 1, 4, 5].every((k) => pad.pads[k] === 0))
      return { src: pad.src, pads: [pad.pads[2], pad.pads[3], pad.pads[6], pad.pads[7]] };
    return { src: inLayout(x, NHWC), pads: [0, 0, 0, 0] };
  };
  /** [N, C, H, W] of NHWC `x`, less the padding folded away. */
  const nchwShape = (x: Val, folded: number[]): number[] => {
    const [n, h, w, c] = tfShape(x);
    return [n, c, h - folded[0] - folded[2], w - folded[1] - folded[3]];
  };

  // Dependency order (the JSON is not guaranteed to be in it).
  const order: TfNode[] = [];
  const seen = new Set<string>();
  const visit = (n: TfNode) => {
    if (seen.has(n.name)) return;
    seen.add(n.name);
    for (const i of n.input ?? []) {
      const dep = byName.get(splitRef(i.replace(/^\^/, ''))[0]);
      if (dep) visit(dep);
    }
    order.push(n);
  };
  tfNodes.forEach(visit);

  for (const node of order) {
    const ins = (node.input ?? []).filter((i) => !i.startsWith('^'));
    const set = (v: Val, ref = node.name) => vals.set(ref, v);

    if (node.op === 'Const') {
      const w = weights.get(node.name);
      if (!w) throw new Error(`constant ${node.name} has no weights`);
      consts.set(node.name, w);
      continue;
    }
    // Integer arithmetic on constants (the head's Reshape shapes): evaluated now.
    if (ins.length && ins.every((i) => constOf(i)) && (node.op === 'SparseToDense' || node.op === 'AddV2' || node.op === 'Add')) {
      consts.set(
        node.name,
        foldConst(
          node,
          ins.map((i) => constOf(i)!),
        ),
      );
      continue;
    }

    switch (node.op) {
      case 'Placeholder': {
        const shape = (node.attr?.shape?.shape?.dim ?? []).map((d) => Number(d.size));
        if (shape.length !== 4 || shape.some((d) => !(d > 0)))
          throw new Error(`input ${node.name}: expected a static 4-D shape, got [${shape}]`);
        if (inputs.length) throw new Error('more than one input');
        inputs.push({ name: node.name, shape });
        set({ t: fresh(node.name, shape), perm: identity(4) });
        break;
      }
      case 'Identity': {
        const v = valOf(ins[0], node);
        const shape = tfShape(v);
        inLayout(v, identity(shape.length), node.name);
        outputs.push({ name: node.name, shape });
        break;
      }
      case 'Transpose': {
        const v = valOf(ins[0], node);
        const q = Array.from(needConst(ins[1], node).data);
        set({ t: v.t, perm: q.map((i) => v.perm[i]) });
        break;
      }
      case 'Pad':
      case 'PadV2': {
        const v = valOf(ins[0], node);
        const p = Array.from(needConst(ins[1], node).data);
        const value = node.op === 'PadV2' ? needConst(ins[2], node).data[0] : 0;
        const rank = v.perm.length;
        if (p.length !== 2 * rank) throw new Error(`${node.name}: ${p.length / 2} padding pairs for a rank-${rank} tensor`);
        const pads = new Array<number>(2 * rank).fill(0);
        v.perm.forEach((a, i) => {
          pads[a] = p[2 * i];
          pads[rank + a] = p[2 * i + 1];
        });
        const shape = v.t.shape.map((d, a) => d + pads[a] + pads[rank + a]);
        set({ t: { name: node.name, shape, written: false, pad: { src: written(v.t), pads, value } }, perm: v.perm });
        break;
      }
      case 'Conv2D': {
        const x = valOf(ins[0], node);
        const filter = needConst(ins[1], node);
        if (b64text(node.attr?.data_format?.s) !== 'NHWC') throw new Error(`${node.name}: only NHWC convolutions are supported`);
        const [kh, kw, inC, outC] = filter.shape;
        const strides = ints(node.attr?.strides);
        const dilations = node.attr?.dilations ? ints(node.attr.dilations) : [1, 1, 1, 1];
        let pads = spatialPads(node, [tfShape(x)[1], tfShape(x)[2]], [kh, kw], [strides[1], strides[2]], [dilations[1], dilations[2]]);
        // A pending zero Pad of H and W only, read as NCHW by this convolution: its padding.
        const { src, pads: folded } = foldPad(x, 0);
        pads = pads.map((p, k) => p + folded[k]);
        const [n, c, h, w] = nchwShape(x, folded);
        if (c % inC) throw new Error(`${node.name}: ${c} input channels for a filter of ${inC}`);
        const weight = addInit(`${node.name}/weight`, [outC, inC, kh, kw], hwioToOihw(filter.data as Float32Array, kh * kw, inC, outC));
        const outH = Math.floor((h + pads[0] + pads[2] - ((kh - 1) * dilations[1] + 1)) / strides[1]) + 1;
        const outW = Math.floor((w + pads[1] + pads[3] - ((kw - 1) * dilations[2] + 1)) / strides[2]) + 1;
        const conv: OnnxNode = {
          op: 'Conv',
          name: node.name,
          inputs: [src, weight],
          outputs: [node.name],
          attributes: {
            kernel_shape: { ints: [kh, kw] },
            strides: { ints: [strides[1], strides[2]] },
            dilations: { ints: [dilations[1], dilations[2]] },
            pads: { ints: pads },
            group: { int: c / inC },
          },
        };
        nodes.push(conv);
        set({ t: fresh(node.name, [n, outC, outH, outW], conv), perm: NHWC });
        break;
      }
      case 'MaxPool': {
        const x = valOf(ins[0], node);
        if (b64text(node.attr?.data_format?.s) !== 'NHWC') throw new Error(`${node.name}: only NHWC pooling is supported`);
        const k = ints(node.attr?.ksize);
        const s = ints(node.attr?.strides);
        let pads = spatialPads(node, [tfShape(x)[1], tfShape(x)[2]], [k[1], k[2]], [s[1], s[2]], [1, 1]);
        // A pending -inf pad of H and W: max pooling ignores it, so it is the pooling's padding.
        const { src, pads: folded } = foldPad(x, Number.NEGATIVE_INFINITY);
        pads = pads.map((p, q) => p + folded[q]);
        const [n, c, h, w] = nchwShape(x, folded);
        nodes.push({
          op: 'MaxPool',
          name: node.name,
          inputs: [src],
          outputs: [node.name],
          attributes: { kernel_shape: { ints: [k[1], k[2]] }, strides: { ints: [s[1], s[2]] }, pads: { ints: pads } },
        });
        const outH = Math.floor((h + pads[0] + pads[2] - k[1]) / s[1]) + 1;
        const outW = Math.floor((w + pads[1] + pads[3] - k[2]) / s[2]) + 1;
        set({ t: fresh(node.name, [n, c, outH, outW]), perm: NHWC });
        break;
      }
      case 'Add':
      case 'AddV2':
      case 'BiasAdd': {
        const [ca, cb] = [constOf(ins[0]), constOf(ins[1])];
        if (!ca && !cb) {
          const a = valOf(ins[0], node);
          const b = valOf(ins[1], node);
          if (!same(tfShape(a), tfShape(b)))
            throw new Error(`${node.name}: broadcasting [${tfShape(a)}] + [${tfShape(b)}] is not supported`);
          nodes.push({ op: 'Add', name: node.name, inputs: [written(a.t), inLayout(b, a.perm)], outputs: [node.name] });
          set({ t: fresh(node.name, [...a.t.shape]), perm: a.perm });
          break;
        }
        const v = valOf(ca ? ins[1] : ins[0], node);
        const c = (ca ?? cb)!;
        if (!(c.data instanceof Float32Array)) throw new Error(`${node.name}: integer constant added to a tensor`);
        const rank = v.perm.length;
        const channels = c.shape.length === 1 ? c.shape[0] : -1;
        const from = ca ? ins[1] : ins[0];
        // The bias of the convolution producing it: the Conv's third input.
        if (v.t.conv && channels === v.t.shape[1] && v.perm[rank - 1] === 1 && (readers.get(from.replace(/:0$/, '')) ?? 0) === 1) {
          v.t.conv.inputs = [...v.t.conv.inputs, addInit(`${node.name}/bias`, [channels], c.data)];
          v.t.conv = undefined;
          set(v);
          break;
        }
        // Otherwise a broadcast Add: the constant (at most one axis longer than 1) laid out as the tensor is.
        const full = [...new Array<number>(Math.max(0, rank - c.shape.length)).fill(1), ...c.shape];
        if (full.filter((d) => d !== 1).length > 1 || full.length !== rank)
          throw new Error(`${node.name}: constant of shape [${c.shape}] not supported`);
        const dims = new Array<number>(rank).fill(1);
        v.perm.forEach((a, i) => {
          dims[a] = full[i];
        });
        const k = addInit(`${node.name}/const`, dims, c.data);
        nodes.push({ op: 'Add', name: node.name, inputs: [written(v.t), k], outputs: [node.name] });
        set({ t: fresh(node.name, [...v.t.shape]), perm: v.perm });
        break;
      }
      case 'LeakyRelu':
      case 'Relu':
      case 'Sigmoid': {
        const v = valOf(ins[0], node);
        const attributes = node.op === 'LeakyRelu' ? { alpha: { float: node.attr?.alpha?.f ?? 0.2 } } : undefined;
        nodes.push({ op: node.op, name: node.name, inputs: [written(v.t)], outputs: [node.name], ...(attributes ? { attributes } : {}) });
        set({ t: fresh(node.name, [...v.t.shape]), perm: v.perm });
        break;
      }
      case 'ConcatV2': {
        const parts = ins.slice(0, -1).map((i) => valOf(i, node));
        const axis = needConst(ins[ins.length - 1], node).data[0];
        const perm = parts[0].perm;
        const rank = perm.length;
        const a = perm[axis < 0 ? axis + rank : axis];
        const shape = [...parts[0].t.shape];
        shape[a] = parts.reduce((s, p) => s + tfShape(p)[axis < 0 ? axis + rank : axis], 0);
        nodes.push({
          op: 'Concat',
          name: node.name,
          inputs: parts.map((p) => inLayout(p, perm)),
          outputs: [node.name],
          attributes: { axis: { int: a } },
        });
        set({ t: fresh(node.name, shape), perm });
        break;
      }
      case 'SplitV': {
        const v = valOf(ins[0], node);
        const sizes = Array.from(needConst(ins[1], node).data);
        const rank = v.perm.length;
        const dim = needConst(ins[2], node).data[0];
        const axis = dim < 0 ? dim + rank : dim;
        const a = v.perm[axis];
        const known = sizes.filter((s) => s >= 0).reduce((x, y) => x + y, 0);
        const resolved = sizes.map((s) => (s < 0 ? v.t.shape[a] - known : s));
        const names = resolved.map((_, k) => `${node.name}:${k}`);
        nodes.push({
          op: 'Split',
          name: node.name,
          inputs: [written(v.t), addInit(`${node.name}/split`, [resolved.length], int64(resolved))],
          outputs: names,
          attributes: { axis: { int: a } },
        });
        resolved.forEach((s, k) => {
          const shape = [...v.t.shape];
          shape[a] = s;
          const val = { t: fresh(names[k], shape), perm: v.perm };
          set(val, names[k]);
          if (k === 0) set(val);
        });
        break;
      }
      case 'ResizeBilinear': {
        const x = valOf(ins[0], node);
        const size = Array.from(needConst(ins[1], node).data);
        const src = inLayout(x, NHWC);
        const [n, , , c] = tfShape(x);
        const mode = node.attr?.align_corners?.b ? 'align_corners' : node.attr?.half_pixel_centers?.b ? 'half_pixel' : 'asymmetric';
        const sizes = [n, c, size[0], size[1]];
        nodes.push({
          op: 'Resize',
          name: node.name,
          inputs: [src, '', '', addInit(`${node.name}/sizes`, [4], int64(sizes))],
          outputs: [node.name],
          attributes: { mode: { string: 'linear' }, coordinate_transformation_mode: { string: mode } },
        });
        set({ t: fresh(node.name, sizes), perm: NHWC });
        break;
      }
      case 'Reshape': {
        const v = valOf(ins[0], node);
        const target = Array.from(needConst(ins[1], node).data);
        const count = v.t.shape.reduce((x, y) => x * y, 1);
        if (target.some((d) => d === 0 || d < -1)) throw new Error(`${node.name}: Reshape to [${target}] is not supported`);
        const known = target.filter((d) => d > 0).reduce((x, y) => x * y, 1);
        const shape = target.map((d) => (d === -1 ? count / known : d));
        if (shape.reduce((x, y) => x * y, 1) !== count) throw new Error(`${node.name}: cannot reshape [${tfShape(v)}] to [${target}]`);
        const src = inLayout(v, identity(v.perm.length));
        nodes.push({
          op: 'Reshape',
          name: node.name,
          inputs: [src, addInit(`${node.name}/shape`, [shape.length], int64(shape))],
          outputs: [node.name],
        });
        set({ t: fresh(node.name, shape), perm: identity(shape.length) });
        break;
      }
      default:
        throw new Error(`the converter does not support ${node.op} (node ${node.name})`);
    }
  }
  if (inputs.length !== 1) throw new Error('the graph has no input');
  if (!outputs.length) throw new Error('the graph has no outputs (Identity nodes)');
  outputs.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));

  const bytes = encodeOnnxModel({
    irVersion: IR_VERSION,
    opset: OPSET,
    producer: 'lookout nanodet-onnx',
    graph: { name: 'nanodet', nodes, initializers: inits, inputs, outputs },
  });
  return { bytes, input: inputs[0], outputs, stats: { tfNodes: tfNodes.length, onnxNodes: nodes.length, transposes } };
}

/** A TF filter [kh, kw, in, out] as ONNX's [out, in, kh, kw]; `taps` = kh * kw. */
function hwioToOihw(src: Float32Array, taps: number, inC: number, outC: number): Float32Array {
  const out = new Float32Array(src.length);
  let k = 0;
  for (let t = 0; t < taps; t++)
    for (let i = 0; i < inC; i++) {
      const base = i * taps + t;
      for (let o = 0; o < outC; o++) out[o * inC * taps + base] = src[k++];
    }
  return out;
}

/** SparseToDense / integer Add on constants. */
function foldConst(node: TfNode, args: Const[]): Const {
  if (node.op === 'SparseToDense') {
    const [indices, shape, values, fill] = args;
    if (shape.data.length !== 1) throw new Error(`${node.name}: only 1-D SparseToDense is supported`);
    const out = new Int32Array(shape.data[0]).fill(fill.data[0]);
    for (let k = 0; k < indices.data.length; k++) out[indices.data[k]] = values.data.length === 1 ? values.data[0] : values.data[k];
    return { shape: [out.length], data: out };
  }
  const [a, b] = args;
  if (!(a.data instanceof Int32Array && b.data instanceof Int32Array)) throw new Error(`${node.name}: only integer constants are folded`);
  const n = Math.max(a.data.length, b.data.length);
  if ((a.data.length !== n && a.data.length !== 1) || (b.data.length !== n && b.data.length !== 1))
    throw new Error(`${node.name}: cannot add constants of ${a.data.length} and ${b.data.length} values`);
  const out = new Int32Array(n);
  for (let k = 0; k < n; k++) out[k] = a.data[a.data.length === 1 ? 0 : k] + b.data[b.data.length === 1 ? 0 : k];
  return { shape: a.data.length === n ? a.shape : b.shape, data: out };
}
