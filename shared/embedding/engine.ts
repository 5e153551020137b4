/**
 * The embedding recognizer's descriptor extractor, one implementation for Node and the browser.
 *
 * For each face box (from the Haar cascade or any detector): crop the box, run face-api's 68-point landmark
 * net on it, derive the aligned face box from the landmarks (face-align.ts), crop that, and run face-api's
 * face recognition net (dlib ResNet-34 port) for a 128-d descriptor. Same nets, same crops and same aligned
 * box as face-api's `withFaceLandmarks().withFaceDescriptor()`, so the descriptors match face-api's own.
 *
 * The host injects what differs between hosts:
 *   - `faceapi`: the face-api module, whose nets and `tf` (the tfjs instance face-api was built against)
 *     are used for everything, since tensors of another tfjs copy would not mix. In Node that is
 *     `@vladmandic/face-api/dist/face-api.node-wasm.js` with the WASM backend already set up by the host
 *     (server/engines/embedding-node.ts); in the browser `dist/face-api.esm.js` with the backend of choice.
 *   - `readModelFile(name)`: reads one file of the face-api model folder (manifest JSON or `.bin` shard):
 *     `fs.readFile(join(dir, name))` in Node, `fetch('/models/face-api/' + name)` in the browser.
 *
 *   const engine = createEmbeddingEngine({ faceapi, readModelFile });
 *   await engine.load();                                  // once; rejects with a readable reason
 *   const faces = await engine.describe(rgb, boxes);      // one FaceDescription per box, same order
 *
 * With `descriptor: 'faceres-1024'` the landmarks stay face-api's, and the descriptor comes from Human's
 * faceres net (faceres.ts) on a five-point similarity-aligned 224 px crop (five-point.ts) instead of face-api's
 * recognition net; `readDescriptorFile` reads faceres.json and its shard (the `public/models` folder).
 */
import type { GrayImage, Rect, RgbImage } from '../image/types.js';
import { DEFAULT_DESCRIPTOR_MODEL, DESCRIPTOR_MODELS, type DescriptorModelId } from './descriptor-models.js';
import { alignedFaceBox, clipBox, cropRgbFloat, LANDMARK_POINTS } from './face-align.js';
import { FACERES_INPUT_SIZE, type FaceresNet, type GraphTf, loadFaceresNet } from './faceres.js';
import { applySimilarity, fitSimilarity, fivePoints, referencePoints, type Similarity, warpSimilarity } from './five-point.js';
import { loadWeightMap, type ReadModelFile, type WeightSpec } from './weights.js';

/** Weight files (in the face-api model folder) the engine loads. */
export const LANDMARK_MODEL = 'face_landmark_68_model';
export const RECOGNITION_MODEL = 'face_recognition_model';

// Structural types of the few face-api / tfjs members used, so shared code needs neither package's types.
export interface TfTensorLike {
  readonly shape: number[];
  dispose(): void;
}
export interface FaceApiTf extends Partial<GraphTf> {
  tensor3d(values: Float32Array, shape: [number, number, number], dtype: 'float32'): TfTensorLike;
  io: { decodeWeights(data: ArrayBuffer, specs: WeightSpec[]): Record<string, TfTensorLike> };
}
interface LandmarksLike {
  readonly positions: ReadonlyArray<{ readonly x: number; readonly y: number }>;
}
interface FaceApiNet {
  loadFromWeightMap(weightMap: Record<string, TfTensorLike>): void;
  dispose(throwOnRedispose?: boolean): void;
}
export interface FaceLandmarkNetLike extends FaceApiNet {
  detectLandmarks(input: TfTensorLike[]): Promise<LandmarksLike | LandmarksLike[]>;
}
export interface FaceRecognitionNetLike extends FaceApiNet {
  computeFaceDescriptor(input: TfTensorLike[]): Promise<Float32Array | Float32Array[]>;
}
export interface FaceApiModule {
  tf: FaceApiTf;
  FaceLandmark68Net: new () => FaceLandmarkNetLike;
  FaceRecognitionNet: new () => FaceRecognitionNetLike;
  env?: { getEnv(): unknown; setEnv(env: never): void };
}

export interface EmbeddingEngineOptions {
  faceapi: FaceApiModule;
  readModelFile: ReadModelFile;
  /** The descriptor model (descriptor-models.ts); `faceapi-128` when absent. */
  descriptor?: DescriptorModelId;
  /** Reads faceres.json and its shard (`faceres-1024` only). */
  readDescriptorFile?: ReadModelFile;
  /**
   * `faceres-1024` only: average the descriptors of the crop and its mirror image (twice the net's time).
   * Off by default: it was measured not to be worth its cost (see bench/RESULTS.md).
   */
  flip?: boolean;
}

