/**
 * The engine worker's operations (worker.ts), called from the page by client.ts: one map type, so
 * `run('recognize', args)` is typed with recognize's result. Pixels travel as transferred ArrayBuffers or
 * ImageBitmaps (no copy); every result carries the time the worker spent on it.
 */
import type { WireRules } from '../../../shared/recognition/rule-wire';
import type { FaceResult, ObjectDetectionResponse, RecognitionModel, RecognizeResponse } from '../../../shared/api/index';
import type { CascadeParams } from '../../../shared/recognition/pipeline';
import type { LbphHeader } from '../../../shared/recognition/compact-model';
import type { ChatFacialFeatures } from '../../../shared/vision/facial-features';
import type { FeatureCascadeUrls } from './features';

export type TfBackend = 'webgpu' | 'webgl' | 'wasm';
export type BackendChoice = TfBackend | 'auto';

/** The cascade's parameters; CASCADE_DEFAULTS (the server's defaults too) where not given. */
export type CascadeOptions = CascadeParams;

export interface InitOptions {
  /**
   * tfjs backend for the embedding recognizer; `auto` (default): WebGPU, else WebGL, else WASM. NanoDet runs on
   * onnxruntime-web, with WebGPU when this picks it, else WASM.
   */
  backend?: BackendChoice;
  cascade?: Partial<CascadeOptions>;
  /** Threads sharing each cascade run, this worker included (default: the cores, up to 4; 1: no helpers). */
  cascadeThreads?: number;
  /** Absolute URLs of the model files (the client fills them from the page's origin). */
  urls: ModelUrls;
  /** Load these now rather than on first use (so timings of the first frame are not load times). */
  preload?: { embedding?: boolean; objects?: boolean };
}

export interface ModelUrls {
  cascade: string;
  /** Folder of the face-api weights, ending in `/`. */
  faceApi: string;
  nanodet: string;
  /** A YOLOv5/v8 ONNX export; when set, object detection runs it (onnxruntime-web) instead of NanoDet. */
  yolo?: string;
  /** The eye, eyeglasses and smile cascades (`recognize` with `features`), fetched on first use. */
  features: FeatureCascadeUrls;
}

export interface BackendAttempt {
  backend: TfBackend;
  ok: boolean;
  /** Why it was not used, in words (absent when it is the one running). */
  reason?: string;
}

export interface BackendReport {
  requested: BackendChoice;
  /** The backend tfjs runs on. */
  backend: TfBackend;
  /** Every backend tried, in order, with why the others were skipped. */
  attempts: BackendAttempt[];
  crossOriginIsolated: boolean;
  /** For the WASM backend: SIMD, threads and the XNNPACK thread count. */
  wasm?: { simd: boolean; threads: boolean; threadsCount: number };
}

export interface InitResult {
  backend: BackendReport;
  /** `scan`: how this browser scans windows, WebAssembly with SIMD (`simd`), without (`wasm`), or JavaScript (`js`). */
  cascade: CascadeOptions & { window: string; threads: number; scan: 'simd' | 'wasm' | 'js' };
  /** What was preloaded, with errors in words. */
  embedding: { loaded: boolean; error?: string };
  objects: { loaded: boolean; detector?: string; error?: string };
  timing: { totalMs: number; cascadeMs: number; backendMs: number; embeddingMs?: number; objectsMs?: number };
}

/** Pixels as the worker takes them: RGBA bytes (e.g. ImageData's) or an ImageBitmap (a camera frame). */
export type FramePixels =
  | { kind: 'rgba'; width: number; height: number; data: Uint8Array | Uint8ClampedArray }
  | { kind: 'bitmap'; bitmap: ImageBitmap };

