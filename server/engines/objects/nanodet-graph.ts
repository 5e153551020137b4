/**
 * Load-time rewrite of the NanoDet graph (public/models/nanodet.json, an ONNX -> TF -> tfjs conversion) for
 * the tfjs WASM backend. The shipped files stay as they are (their sha256 is in public/models/MODELS.md);
 * only the in-memory model artifacts change.
 *
 * Why: the ONNX export keeps activations NCHW, and TF's Conv2D/MaxPool/ResizeBilinear only run NHWC, so the
 * converter wrapped every one of them in Transpose pairs (83 in all), and left Pad, bias Add and LeakyRelu
 * as separate ops. Each of those is a full pass over a large activation, tfjs-wasm's LeakyRelu and Concat
 * slow ones: together about a third of a forward pass. The rewrite
 *  1. keeps every 4-D activation NHWC: a Transpose NCHW->NHWC of a tensor already held NHWC, and the
 *     NHWC->NCHW one after it, become no-ops; layout-agnostic ops between them (LeakyRelu, Sigmoid, Add of
 *     two activations, Pad/PadV2, ConcatV2, SplitV) get their paddings/axis constants permuted. Any other op
 *     reading such a tensor gets an explicit NHWC->NCHW Transpose (only the six small head outputs do);
 *  2. takes the input NHWC (the runner sees [1, size, size, 3] on the model's input and pre-processes so);
 *  3. folds a zero Pad feeding a VALID Conv2D into the convolution's explicit padding;
 *  4. fuses Conv2D + bias Add (+ LeakyRelu, written as an equal per-channel Prelu) into `_FusedConv2D`,
 *     which the WASM backend runs as one XNNPACK convolution with the bias, then an XNNPACK Prelu;
 *  5. turns channel Concats into Pad + AddV2 (see there).
 * All of it is exact up to float rounding order. Anything unexpected throws, and the caller keeps the
 * original graph.
 */

interface AttrValue {
  s?: string;
  i?: string | number;
  f?: number;
  b?: boolean;
  type?: string;
  list?: { s?: string[]; i?: (string | number)[]; f?: number[] };
  shape?: { dim?: { size: string | number }[] };
  tensor?: { dtype: string; tensorShape: { dim?: { size: string | number }[] } };
}
export interface GraphNode {
  name: string;
  op: string;
  input?: string[];
  device?: string;
  attr?: Record<string, AttrValue>;
}
export interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; min?: number; scale?: number; original_dtype?: string };
}
export interface GraphArtifacts {
  modelTopology: unknown;
  weightSpecs: WeightSpec[];
  weightData: ArrayBuffer;
  signature?: unknown;
  [key: string]: unknown;
}
export interface GraphRewriteStats {
  transposesBefore: number;
  transposesAfter: number;
  fusedConvs: number;
  foldedPads: number;
  concatsAsPad: number;
  nodesBefore: number;
  nodesAfter: number;
}

const TO_NHWC = [0, 2, 3, 1];
const TO_NCHW = [0, 3, 1, 2];
/** NCHW axis -> the same axis in NHWC. */
const AXIS_NHWC = [0, 3, 1, 2];
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));
const same = (a: readonly number[] | undefined, b: readonly number[]) => !!a && a.length === b.length && a.every((v, i) => v === b[i]);
/** Tensor name -> producing node name (`node:1` is output 1 of `node`). */
const nodeOf = (tensor: string) => tensor.replace(/^\^/, '').replace(/:\d+$/, '');

function bytesPer(spec: WeightSpec): number {
  const d = spec.quantization?.dtype ?? spec.dtype;
  if (d === 'uint8' || d === 'int8' || d === 'bool') return 1;
  if (d === 'uint16' || d === 'int16' || d === 'float16') return 2;
  if (d === 'float32' || d === 'int32') return 4;
  throw new Error(`unsupported weight dtype ${d}`);
}

