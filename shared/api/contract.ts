/**
 * The REST contract (DESIGN.md section 2): request schemas (zod, validated by the server and usable by the
 * browser) and response types. Wire names follow the original service so its clients keep working.
 */
import { z } from 'zod';
import { OBJECT_CLASSES } from '../objects/classes.js';
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

/**
 * An upload's idempotency key (`capture_id` of `POST /api/images`): the image is stored as `<capture_id>.<ext>`
 * and a repeated upload with the same key for the same label stores nothing new.
 */
export const captureId = z
  .string({ error: 'must be text' })
  .regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 characters of letters, digits, "_" or "-"');

export interface ImageUploadResponse {
  status: 'ok';
  label: string;
  filename: string;
  /** True when a `capture_id` was already stored for this label: nothing new was stored. */
  duplicate?: boolean;
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

/** One downloadable model file of `GET /api/models/trained`. */
export interface TrainedModelFile {
  available: boolean;
  url: string;
  /** Size of the file in bytes; null when not available. */
  bytes: number | null;
}

/**
 * `GET /api/models/trained`: the trained models a browser can download and run itself. `version` is a content
 * hash over the stored model files (also their ETag), so a browser fetches them again only after a training
 * changed them; null when nothing was trained.
 */
export interface TrainedModelsResponse {
  version: string | null;
  trained_at: string | null;
  /** Every label name either model knows, sorted. */
  labels: string[];
  lbph: TrainedModelFile;
  embedding: TrainedModelFile;
}

/** A face as a browser reports it in a stored result (the FaceResult wire shape; unknown fields are dropped). */
export const faceResultSchema = z.object({
  x: z.number({ error: 'must be a number' }),
  y: z.number({ error: 'must be a number' }),
  w: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
  h: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
  label: z.string({ error: 'must be text' }).min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  confidence: z.number({ error: 'must be a number from 0 to 100' }).min(0, 'must be from 0 to 100').max(100, 'must be from 0 to 100'),
  distance: z.number({ error: 'must be a number' }).optional(),
});

/** A detected object as a browser reports it in a stored result (the DetectedObject wire shape). */
export const detectedObjectSchema = z
  .object({
    class_id: z.number({ error: 'must be an integer from 0 to 79' }).int('must be an integer from 0 to 79').min(0, 'must be from 0 to 79').max(79, 'must be from 0 to 79'),
    class_name: z.enum(OBJECT_CLASSES, { error: 'must be one of the 80 class names of GET /api/objects/classes' }),
    confidence: z.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1'),
    x: z.number({ error: 'must be a number' }),
    y: z.number({ error: 'must be a number' }),
    w: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
    h: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
  })
  .refine((o) => OBJECT_CLASSES[o.class_id] === o.class_name, { path: ['class_name'], message: 'does not match class_id' });

/** Largest number of faces / objects one stored result may carry (keeps the bounded history bounded in bytes). */
export const RESULT_MAX_FACES = 100;
export const RESULT_MAX_OBJECTS = 300;
/** Records one `POST /api/results` may carry. */
export const RESULTS_BATCH_MAX = 100;

const imageSide = z.number({ error: 'must be a whole number of pixels' }).int('must be a whole number of pixels').min(1, 'must be at least 1').max(100_000, 'must be at most 100000');

/** One recognition or object-detection result captured on a device (`POST /api/results`). */
export const resultRecordInput = z
  .object({
    id: z.string({ error: 'must be the record\'s unique id (a UUID)' }).regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be a UUID (8 to 64 characters of letters, digits, "_" or "-")'),
    kind: z.enum(['recognition', 'objects'], { error: 'must be "recognition" or "objects"' }),
    captured_at: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time such as 2024-05-01T12:00:00.000Z' }),
    source: z.string({ error: 'must be text' }).max(64, 'must be at most 64 characters').optional(),
    engine: z.enum(['browser', 'server'], { error: 'must be "browser" or "server"' }),
    backend: z.string({ error: 'must be text' }).max(32, 'must be at most 32 characters').optional(),
    detection_method: z.enum(['local', 'remote'], { error: 'must be "local" or "remote"' }).optional(),
    recognition_model: z.enum(['lbph', 'embedding'], { error: 'must be "lbph" or "embedding"' }).optional(),
    image_width: imageSide.optional(),
    image_height: imageSide.optional(),
    faces: z.array(faceResultSchema, { error: 'must be a list of faces' }).max(RESULT_MAX_FACES, `must hold at most ${RESULT_MAX_FACES} faces`).optional(),
    objects: z.array(detectedObjectSchema, { error: 'must be a list of objects' }).max(RESULT_MAX_OBJECTS, `must hold at most ${RESULT_MAX_OBJECTS} objects`).optional(),
  })
  .superRefine((r, ctx) => {
    // A record holds the results of its kind only, so a reader never has to guess which list counts.
    if (r.kind === 'recognition' && r.objects !== undefined) ctx.addIssue({ code: 'custom', path: ['objects'], message: 'is only for kind "objects"' });
    if (r.kind === 'objects' && r.faces !== undefined) ctx.addIssue({ code: 'custom', path: ['faces'], message: 'is only for kind "recognition"' });
  });

export interface ResultRecordInput {
  /** Client-made unique id (a UUID): the dedup key, so a re-sent record is not stored twice. */
  id: string;
  kind: 'recognition' | 'objects';
  /** ISO 8601 time on the device. */
  captured_at: string;
  /** Device / kiosk name, at most 64 characters. */
  source?: string;
  engine: 'browser' | 'server';
  /** webgpu, webgl, wasm, cpu, ... */
  backend?: string;
  detection_method?: DetectionMethod;
  recognition_model?: RecognitionModel;
  image_width?: number;
  image_height?: number;
  /** For kind `recognition`. */
  faces?: FaceResult[];
  /** For kind `objects`. */
  objects?: DetectedObject[];
}

export interface ResultRecord extends ResultRecordInput {
  /** ISO 8601 time the server stored it. */
  received_at: string;
}

/** `POST /api/results` body: 1 to 100 records; when any is invalid, none is stored. */
export const resultsPostRequest = z.object({
  results: z
    .array(resultRecordInput, { error: 'must be a list of result records' })
    .min(1, 'must hold at least one record')
    .max(RESULTS_BATCH_MAX, `must hold at most ${RESULTS_BATCH_MAX} records per request`),
});

export interface ResultsPostResponse {
  status: 'ok';
  /** Records stored by this request. */
  accepted: number;
  /** Records already stored before (or twice in this request), not stored again. */
  duplicates: number;
  /** Records in the history now. */
  total: number;
}

/** `GET /api/results?limit&kind&label`. */
export const resultsQuery = z.object({
  limit: z.coerce
    .number({ error: 'must be a whole number from 1 to 1000' })
    .int('must be a whole number from 1 to 1000')
    .min(1, 'must be a whole number from 1 to 1000')
    .max(1000, 'must be a whole number from 1 to 1000')
    .default(100),
  kind: z.enum(['recognition', 'objects'], { error: 'must be "recognition" or "objects"' }).optional(),
  label: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional(),
});

export interface ResultsListResponse {
  /** Newest first (most recently received). */
  results: ResultRecord[];
  /** Records in `results`. */
  count: number;
  /** Records matching the filters (at most `total`). */
  matched: number;
  /** Records in the history. */
  total: number;
  /** The history's bound (RESULTS_MAX): older records are dropped first. */
  max: number;
}