/**
 * The reference layout's zoom for faceres: the tight 112 px five-point layout scaled to 224 px, shrunk by this
 * about the centre, so the crop keeps some forehead and chin as in the net's training crops (measured).
 */
export const FACERES_ZOOM = 0.8;

/** What the engine found for one face box. All coordinates are pixels of the submitted image. */
export interface FaceDescription {
  /** The box as given. */
  box: Rect;
  /** 68 landmarks, interleaved x, y (136 values). */
  landmarks: Float64Array;
  /** The aligned box the descriptor was computed from, clipped to the image. */
  alignedBox: Rect;
  /** The descriptor (128-d for faceapi-128, unit-length 1024-d for faceres-1024). */
  descriptor: Float32Array;
}

export interface EmbeddingEngine {
  /** Loads both nets once (later calls share the first); rejects with the reason when weights are missing or bad. */
  load(): Promise<void>;
  readonly loaded: boolean;
  /** Descriptors for `boxes` in `image` (RGB preferred; gray is replicated to 3 channels). Loads on first use. */
  describe(image: GrayImage | RgbImage, boxes: readonly Rect[]): Promise<FaceDescription[]>;
  /** Frees the nets' tensors. */
  dispose(): void;
  /** The descriptor model this engine computes. */
  readonly descriptorModel: DescriptorModelId;
}

/**
 * face-api checks inputs against its environment's Image/Canvas/Video classes, and has no environment in a
 * Web Worker (neither "browser" nor Node). Tensor inputs need none of it: give it inert stand-ins.
 */
function ensureFaceApiEnv(faceapi: FaceApiModule): void {
  const env = faceapi.env;
  if (!env) return;
  try {
    env.getEnv();
    return;
  } catch {
    // no environment: fall through
  }
  class Inert {}
  const unsupported = () => {
    throw new Error('face-api media input is not supported here; pass tensors');
  };
  env.setEnv({
    Canvas: Inert,
    CanvasRenderingContext2D: Inert,
    Image: Inert,
    ImageData: Inert,
    Video: Inert,
    createCanvasElement: unsupported,
    createImageElement: unsupported,
    createVideoElement: unsupported,
    fetch: (...args: unknown[]) => (globalThis.fetch as (...a: unknown[]) => unknown)(...args),
    readFile: unsupported,
  } as never);
}

/** The unit-length mean direction of two unit vectors (flip averaging). */
function normalizeSum(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    out[i] = a[i] + b[i];
    sum += out[i] * out[i];
  }
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

/** The similarity that maps a face's 68 landmarks onto faceres' 224 px crop. */
export function faceresAlignment(landmarks: ArrayLike<number>): Similarity {
  return fitSimilarity(fivePoints(landmarks), referencePoints(FACERES_INPUT_SIZE, FACERES_ZOOM));
}

/** The image box (integer, unclipped) that the aligned crop of `m` covers. */
function cropBounds(m: Similarity, size: number): Rect {
  const [a, b, tx, ty] = m;
  const det = a * a + b * b;
  const inv: Similarity = [a / det, -b / det, -(a * tx + b * ty) / det, (b * tx - a * ty) / det];
  const corners = (
    [
      [0, 0],
      [size, 0],
      [0, size],
      [size, size],
    ] as const
  ).map((p) => applySimilarity(inv, p));
  const xs = corners.map((p) => p[0]);
  const ys = corners.map((p) => p[1]);
  const x = Math.floor(Math.min(...xs));
  const y = Math.floor(Math.min(...ys));
  return { x, y, width: Math.ceil(Math.max(...xs)) - x, height: Math.ceil(Math.max(...ys)) - y };
}

