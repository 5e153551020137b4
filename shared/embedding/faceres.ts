/**
 * Human's faceres descriptor net (HSE FaceRes; public/models/faceres.json + faceres.bin, a tfjs graph model) for
 * the `faceres-1024` descriptor model. Input: [n, 224, 224, 3]. Human feeds it RGB 0..255; the net was trained
 * (HSE_FaceRec_tf, Keras MobileNet) on Caffe-style input, BGR with the ImageNet channel means subtracted, and
 * its own inference code feeds that: so do we (on Human's face-match photos the equal error rate fell from 3.2%
 * to 1.2% with it, bench/descriptor-models.ts). Output used: `global_pooling/Mean`, 1024 values per face; the net's age and gender
 * heads are ignored. Descriptors are L2-normalised here, so euclidean distance between two of them is
 * sqrt(2 - 2 cos): the matcher needs no other metric.
 *
 * The host gives the tfjs instance its other tensors live in and a file reader (disk in Node, fetch in the
 * browser); the aligned crops come from five-point.ts, the same arithmetic in both hosts.
 */
import type { TfTensorLike } from './engine.js';
import type { ReadModelFile, WeightSpec } from './weights.js';

export const FACERES_MODEL_FILE = 'faceres.json';
export const FACERES_INPUT_SIZE = 224;
export const FACERES_DIM = 1024;
const DESCRIPTOR_OUTPUT = 'global_pooling/Mean';
/** ImageNet channel means in B, G, R order (Keras `preprocess_input`, mode 'caffe'). */
const MEAN_BGR = [103.939, 116.779, 123.68] as const;
/** Crops per forward pass: bounds the memory of a picture full of faces. */
const FACES_PER_PASS = 8;

export interface DataTensorLike extends TfTensorLike {
  data(): Promise<ArrayLike<number>>;
}

interface GraphModelLike {
  execute(inputs: TfTensorLike, outputs: string): TfTensorLike | TfTensorLike[];
  dispose(): void;
}

/** What a tfjs graph model needs to load from memory (tfjs `io.ModelArtifacts`, the members used). */
export interface GraphArtifacts {
  modelTopology: unknown;
  weightSpecs: WeightSpec[];
  weightData: ArrayBuffer;
  format?: string;
  generatedBy?: string;
  convertedBy?: string;
  signature?: unknown;
}

/** The members of tfjs the net uses; `faceapi.tf` has them in both hosts. */
export interface GraphTf {
  tensor4d(values: Float32Array, shape: [number, number, number, number], dtype: 'float32'): TfTensorLike;
  loadGraphModel(handler: { load(): Promise<GraphArtifacts> }): Promise<unknown>;
}

export interface FaceresNet {
  /** One unit-length 1024-d descriptor per crop (each crop 224 x 224 x 3 floats, RGB 0..255). */
  describe(crops: readonly Float32Array[]): Promise<Float32Array[]>;
  dispose(): void;
}

// Shard names come from a file we read: keep them to plain names so a manifest cannot reach outside its folder.
const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

function bytesOf(b: ArrayBuffer | Uint8Array): Uint8Array {
  return b instanceof Uint8Array ? b : new Uint8Array(b);
}

