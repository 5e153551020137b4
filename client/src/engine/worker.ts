/// <reference lib="webworker" />
/**
 * The in-browser engine: a module Web Worker running the same shared/ code as the server (Haar cascade, LBPH,
 * face-api descriptors, NanoDet / YOLO decoding) on frames the page sends. Requests run one at a time in
 * arrival order, so a model swap never interleaves with a recognition. Started by client.ts.
 */
import { CASCADE_DEFAULTS } from '../../../shared/recognition/pipeline';
import { EMPTY_FACE_NEGATIVES } from '../../../shared/recognition/corrections';
import { decodeCorrectionsFile } from '../../../shared/recognition/correction-file';
import { errorText as messageOf } from '../../../shared/recognition/worker-messages';
import { startBackend } from './backend';
import { FaceEngine, frameFromRgba, type Frame } from './faces';
import { readRgba } from './frame-reader';
import { FeatureCascadeLoader, facesWithFeatures } from './features';
import { detectPixels, loadNanoDet, loadYolo, type ObjectDetector } from './objects';
import { serveOps } from './ops-worker';
import type { BackendReport, CascadeOptions, EngineOps, FramePixels, InitOptions, InitResult, ModelUrls } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

let faces: FaceEngine | null = null;
let backend: BackendReport | null = null;
let urls: ModelUrls | null = null;
let detector: Promise<ObjectDetector> | null = null;
let featureCascades: FeatureCascadeLoader | null = null;
/** RGBA pixels of a frame and its grey image. */
function toFrame(pixels: FramePixels): Frame {
  const { data, width, height } = readRgba(pixels);
  return frameFromRgba(data, width, height);
}

function requireFaces(): FaceEngine {
  if (!faces) throw new Error('the engine is not initialised; call init() first');
  return faces;
}

function objectDetector(): Promise<ObjectDetector> {
  if (!urls) return Promise.reject(new Error('the engine is not initialised; call init() first'));
  const from = urls;
  // WASM here, answering at once; WebGPU warms up in the object pool's own lane and takes over (object-pool.ts).
  detector ??= (from.yolo ? loadYolo(from.yolo) : loadNanoDet(from.nanodet, 'wasm')).catch((err: unknown) => {
    detector = null; // a later call may retry
    throw new Error(`the object detector could not be loaded: ${messageOf(err)}`);
  });
  return detector;
}

async function init(options: InitOptions): Promise<InitResult> {
  const t0 = performance.now();
  const cascade: CascadeOptions = { ...CASCADE_DEFAULTS, ...options.cascade };
  urls = options.urls;
  detector = null;
  featureCascades = null;
  faces?.dispose();
  faces = null;
  const threads = options.cascadeThreads ?? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
  faces = await FaceEngine.create(
    { cascade: options.urls.cascade, eyeCascade: options.urls.features.eye, faceApi: options.urls.faceApi },
    cascade,
    threads,
  );
  // The features reuse the eye cascade the engine parsed for alignment: it is fetched once per worker.
  featureCascades = new FeatureCascadeLoader(options.urls.features, faces.eyeCascade);
  const t1 = performance.now();
  // One backend per worker: tfjs cannot move loaded weights between backends, so a second init keeps it.
  if (!backend) backend = (await startBackend(options.backend ?? 'auto')).report;
  const t2 = performance.now();
  const result: InitResult = {
    backend,
    cascade: { ...cascade, window: faces.cascadeWindow, threads: faces.cascadeThreads, scan: faces.cascadeScan },
    embedding: { loaded: false },
    objects: { loaded: false },
    timing: { totalMs: 0, cascadeMs: t1 - t0, backendMs: t2 - t1 },
  };
  if (options.preload?.embedding) {
    const s = performance.now();
    try {
      await faces.loadEmbedding();
      result.embedding = { loaded: true };
    } catch (err) {
      result.embedding = { loaded: false, error: messageOf(err) };
    }
    result.timing.embeddingMs = performance.now() - s;
  }
  if (options.preload?.objects) {
    const s = performance.now();
    try {
      const d = await objectDetector();
      result.objects = { loaded: true, detector: d.name };
    } catch (err) {
      result.objects = { loaded: false, error: messageOf(err) };
    }
    result.timing.objectsMs = performance.now() - s;
  }
  result.timing.totalMs = performance.now() - t0;
  return result;
}

const now = () => performance.now();

// One request at a time, in arrival order: a model swap never interleaves with a recognition.
serveOps<EngineOps>(
  self,
  {
    init,
    setModel({ corrections, ...models }) {
      const t0 = now();
      const engine = requireFaces();
      // Read before anything is installed: a bad corrections file changes nothing.
      const negatives =
        corrections === undefined ? undefined : corrections === null ? EMPTY_FACE_NEGATIVES : decodeCorrectionsFile(corrections).negatives;
      const [lbph, embedding] = engine.setModels(models);
      if (negatives) engine.setCorrections(negatives);
      return { lbph, embedding, corrections: engine.correctionCounts, timing: { totalMs: now() - t0 } };
    },
    async recognize({ frame: pixels, options }) {
      const t0 = now();
      const engine = requireFaces();
      const frame = toFrame(pixels);
      const t1 = now();
      const { detectMs, recognizeMs, ...response } = await engine.recognize(frame, options);
      if (!options.features || !featureCascades) {
        return { ...response, timing: { totalMs: now() - t0, convertMs: t1 - t0, detectMs, recognizeMs } };
      }
      const t2 = now();
      const faces = facesWithFeatures(await featureCascades.load(), frame.gray, response.faces);
      const featuresMs = now() - t2;
      return { ...response, faces, timing: { totalMs: now() - t0, convertMs: t1 - t0, detectMs, recognizeMs, featuresMs } };
    },
    // Loading on first use is not charged to the frame; no grey image is made for objects.
    detectObjects: async ({ frame: pixels, confidence }) => detectPixels(await objectDetector(), pixels, confidence),
    async train({ samples: raw }) {
      const t0 = now();
      const engine = requireFaces();
      const samples = raw.map((s) => ({ label: s.label, frame: toFrame(s.frame) }));
      const result = await engine.train(samples);
      const totalMs = now() - t0;
      return { ...result, timing: { totalMs, perSampleMs: samples.length ? totalMs / samples.length : 0 } };
    },
    async loadEmbedding() {
      try {
        await requireFaces().loadEmbedding();
        return { loaded: true };
      } catch (err) {
        return { loaded: false, error: messageOf(err) };
      }
    },
  },
  true,
);