export interface ModelTexts {
  /** training.yml (OpenCV LBPH YAML with labelsInfo); null clears the LBPH model. */
  lbphYaml?: string | null;
  /** embeddings.json; null clears the embedding model. */
  embeddingsJson?: string | null;
  /**
   * The corrections ("not this person") of GET /api/models/trained/corrections (shared/recognition/correction-file.ts),
   * applied to whichever models are installed; null clears them.
   */
  corrections?: string | null;
  /**
   * The models in compact form (#27: GET /api/models/trained/compact's segments, shared/recognition/compact-model.ts),
   * in place of lbphYaml and embeddingsJson: a recognizer without segments is cleared.
   */
  compact?: CompactModels;
}

/** The compact models as the model sync assembled them from the manifest and its segments. */
export interface CompactModels {
  trainedAt: string | null;
  lbph: { head: LbphHeader; segments: Uint8Array[] } | null;
  embedding: { descriptorModel: string; dim: number; segments: Uint8Array[] } | null;
}

export interface SetModelResult {
  lbph: { labels: string[]; samples: number } | null;
  embedding: { labels: string[]; samples: number } | null;
  /** The corrections installed now, per recognizer (templates). */
  corrections: { lbph: number; embedding: number };
  timing: { totalMs: number };
}

/**
 * A rule per recognizer. The embedding one names the descriptor model its distances belong to: the engine uses it
 * only with that model, else the default for the model it runs (a distance scale means nothing for another model).
 */
export type EngineRules = WireRules;

export interface RecognizeOptions {
  recognition_model?: RecognitionModel;
  /**
   * The decision rule per recognizer, the server's (GET /api/models/thresholds, with a site's thresholds); where
   * not given, the calibrated default (shared/recognition/rules.ts), as the server's own default.
   */
  rules?: EngineRules;
  /** Also each face's eyes, smile and eyeglasses (as the server's chat analysis gives them). */
  features?: boolean;
}

export interface RecognizeTiming {
  totalMs: number;
  /** Frame to gray (and RGBA from a bitmap). */
  convertMs: number;
  detectMs: number;
  recognizeMs: number;
  /** The facial features (with `features`; the first call includes loading the cascades). */
  featuresMs?: number;
}

export interface RecognizeResult extends Omit<RecognizeResponse, 'faces'> {
  /** Each face, with `features` when asked for. */
  faces: (FaceResult & { features?: ChatFacialFeatures })[];
  timing: RecognizeTiming;
}

export interface ObjectsTiming {
  totalMs: number;
  convertMs: number;
  preprocessMs?: number;
  inferenceMs?: number;
  decodeMs?: number;
}

export interface DetectObjectsResult extends ObjectDetectionResponse {
  detector: string;
  /** What ran it: `onnxruntime-web wasm`, `onnxruntime-web webgpu`, or `tfjs <backend>` (NanoDet's fallback). */
  runtime: string;
  timing: ObjectsTiming;
  /** The object lane that detected it, from 1 (object-pool.ts); absent: the engine worker. */
  lane?: number;
}

export interface TrainSampleIn {
  label: string;
  frame: FramePixels;
}

export interface TrainResult {
  labels: string[];
  total_faces: number;
  faces_per_label: Record<string, number>;
  /** Samples in which no face was found, by index in the request. */
  skipped: { index: number; label: string; reason: 'no_face' }[];
  recognizers_trained: RecognitionModel[];
  /** The trained models in the server's file formats, to keep or upload. */
  files: { lbphYaml: string; embeddingsJson: string | null };
  timing: { totalMs: number; perSampleMs: number };
}

export interface EngineOps {
  init: { args: InitOptions; result: InitResult };
  setModel: { args: ModelTexts; result: SetModelResult };
  recognize: { args: { frame: FramePixels; options: RecognizeOptions }; result: RecognizeResult };
  detectObjects: { args: { frame: FramePixels; confidence?: number }; result: DetectObjectsResult };
  train: { args: { samples: TrainSampleIn[] }; result: TrainResult };
  /** Loads the embedding nets now (so `train` trains that recognizer too); the error in words when they cannot load. */
  loadEmbedding: { args: Record<string, never>; result: { loaded: boolean; error?: string } };
}
