/// <reference lib="webworker" />
/**
 * The in-browser engine: a module Web Worker running the same shared/ code as the server (Haar cascade, LBPH,
 * face-api descriptors, NanoDet / YOLO decoding) on frames the page sends. Requests run one at a time in
 * arrival order, so a model swap never interleaves with a recognition. Started by client.ts.
 */
import { summarize } from '../../../shared/objects/types';
import { CASCADE_DEFAULTS } from '../../../shared/recognition/pipeline';
import { errorText as messageOf } from '../../../shared/recognition/worker-messages';
import { startBackend } from './backend';
import { FaceEngine, frameFromRgba, type Frame } from './faces';
import { FeatureCascadeLoader, facesWithFeatures } from './features';
import { loadNanoDet, loadYolo, type ObjectDetector } from './objects';
import { serveOps } from './ops-worker';
import type { BackendReport, CascadeOptions, EngineOps, FramePixels, InitOptions, InitResult, ModelUrls } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

let faces: FaceEngine | null = null;
let backend: BackendReport | null = null;
let urls: ModelUrls | null = null;
let detector: Promise<ObjectDetector> | null = null;
let featureCascades: FeatureCascadeLoader | null = null;
let scratch: OffscreenCanvasRenderingContext2D | null = null;

/** RGBA pixels of a frame; an ImageBitmap is read through a reused 2D canvas and closed. */
function toFrame(pixels: FramePixels): Frame {
  if (pixels.kind === 'rgba') {
    const { data, width, height } = pixels;
    return frameFromRgba(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height);
  }
  const { bitmap } = pixels;
  const { width, height } = bitmap;
  if (!scratch || scratch.canvas.width !== width || scratch.canvas.height !== height) {
    scratch = new OffscreenCanvas(width, height).getContext('2d', { willReadFrequently: true });
    if (!scratch) throw new Error('this browser cannot read pixels in a worker (no OffscreenCanvas 2D context)');
  }
  scratch.drawImage(bitmap, 0, 0);
  bitmap.close();
  const img = scratch.getImageData(0, 0, width, height);
  return frameFromRgba(new Uint8Array(img.data.buffer), width, height);
}

function requireFaces(): FaceEngine {
  if (!faces) throw new Error('the engine is not initialised; call init() first');
  return faces;
}

function objectDetector(): Promise<ObjectDetector> {
  if (!urls) return Promise.reject(new Error('the engine is not initialised; call init() first'));
  const from = urls;
  detector ??= (from.yolo ? loadYolo(from.yolo) : loadNanoDet(from.nanodet, backend?.backend)).catch((err: unknown) => {
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
  featureCascades = new FeatureCascadeLoader(options.urls.features);
  faces?.dispose();
  faces = null;
  const threads = options.cascadeThreads ?? Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));
  faces = await FaceEngine.create(
    { cascade: options.urls.cascade, eyeCascade: options.urls.features.eye, faceApi: options.urls.faceApi },
    cascade,
    threads,
  );
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
    setModel(models) {
      const t0 = now();
      const [lbph, embedding] = requireFaces().setModels(models);
      return { lbph, embedding, timing: { totalMs: now() - t0 } };
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
    async detectObjects({ frame: pixels, confidence }) {
      const d = await objectDetector();
      const t1 = now();
      const frame = toFrame(pixels);
      const t2 = now();
      const { objects, timings } = await d.detect(frame.rgb, confidence);
      return {
        objects,
        count: objects.length,
        summary: summarize(objects),
        detector: d.name,
        runtime: d.runtime,
        // Loading on first use is not charged to the frame.
        timing: { totalMs: now() - t1, convertMs: t2 - t1, ...timings },
      };
    },
    async train({ samples: raw }) {
      const t0 = now();
      const engine = requireFaces();
      const samples = raw.map((s) => ({ label: s.label, frame: toFrame(s.frame) }));
      const result = await engine.train(samples);
      const totalMs = now() - t0;
      return { ...result, timing: { totalMs, perSampleMs: samples.length ? totalMs / samples.length : 0 } };
    },
  },
  true,
);