/** Reads faceres.json and its shards into tfjs model artifacts; errors name the file. */
export async function readFaceresArtifacts(readFile: ReadModelFile): Promise<GraphArtifacts> {
  const name = FACERES_MODEL_FILE;
  const text = new TextDecoder().decode(
    bytesOf(
      await readFile(name).catch((err: unknown) => {
        throw new Error(`faceres: cannot read ${name} (${err instanceof Error ? err.message : String(err)})`);
      }),
    ),
  );
  let json: {
    modelTopology?: unknown;
    weightsManifest?: { paths: string[]; weights: WeightSpec[] }[];
    format?: string;
    generatedBy?: string;
    convertedBy?: string | null;
    signature?: unknown;
  };
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`faceres: ${name} is not valid JSON (${(err as Error).message})`);
  }
  if (!json.modelTopology || !Array.isArray(json.weightsManifest)) throw new Error(`faceres: ${name} is not a tfjs graph model`);
  const paths = json.weightsManifest.flatMap((g) => g.paths);
  for (const p of paths) {
    if (typeof p !== 'string' || !PLAIN_NAME.test(p))
      throw new Error(`faceres: ${name} names shard ${JSON.stringify(p)}; only plain file names are allowed`);
  }
  const shards = await Promise.all(
    paths.map((p) =>
      readFile(p).then(bytesOf, (err: unknown) => {
        throw new Error(`faceres: cannot read ${p} (${err instanceof Error ? err.message : String(err)})`);
      }),
    ),
  );
  const total = shards.reduce((n, s) => n + s.byteLength, 0);
  const weightData = new Uint8Array(total);
  let offset = 0;
  for (const s of shards) {
    weightData.set(s, offset);
    offset += s.byteLength;
  }
  return {
    modelTopology: json.modelTopology,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: weightData.buffer,
    ...(json.format ? { format: json.format } : {}),
    ...(json.generatedBy ? { generatedBy: json.generatedBy } : {}),
    ...(json.convertedBy ? { convertedBy: json.convertedBy } : {}),
    ...(json.signature ? { signature: json.signature } : {}),
  };
}

/** Scales `v` to unit length in place (a zero vector stays zero). */
export function normalizeL2(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

export async function loadFaceresNet(tf: GraphTf, readFile: ReadModelFile): Promise<FaceresNet> {
  const artifacts = await readFaceresArtifacts(readFile);
  let model: GraphModelLike;
  try {
    model = (await tf.loadGraphModel({ load: async () => artifacts })) as GraphModelLike;
  } catch (err) {
    throw new Error(`faceres: the model does not load (${(err as Error).message})`);
  }
  const size = FACERES_INPUT_SIZE;
  const plane = size * size * 3;

  async function pass(crops: readonly Float32Array[]): Promise<Float32Array[]> {
    const input = new Float32Array(crops.length * plane);
    crops.forEach((c, i) => {
      if (c.length !== plane) throw new RangeError(`faceres: a crop has ${c.length} values, expected ${plane}`);
      // RGB 0..255 -> BGR less the means, the input the net was trained on.
      for (let k = 0, o = i * plane; k < plane; k += 3, o += 3) {
        input[o] = c[k + 2] - MEAN_BGR[0];
        input[o + 1] = c[k + 1] - MEAN_BGR[1];
        input[o + 2] = c[k] - MEAN_BGR[2];
      }
    });
    const x = tf.tensor4d(input, [crops.length, size, size, 3], 'float32');
    let out: TfTensorLike | TfTensorLike[] | null = null;
    try {
      out = model.execute(x, DESCRIPTOR_OUTPUT);
      const t = (Array.isArray(out) ? out[0] : out) as DataTensorLike;
      // Read asynchronously: a synchronous read breaks WebGPU in a worker (see client/src/engine/face-api.ts).
      const values = await t.data();
      if (values.length !== crops.length * FACERES_DIM) {
        throw new Error(`faceres returned ${values.length} values for ${crops.length} faces, expected ${FACERES_DIM} each`);
      }
      return crops.map((_, i) => Float32Array.from({ length: FACERES_DIM }, (_v, k) => values[i * FACERES_DIM + k]));
    } finally {
      x.dispose();
      if (out) for (const t of Array.isArray(out) ? out : [out]) t.dispose();
    }
  }

  return {
    async describe(crops) {
      const raw: Float32Array[] = [];
      for (let i = 0; i < crops.length; i += FACES_PER_PASS) raw.push(...(await pass(crops.slice(i, i + FACES_PER_PASS))));
      return raw.map(normalizeL2);
    },
    dispose() {
      model.dispose();
    },
  };
}
