/**
 * The REST contract (DESIGN.md section 2): request schemas (zod, validated by the server and usable by the
 * browser) and response types. Wire names follow the original service so its clients keep working.
 */
import { z } from 'zod';
import type { DetectedObject } from '../objects/types.js';

export type DetectionMethod = 'local' | 'remote';
export type RecognitionModel = 'lbph' | 'embedding';

/** `POST /api/recognize` body: an image as plain base64 or a data URL. */
export const recognizeRequest = z.object({
  image: z.string({ error: 'must be the image as base64 text or a data URL' }).min(1, 'must not be empty'),
});
export type RecognizeRequest = z.infer<typeof recognizeRequest>;

/** `POST /api/train` body: empty or `{}`; nothing in it is read yet. */
export const trainRequest = z.object({}).loose();

/** One face in a recognition result. Box in integer pixels of the submitted image. */
export interface FaceResult {
  x: number;
  y: number;
  w: number;
  h: number;
  /** The person's label, or `unknown`. */
  label: string;
  /** Match score in percent, 0 to 100, higher is better; 0 for `unknown` (DESIGN.md section 3). */
  confidence: number;
  /** The recognizer's raw distance to the nearest known face (lower is closer); absent when untrained. */
  distance?: number;
}

export interface RecognizeResponse {
  faces: FaceResult[];
  count: number;
  detection_method: DetectionMethod;
  recognition_model: RecognitionModel;
  /** Whether the active recognizer was trained when this request ran. */
  trained: boolean;
}

export interface ImageUploadResponse {
  status: 'ok';
  label: string;
  filename: string;
}

export interface StoredImage {
  filename: string;
  bytes: number;
  /** ISO 8601 time the image was stored. */
  created: string;
}

export interface LabelImagesResponse {
  label: string;
  images: StoredImage[];
  count: number;
}

export interface LabelDeleteResponse {
  status: 'ok';
  label: string;
  deleted: number;
  /** The trained model still knows this label until the next training run. */
  retrain_needed: boolean;
}

export interface LabelSummary {
  label: string;
  images: number;
  /** Whether the current trained model knows this label. */
  trained: boolean;
}

export interface LabelsResponse {
  /** Labels with stored images, sorted. */
  labels: string[];
  count: number;
  details: LabelSummary[];
}

export interface SkippedImage {
  label: string;
  filename: string;
  reason: 'no_face' | 'unreadable';
}

export interface TrainResponse {
  status: 'ok';
  labels: string[];
  total_faces: number;
  total_labels: number;
  /** Faces used per label. */
  faces_per_label: Record<string, number>;
  images_total: number;
  /** Images that gave no training face, with why: a person fixes these by retaking them. */
  images_skipped: SkippedImage[];
  detection_method: DetectionMethod;
  /** The active recognizer. */
  recognition_model: RecognitionModel;
  /** Every recognizer this run trained (the embedding recognizer too when its model is loaded). */
  recognizers_trained: RecognitionModel[];
  duration_ms: number;
  trained_at: string;
}

export interface TrainStatusResponse {
  state: 'idle' | 'running';
  /** Images processed so far in the running training, and how many it will process. */
  processed: number;
  total: number;
  last?: TrainResponse;
  last_error?: { code: string; message: string; at: string };
}

export type ReadyCheck = 'ok' | 'loading' | 'error';

export interface ReadyResponse {
  status: 'ready' | 'not_ready';
  local_detector: ReadyCheck;
  recognizer_trained: boolean;
  detection_method: DetectionMethod;
  recognition_model: RecognitionModel;
  remote_status: 'connected' | 'unreachable' | 'model_not_ready' | 'disabled';
  object_detection: 'ready' | 'loading' | 'unavailable' | 'error';
  workers: number;
}

export interface HealthResponse {
  status: 'ok';
  version: string;
  uptime_s: number;
}

export type RecognizerStatus = Record<RecognitionModel, { trained: boolean; trained_at: string | null; labels: number }>;

/** `GET /api/models/config` (and the body of a successful PUT, with `status: "ok"`). */
export interface ModelsConfigResponse {
  recognition_model: RecognitionModel;
  detection_method: DetectionMethod;
  recognizers: RecognizerStatus;
}

export interface ModelChoice<N extends string> {
  name: N;
  available: boolean;
  /** Why it cannot be chosen now, in words; absent when available. */
  reason?: string;
  active: boolean;
}

/** `GET /api/models/available`. */
export interface ModelsAvailableResponse {
  recognition_models: (ModelChoice<RecognitionModel> & { trained: boolean })[];
  detection_methods: (ModelChoice<DetectionMethod> & { status?: ReadyResponse['remote_status'] })[];
}

export interface ObjectDetectionResponse {
  objects: DetectedObject[];
  count: number;
  /** Class name -> number of objects of that class. */
  summary: Record<string, number>;
}

export interface ObjectStatusResponse {
  name: string;
  runtime: string | null;
  input_size: number | null;
  classes: number;
  available: boolean;
  state: 'loading' | 'ready' | 'error' | 'disabled';
  reason?: string;
  confidence_threshold: number;
  nms_iou: number;
  load_ms: number | null;
}

export interface ChatStatusBody {
  enabled: boolean;
  endpoint_configured: boolean;
  /** Base URL of the LLM endpoint without credentials; null when none is configured. */
  endpoint: string | null;
  /** The model requests name (configured, else the first one the server lists); null while unknown. */
  model: string | null;
  reachable: boolean;
  /** Why it is not reachable, in words; absent when it is. */
  reason?: string;
  /** Models the endpoint listed at the last check, when it succeeded. */
  models?: string[];
  /** ISO 8601 time of the last check; null before the first. */
  checked_at: string | null;
}

export interface ChatAnalysis {
  faces: FaceResult[];
  objects: DetectedObject[];
  detection_method: string;
  /** Set when object detection could not run; the reply was made without objects. */
  objects_unavailable?: string;
}