export function createEmbeddingEngine(options: EmbeddingEngineOptions): EmbeddingEngine {
  const { faceapi, readModelFile } = options;
  const descriptorModel = options.descriptor ?? DEFAULT_DESCRIPTOR_MODEL;
  const dim = DESCRIPTOR_MODELS[descriptorModel].dim;
  const flip = options.flip === true;
  const { tf } = faceapi;
  let landmarkNet: FaceLandmarkNetLike | null = null;
  let recognitionNet: FaceRecognitionNetLike | null = null;
  let faceresNet: FaceresNet | null = null;
  let loading: Promise<void> | null = null;

  async function loadFaceres(): Promise<FaceresNet> {
    const { tensor4d, loadGraphModel } = tf;
    if (!tensor4d || !loadGraphModel) throw new Error('faceres needs a tfjs with loadGraphModel and tensor4d');
    if (!options.readDescriptorFile) throw new Error('faceres: no reader for faceres.json was given');
    return loadFaceresNet({ tensor4d: tensor4d.bind(tf), loadGraphModel: loadGraphModel.bind(tf) }, options.readDescriptorFile);
  }

  async function loadNets(): Promise<void> {
    ensureFaceApiEnv(faceapi);
    const faceres = descriptorModel === 'faceres-1024';
    const [landmarkWeights, recognitionWeights, fres] = await Promise.all([
      loadWeightMap(tf, readModelFile, LANDMARK_MODEL),
      faceres ? Promise.resolve(null) : loadWeightMap(tf, readModelFile, RECOGNITION_MODEL),
      faceres ? loadFaceres() : Promise.resolve(null),
    ]);
    const lm = new faceapi.FaceLandmark68Net();
    const fr = recognitionWeights ? new faceapi.FaceRecognitionNet() : null;
    try {
      lm.loadFromWeightMap(landmarkWeights);
      if (fr && recognitionWeights) fr.loadFromWeightMap(recognitionWeights);
    } catch (err) {
      for (const t of [...Object.values(landmarkWeights), ...Object.values(recognitionWeights ?? {})]) t.dispose();
      fres?.dispose();
      throw new Error(`face-api weights do not fit the nets: ${(err as Error).message}`);
    }
    landmarkNet = lm;
    recognitionNet = fr;
    faceresNet = fres;
  }

  function load(): Promise<void> {
    if (!loading) {
      loading = loadNets().catch((err: unknown) => {
        loading = null; // a later call may retry (e.g. after the files were restored)
        throw err;
      });
    }
    return loading;
  }

  /** Runs `fn` on one float RGB tensor per crop and always disposes them. */
  async function withCrops<R>(image: GrayImage | RgbImage, rects: Rect[], fn: (t: TfTensorLike[]) => Promise<R>): Promise<R> {
    const tensors: TfTensorLike[] = [];
    try {
      for (const r of rects) {
        const crop = cropRgbFloat(image, r);
        tensors.push(tf.tensor3d(crop.data, [crop.height, crop.width, 3], 'float32'));
      }
      return await fn(tensors);
    } finally {
      for (const t of tensors) t.dispose();
    }
  }

  async function describe(image: GrayImage | RgbImage, boxes: readonly Rect[]): Promise<FaceDescription[]> {
    if (boxes.length === 0) return [];
    await load();
    const lmNet = landmarkNet!;
    const { width, height } = image;

    const faceRects = boxes.map((b) => clipBox(b, width, height));
    // Batches run all faces through each net in one call.
    const landmarkSets = await withCrops(image, faceRects, async (t) => asList(await lmNet.detectLandmarks(t)));
    const landmarks = landmarkSets.map((set, i) => {
      const pts = set.positions;
      if (pts.length !== LANDMARK_POINTS) throw new Error(`landmark net returned ${pts.length} points`);
      const out = new Float64Array(2 * LANDMARK_POINTS);
      const { x, y } = faceRects[i];
      for (let k = 0; k < LANDMARK_POINTS; k++) {
        out[2 * k] = pts[k].x + x;
        out[2 * k + 1] = pts[k].y + y;
      }
      return out;
    });
    let alignedRects: Rect[];
    let descriptors: Float32Array[];
    if (faceresNet) {
      const transforms = landmarks.map(faceresAlignment);
      alignedRects = transforms.map((m) => clipBox(cropBounds(m, FACERES_INPUT_SIZE), width, height));
      const crops = transforms.map((m) => warpSimilarity(image, m, FACERES_INPUT_SIZE));
      descriptors = await faceresNet.describe(crops);
      if (flip) {
        const mirrored = await faceresNet.describe(transforms.map((m) => warpSimilarity(image, m, FACERES_INPUT_SIZE, true)));
        descriptors = descriptors.map((d, i) => normalizeSum(d, mirrored[i]));
      }
    } else {
      const frNet = recognitionNet!;
      alignedRects = landmarks.map((lm, i) => {
        const aligned = clipBox(alignedFaceBox(lm, faceRects[i]), width, height);
        // Landmarks far outside the image (a box at the edge) leave nothing to crop: fall back to the box itself.
        return aligned.width > 0 && aligned.height > 0 ? aligned : faceRects[i];
      });
      descriptors = await withCrops(image, alignedRects, async (t) => asList(await frNet.computeFaceDescriptor(t)));
    }
    for (const d of descriptors) {
      if (d.length !== dim) throw new Error(`the ${descriptorModel} net returned ${d.length} values, expected ${dim}`);
    }
    return boxes.map((box, i) => ({
      box,
      landmarks: landmarks[i],
      alignedBox: alignedRects[i],
      descriptor: descriptors[i],
    }));
  }

  return {
    load,
    get loaded() {
      return landmarkNet !== null && (recognitionNet !== null || faceresNet !== null);
    },
    describe,
    dispose() {
      landmarkNet?.dispose(false);
      recognitionNet?.dispose(false);
      faceresNet?.dispose();
      landmarkNet = null;
      recognitionNet = null;
      faceresNet = null;
      loading = null;
    },
    descriptorModel,
  };
}
