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
 */
import type { GrayImage, Rect, RgbImage } from '../image/types.js';
import { alignedFaceBox, clipBox, cropRgbFloat, LANDMARK_POINTS } from './face-align.js';
import { DESCRIPTOR_SIZE } from './matcher.js';
import { loadWeightMap, type ReadModelFile, type WeightSpec } from './weights.js';

/** Weight files (in the face-api model folder) the engine loads. */
export const LANDMARK_MODEL = 'face_landmark_68_model';
export const RECOGNITION_MODEL = 'face_recognition_model';

// Structural types of the few face-api / tfjs members used, so shared code needs neither package's types.
export interface TfTensorLike {
  readonly shape: number[];
  dispose(): void;
}
export interface FaceApiTf {
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
}

/** What the engine found for one face box. All coordinates are pixels of the submitted image. */
export interface FaceDescription {
  /** The box as given. */
  box: Rect;
  /** 68 landmarks, interleaved x, y (136 values). */
  landmarks: Float64Array;
  /** The aligned box the descriptor was computed from, clipped to the image. */
  alignedBox: Rect;
  /** The 128-d descriptor. */
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

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

export function createEmbeddingEngine(options: EmbeddingEngineOptions): EmbeddingEngine {
  const { faceapi, readModelFile } = options;
  const { tf } = faceapi;
  let landmarkNet: FaceLandmarkNetLike | null = null;
  let recognitionNet: FaceRecognitionNetLike | null = null;
  let loading: Promise<void> | null = null;

  async function loadNets(): Promise<void> {
    ensureFaceApiEnv(faceapi);
    const [landmarkWeights, recognitionWeights] = await Promise.all([
      loadWeightMap(tf, readModelFile, LANDMARK_MODEL),
      loadWeightMap(tf, readModelFile, RECOGNITION_MODEL),
    ]);
    const lm = new faceapi.FaceLandmark68Net();
    const fr = new faceapi.FaceRecognitionNet();
    try {
      lm.loadFromWeightMap(landmarkWeights);
      fr.loadFromWeightMap(recognitionWeights);
    } catch (err) {
      for (const t of [...Object.values(landmarkWeights), ...Object.values(recognitionWeights)]) t.dispose();
      throw new Error(`face-api weights do not fit the nets: ${(err as Error).message}`);
    }
    landmarkNet = lm;
    recognitionNet = fr;
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
    const frNet = recognitionNet!;
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
    const alignedRects = landmarks.map((lm, i) => {
      const aligned = clipBox(alignedFaceBox(lm, faceRects[i]), width, height);
      // Landmarks far outside the image (a box at the edge) leave nothing to crop: fall back to the box itself.
      return aligned.width > 0 && aligned.height > 0 ? aligned : faceRects[i];
    });
    const descriptors = await withCrops(image, alignedRects, async (t) => asList(await frNet.computeFaceDescriptor(t)));
    for (const d of descriptors) {
      if (d.length !== DESCRIPTOR_SIZE) throw new Error(`recognition net returned ${d.length} values, expected ${DESCRIPTOR_SIZE}`);
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
      return landmarkNet !== null && recognitionNet !== null;
    },
    describe,
    dispose() {
      landmarkNet?.dispose(false);
      recognitionNet?.dispose(false);
      landmarkNet = null;
      recognitionNet = null;
      loading = null;
    },
  };
}