/**
 * Rewrites the NanoDet graph as described in the file comment. Returns new artifacts (the input ones are
 * not modified) and counts for logging/tests.
 */
/** Steps 3 and 4 can be turned off (all on by default), to compare their effect. */
export interface GraphRewriteOptions {
  foldPads?: boolean;
  fuseConvs?: boolean;
  fuseActivation?: boolean;
  concatAsPad?: boolean;
}

export function optimizeNanoDetGraph(
  artifacts: GraphArtifacts,
  options: GraphRewriteOptions = {},
): { artifacts: GraphArtifacts; stats: GraphRewriteStats } {
  const topology = artifacts.modelTopology as { node: GraphNode[]; [k: string]: unknown };
  const original: GraphNode[] = topology.node;

  // Int32 constants by name (paddings, axes, perms), read from the weight buffer.
  const ints = new Map<string, Int32Array>();
  let offset = 0;
  for (const spec of artifacts.weightSpecs) {
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const size = count * bytesPer(spec);
    if (spec.dtype === 'int32' && !spec.quantization)
      ints.set(spec.name, new Int32Array(artifacts.weightData.slice(offset, offset + size)));
    offset += size;
  }
  const constInts = (tensor: string | undefined) => (tensor === undefined ? undefined : ints.get(nodeOf(tensor)));

  const byName = new Map(original.map((n) => [n.name, n]));
  const out: GraphNode[] = [];
  const newWeights: { spec: WeightSpec; data: Int32Array | Float32Array }[] = [];
  let counter = 0;
  const addConst = (base: string, values: number[], shape: number[]): string => {
    const name = `${base}/nhwc_${counter++}`;
    const dim = shape.map((s) => ({ size: String(s) }));
    out.push({
      name,
      op: 'Const',
      attr: { dtype: { type: 'DT_INT32' }, value: { tensor: { dtype: 'DT_INT32', tensorShape: shape.length ? { dim } : {} } } },
    });
    const data = Int32Array.from(values);
    newWeights.push({ spec: { name, shape, dtype: 'int32' }, data });
    ints.set(name, data);
    return name;
  };
  const addFloatConst = (base: string, values: Float32Array, shape: number[]): string => {
    const name = `${base}/${counter++}`;
    const dim = shape.map((s) => ({ size: String(s) }));
    out.push({ name, op: 'Const', attr: { dtype: { type: 'DT_FLOAT' }, value: { tensor: { dtype: 'DT_FLOAT', tensorShape: { dim } } } } });
    newWeights.push({ spec: { name, shape, dtype: 'float32' }, data: values });
    return name;
  };

  // Layout pass. `alias`: original tensor name -> tensor name in the new graph. `nhwc`: original tensor names
  // (NCHW there) whose new tensor holds them NHWC. Keyed by original names: after a no-op Transpose one new
  // tensor stands for both the NHWC original and its NCHW transpose.
  const alias = new Map<string, string>();
  const nhwc = new Set<string>();
  const nchwCopy = new Map<string, string>();
  let toNchwPerm: string | undefined;
  const resolve = (t: string) => alias.get(t) ?? t;
  /** A new-graph tensor holding `orig` NCHW, adding a Transpose when it is held NHWC. */
  const asNchw = (orig: string): string => {
    const t = resolve(orig);
    if (!nhwc.has(orig)) return t;
    let copy = nchwCopy.get(t);
    if (!copy) {
      if (!toNchwPerm) throw new Error('no NHWC->NCHW perm constant to reuse');
      copy = `${nodeOf(t)}/to_nchw${t.includes(':') ? `_${t.split(':')[1]}` : ''}`;
      out.push({ name: copy, op: 'Transpose', input: [t, toNchwPerm], attr: { T: { type: 'DT_FLOAT' }, Tperm: { type: 'DT_INT32' } } });
      nchwCopy.set(t, copy);
    }
    return copy;
  };

  // Process in dependency order (the JSON is not guaranteed to be).
  const done = new Set<string>();
  const order: GraphNode[] = [];
  const visit = (n: GraphNode) => {
    if (done.has(n.name)) return;
    done.add(n.name);
    for (const i of n.input ?? []) {
      const dep = byName.get(nodeOf(i));
      if (dep) visit(dep);
    }
    order.push(n);
  };
  original.forEach(visit);

  const perm4 = (t: string | undefined) => {
    const p = constInts(t);
    return p ? Array.from(p) : undefined;
  };
  for (const n of original) if (n.op === 'Transpose' && same(perm4(n.input?.[1]), TO_NCHW)) toNchwPerm ??= n.input![1];

  let inputName = '';
  for (const n of order) {
    const orig = n.input ?? [];
    const ins = orig.map(resolve);
    const isConst = (t: string) => byName.get(nodeOf(t))?.op === 'Const';
    const data = orig.filter((t) => !isConst(t));
    const flagged = data.filter((t) => nhwc.has(t));
    const emit = (node: GraphNode) => out.push(node);
    const keepNchw = () => emit({ ...n, input: orig.map(asNchw) });
    switch (n.op) {
      case 'Const':
        emit(n);
        break;
      case 'Placeholder': {
        // 2. The input arrives NHWC.
        const dims = n.attr?.shape?.shape?.dim?.map((d) => Number(d.size));
        if (dims?.length !== 4 || inputName) throw new Error('expected one 4-D input');
        inputName = n.name;
        const [b, c, h, w] = dims;
        emit({ ...n, attr: { ...n.attr, shape: { shape: { dim: [b, h, w, c].map((s) => ({ size: String(s) })) } } } });
        nhwc.add(n.name);
        break;
      }
      case 'Transpose': {
        const perm = perm4(orig[1]);
        if (same(perm, TO_NHWC) && nhwc.has(orig[0]))
          alias.set(n.name, ins[0]); // already held NHWC
        else if (same(perm, TO_NCHW) && !nhwc.has(orig[0])) {
          alias.set(n.name, ins[0]); // keep it NHWC
          nhwc.add(n.name);
        } else keepNchw();
        break;
      }
      case 'LeakyRelu':
      case 'Sigmoid':
        emit({ ...n, input: ins });
        if (flagged.length) nhwc.add(n.name);
        break;
      case 'Add':
      case 'AddV2':
        if (data.length === 2 && flagged.length === 2) {
          emit({ ...n, input: ins });
          nhwc.add(n.name);
        } else keepNchw();
        break;
      case 'Pad':
      case 'PadV2': {
        const p = constInts(orig[1]);
        if (nhwc.has(orig[0]) && p?.length === 8 && orig.slice(1).every(isConst)) {
          const pairs = [0, 1, 2, 3].map((a) => [p[2 * a], p[2 * a + 1]]);
          const permuted = TO_NHWC.flatMap((a) => pairs[a]);
          emit({ ...n, input: [ins[0], addConst(n.name, permuted, [4, 2]), ...ins.slice(2)] });
          nhwc.add(n.name);
        } else keepNchw();
        break;
      }
      case 'ConcatV2': {
        const axis = constInts(orig[orig.length - 1]);
        const parts = orig.slice(0, -1);
        if (axis?.length === 1 && parts.every((t) => nhwc.has(t))) {
          const a = axis[0] < 0 ? axis[0] + 4 : axis[0];
          emit({ ...n, input: [...ins.slice(0, -1), addConst(n.name, [AXIS_NHWC[a]], [])] });
          nhwc.add(n.name);
        } else keepNchw();
        break;
      }
      case 'SplitV': {
        const dim = constInts(orig[2]);
        if (dim?.length === 1 && nhwc.has(orig[0]) && isConst(orig[1])) {
          const a = dim[0] < 0 ? dim[0] + 4 : dim[0];
          emit({ ...n, input: [ins[0], ins[1], addConst(n.name, [AXIS_NHWC[a]], [])] });
          const num = Number(n.attr?.num_split?.i ?? 0);
          nhwc.add(n.name);
          for (let k = 0; k < num; k++) nhwc.add(`${n.name}:${k}`);
        } else keepNchw();
        break;
      }
      default:
        keepNchw();
    }
  }
  if (!inputName) throw new Error('no input');

  // Fusion passes over the NHWC graph.
  const consumers = () => {
    const m = new Map<string, GraphNode[]>();
    for (const n of out) for (const i of n.input ?? []) m.set(nodeOf(i), [...(m.get(nodeOf(i)) ?? []), n]);
    return m;
  };
  const outputs = new Set(out.filter((n) => n.op === 'Identity').map((n) => n.name));
  const removed = new Set<string>();
  let foldedPads = 0;
  let fusedConvs = 0;
  /** Output channels of the fused convolutions, by node name. */
  const convChannels = new Map<string, number>();
  let users = consumers();
  const only = (name: string) => (outputs.has(name) ? undefined : users.get(name)?.length === 1 ? users.get(name)![0] : undefined);

  // 3. Pad (zeros) -> VALID Conv2D: explicit padding instead.
  for (const pad of out) {
    if (pad.op !== 'Pad' || options.foldPads === false) continue;
    const conv = only(pad.name);
    const p = constInts(pad.input![1]);
    if (conv?.op !== 'Conv2D' || conv.input![0] !== pad.name || !p || unb64(conv.attr?.padding?.s) !== 'VALID') continue;
    if (p[0] || p[1] || p[6] || p[7]) continue; // pads batch or channels
    conv.input = [pad.input![0], conv.input![1]];
    conv.attr = { ...conv.attr, padding: { s: b64('EXPLICIT') }, explicit_paddings: { list: { i: Array.from(p, String) } } };
    removed.add(pad.name);
    foldedPads++;
  }
  users = consumers();

  // 4. Conv2D -> Add(bias const) [-> LeakyRelu] as one _FusedConv2D, named after the last op it replaces.
  for (const conv of out) {
    if (conv.op !== 'Conv2D' || removed.has(conv.name) || options.fuseConvs === false) continue;
    const add = only(conv.name);
    const bias = add?.input?.find((t) => t !== conv.name);
    const biasNode = bias ? byName.get(nodeOf(bias)) : undefined;
    if (!add || (add.op !== 'Add' && add.op !== 'AddV2' && add.op !== 'BiasAdd') || add.input?.length !== 2 || biasNode?.op !== 'Const')
      continue;
    const biasSpec = artifacts.weightSpecs.find((s) => s.name === biasNode.name);
    if (biasSpec?.shape.length !== 1) continue;
    const act = only(add.name);
    const fuseAct = act?.op === 'LeakyRelu' && act.input?.length === 1 && options.fuseActivation !== false;
    // LeakyRelu as Prelu with the same alpha for every channel: same values (x < 0 ? alpha * x : x), but
    // tfjs-wasm 4.22 runs a fused LeakyRelu as a slow scalar pass after the convolution (7 ms on the first
    // layer's output alone), a fused Prelu with per-channel weights as an XNNPACK operator (0.2 ms).
    const fusedOps = ['BiasAdd', ...(fuseAct ? ['Prelu'] : [])];
    const args = [bias!];
    if (fuseAct) {
      const alpha = act.attr?.alpha?.f ?? 0.2; // TF's default
      args.push(addFloatConst(`${act.name}/alpha`, new Float32Array(biasSpec.shape[0]).fill(alpha), [biasSpec.shape[0]]));
    }
    const last = fuseAct ? act : add;
    const attr: Record<string, AttrValue> = {
      ...conv.attr,
      num_args: { i: String(args.length) },
      fused_ops: { list: { s: fusedOps.map(b64) } },
    };
    const filterSpec = artifacts.weightSpecs.find((s) => s.name === nodeOf(conv.input![1]));
    if (filterSpec?.shape.length === 4) convChannels.set(last.name, filterSpec.shape[3]);
    // Reuse the last node's name so its consumers need no change.
    Object.assign(last, { op: '_FusedConv2D', input: [conv.input![0], conv.input![1], ...args], attr });
    removed.add(conv.name);
    if (fuseAct) removed.add(add.name);
    fusedConvs++;
  }

  // 5. Channel Concat of two convolution outputs as Pad + Pad + AddV2 (x + 0 is x): tfjs-wasm's Concat is a
  // JS loop of one typed-array copy per pixel and input, 3x slower here than its C++ Pad and Add.
  let concats = 0;
  for (const cat of out.filter((n) => n.op === 'ConcatV2' && n.input?.length === 3 && !removed.has(n.name))) {
    if (options.concatAsPad === false) break;
    const axis = constInts(cat.input![2]);
    const ch = cat.input!.slice(0, 2).map((t) => convChannels.get(t));
    if (axis?.length !== 1 || axis[0] !== 3 || ch[0] === undefined || ch[1] === undefined) continue;
    const [a, b] = cat.input!;
    const padA = {
      name: `${cat.name}/pad_a`,
      op: 'Pad',
      input: [a, addConst(cat.name, [0, 0, 0, 0, 0, 0, 0, ch[1]], [4, 2])],
      attr: { T: { type: 'DT_FLOAT' }, Tpaddings: { type: 'DT_INT32' } },
    };
    const padB = {
      name: `${cat.name}/pad_b`,
      op: 'Pad',
      input: [b, addConst(cat.name, [0, 0, 0, 0, 0, 0, ch[0], 0], [4, 2])],
      attr: { T: { type: 'DT_FLOAT' }, Tpaddings: { type: 'DT_INT32' } },
    };
    out.push(padA, padB);
    Object.assign(cat, { op: 'AddV2', input: [padA.name, padB.name], attr: { T: { type: 'DT_FLOAT' } } });
    concats++;
  }
  const node = out.filter((n) => !removed.has(n.name));

  // New constants go after the original weights.
  const extra = newWeights.reduce((s, w) => s + w.data.byteLength, 0);
  const weightData = new Uint8Array(artifacts.weightData.byteLength + extra);
  weightData.set(new Uint8Array(artifacts.weightData), 0);
  let at = artifacts.weightData.byteLength;
  for (const w of newWeights) {
    weightData.set(new Uint8Array(w.data.buffer, w.data.byteOffset, w.data.byteLength), at);
    at += w.data.byteLength;
  }

  // The signature describes the input too.
  let signature = artifacts.signature;
  const sig = signature as { inputs?: Record<string, { tensorShape?: { dim?: { size: string }[] } }> } | undefined;
  if (sig?.inputs) {
    const inputs = Object.fromEntries(
      Object.entries(sig.inputs).map(([k, v]) => {
        const dim = v.tensorShape?.dim;
        return [k, dim?.length === 4 ? { ...v, tensorShape: { ...v.tensorShape, dim: [dim[0], dim[2], dim[3], dim[1]] } } : v];
      }),
    );
    signature = { ...sig, inputs };
  }

  const count = (nodes: GraphNode[], op: string) => nodes.filter((n) => n.op === op).length;
  return {
    artifacts: {
      ...artifacts,
      modelTopology: { ...topology, node },
      weightSpecs: [...artifacts.weightSpecs, ...newWeights.map((w) => w.spec)],
      weightData: weightData.buffer,
      signature,
    },
    stats: {
      transposesBefore: count(original, 'Transpose'),
      transposesAfter: count(node, 'Transpose'),
      fusedConvs,
      foldedPads,
      concatsAsPad: concats,
      nodesBefore: original.length,
      nodesAfter: node.length,
    },
  };
}
