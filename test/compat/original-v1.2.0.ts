/**
 * The answers of the original service (v1.2.0), as its clients read them: its Angular web frontend, its Keycloak
 * extension and scripts written against its FastAPI answers. Written here from issue #19's table and the service
 * spec (../shared/spec/service-spec.md), independently of Lookout's own contract (shared/api/): Lookout's answers
 * must match these as well as its own schemas. Objects are loose: Lookout's own fields may stand beside these.
 */
import { z } from 'zod';

const box = { x: z.number().int(), y: z.number().int(), w: z.number().int(), h: z.number().int() };

/**
 * The spec's identifiers, as these requests (no Accept of Angular's) get them; the original's aliases are accepted on
 * input, and answered only to its frontend (original-words.test.ts, server/http/original-words.ts).
 */
const detectionMethod = z.enum(['local', 'remote']);
const recognitionModel = z.enum(['lbph', 'embedding']);

/** FastAPI's error body: `detail`, a sentence its frontend shows ("Error: <detail>"). */
export const errorDetail = z.looseObject({ detail: z.string().min(1) });

export const health = z.looseObject({ status: z.literal('ok'), app: z.string().min(1), version: z.string() });

export const ready = z.looseObject({
  status: z.string(),
  model_loaded: z.boolean(),
  ai_model: recognitionModel,
  detection_method: detectionMethod,
  chat_enabled: z.boolean(),
  ovms_enabled: z.boolean(),
  // Present only when a remote server is configured: the frontend shows a chip whenever it is.
  ovms_status: z.enum(['connected', 'error', 'unreachable']).optional(),
  object_detection: z.boolean(),
});

export const face = z.looseObject({ ...box, label: z.string().min(1), confidence: z.number() });

/** A face of `POST /api/recognize` and `/api/analyze`: each says which detector found it. */
const recognizedFace = face.extend({ detection_method: detectionMethod });

export const recognize = z.looseObject({ faces: z.array(recognizedFace), count: z.number().int(), detection_method: detectionMethod });

export const upload = z.looseObject({ status: z.literal('ok'), label: z.string(), filename: z.string(), path: z.string() });

/** `GET /api/images/{label}`: `images` is a list of file names. */
export const labelImages = z.looseObject({ label: z.string(), images: z.array(z.string()), count: z.number().int() });

export const labelDelete = z.looseObject({ status: z.literal('ok'), label: z.string(), deleted: z.number().int() });

export const labels = z.looseObject({ labels: z.array(z.string()), count: z.number().int() });

export const train = z.looseObject({
  status: z.literal('ok'),
  labels: z.array(z.string()),
  total_faces: z.number().int(),
  total_labels: z.number().int(),
  detection_method: detectionMethod,
});

/**
 * `ovms_info`: the remote detector (null when none is configured). The original Model Config page shows "OVMS Status"
 * from `available` (Connected / Unreachable), then `model_name` and `rest_url`.
 */
const ovmsInfo = z
  .looseObject({
    name: z.string().min(1),
    type: z.string().min(1),
    model_name: z.string().min(1),
    rest_url: z.string(),
    available: z.boolean(),
    confidence_threshold: z.number(),
  })
  .nullable();

const modelInfo = z.looseObject({ name: z.string(), type: z.string(), backend: z.string(), params: z.record(z.string(), z.unknown()) });

export const modelsConfig = z.looseObject({
  ai_model: recognitionModel,
  detection_method: detectionMethod,
  is_trained: z.boolean(),
  model_info: modelInfo,
  ovms_info: ovmsInfo,
  chat_enabled: z.boolean(),
});

/** `PUT /api/models/config`: the frontend replaces its config with this answer. */
export const modelsConfigUpdate = z.looseObject({
  status: z.literal('ok'),
  ai_model: recognitionModel,
  detection_method: detectionMethod,
  is_trained: z.boolean(),
  model_info: modelInfo,
});

export const detectionUpdate = z.looseObject({
  status: z.literal('ok'),
  detection_method: detectionMethod,
  ovms_info: ovmsInfo,
});

const choice = { name: z.string(), available: z.boolean(), description: z.string() };

/** `GET /api/models/available`: the Model Config page's radios take their values from `type`. */
export const modelsAvailable = z.looseObject({
  models: z.array(z.looseObject({ type: recognitionModel, ...choice })).min(1),
  detection_methods: z.array(z.looseObject({ type: detectionMethod, ...choice })).min(1),
});

export const detectedObject = z.looseObject({
  class_id: z.number().int(),
  class_name: z.string(),
  confidence: z.number(),
  ...box,
});

export const objectDetect = z.looseObject({
  objects: z.array(detectedObject),
  count: z.number().int(),
  summary: z.record(z.string(), z.number().int()),
});

const detectorInfo = z.looseObject({
  name: z.string(),
  type: z.string(),
  classes_count: z.number().int(),
  available: z.boolean(),
  confidence_threshold: z.number(),
});

export const objectClasses = z.looseObject({
  classes: z.array(z.string()).length(80),
  count: z.literal(80),
  detector: detectorInfo.nullable(),
});

export const objectStatus = detectorInfo;

export const chatStatus = z.looseObject({
  enabled: z.boolean(),
  model_endpoint: z.string().nullable(),
  model_name: z.string().nullable(),
});

/**
 * A face of the chat analysis (its FaceEngine.analyze_faces, as `POST /api/analyze`): the detector that found it and
 * its `features` from the eye, eyeglasses, smile and profile cascades (`profile_face` only when it had the last).
 */
const analysedFace = recognizedFace.extend({
  features: z.looseObject({
    eyes_detected: z.number().int().min(0),
    glasses_detected: z.boolean(),
    smile_detected: z.boolean(),
    profile_face: z.boolean().optional(),
    face_width: z.number().int(),
    face_height: z.number().int(),
    aspect_ratio: z.number(),
  }),
});

/** The facial features of `POST /api/analyze` (the original's `profile_face` only when it had the profile cascade). */
const analyzedFeatures = z.looseObject({
  eyes_detected: z.number().int().min(0),
  glasses_detected: z.boolean(),
  smile_detected: z.boolean(),
  profile_face: z.boolean().optional(),
  face_width: z.number().int(),
  face_height: z.number().int(),
  aspect_ratio: z.number(),
});

/** `POST /api/analyze`: every face with its features, and which cascades the server has. */
export const analyze = z.looseObject({
  faces: z.array(recognizedFace.extend({ features: analyzedFeatures })),
  count: z.number().int().min(0),
  cascades_loaded: z.looseObject({
    face: z.boolean(),
    eye: z.boolean(),
    smile: z.boolean(),
    profile: z.boolean(),
    eye_glasses: z.boolean(),
  }),
});

/** `POST /api/chat`: the reply and what was analysed (`null` without an image). */
export const chat = z.looseObject({
  response: z.string(),
  analysis: z.looseObject({ faces: z.array(analysedFace), count: z.number().int().min(0) }).nullable(),
});
