/**
 * Model configuration (`/api/models/config`, `/api/models/detection`, `/api/models/available`) and the trained
 * models a browser downloads to run itself (`/api/models/trained`).
 */
import { z } from 'zod';
import { compat, detectionMethod, isoTime, recognitionModel } from './common.js';
import { remoteStatus } from './health.js';

const recognizerState = z.object({ trained: z.boolean(), trained_at: isoTime.nullable(), labels: z.number().int() });
export const recognizerStatus = z
  .object({ lbph: recognizerState, embedding: recognizerState })
  .meta({ id: 'RecognizerStatus', description: 'Per recognizer: whether it is trained, when, and how many labels it knows.' });
export type RecognizerStatus = z.infer<typeof recognizerStatus>;

/** The original service's `model_info`: the active recognizer described. */
export const modelInfo = z
  .object({
    name: z.string().meta({ description: 'Display name, e.g. `LBPH`.' }),
    type: recognitionModel,
    backend: z.string().meta({ description: 'What runs it, e.g. `lookout`.' }),
    available: z.boolean(),
    params: z.record(z.string(), z.unknown()).meta({ description: 'Its settings (distance window, LBPH parameters).' }),
  })
  .meta({ id: 'ModelInfo' });
export type ModelInfo = z.infer<typeof modelInfo>;

/** The original service's `ovms_info`: the remote detection server, or null when none is configured. */
export const ovmsInfo = z
  .object({
    model_name: z.string(),
    endpoint: z.string().meta({ description: 'Base URL of the KServe V2 server, without credentials.' }),
    status: remoteStatus,
    confidence_threshold: z.number(),
  })
  .nullable()
  .meta({ id: 'OvmsInfo' });
export type OvmsInfo = z.infer<typeof ovmsInfo>;

const configFields = {
  recognition_model: recognitionModel,
  detection_method: detectionMethod,
  recognizers: recognizerStatus,
  ai_model: compat(z.string(), 'the active recognizer (`recognition_model`).'),
  is_trained: compat(z.boolean(), 'the active recognizer is trained.'),
  model_info: compat(modelInfo, 'the active recognizer described.'),
  ovms_info: compat(ovmsInfo, 'the remote detection server; null when none is configured.'),
  chat_enabled: compat(z.boolean(), 'chat can answer (`enabled` of GET /api/chat/status).'),
};

export const modelsConfigResponse = z.object(configFields).meta({
  id: 'ModelsConfigResponse',
  example: {
    recognition_model: 'lbph',
    detection_method: 'local',
    recognizers: {
      lbph: { trained: true, trained_at: '2024-05-01T12:00:00.000Z', labels: 3 },
      embedding: { trained: false, trained_at: null, labels: 0 },
    },
    ai_model: 'lbph',
    is_trained: true,
    model_info: {
      name: 'LBPH',
      type: 'lbph',
      backend: 'lookout',
      available: true,
      params: { radius: 1, neighbors: 8, grid_x: 8, grid_y: 8 },
    },
    ovms_info: null,
    chat_enabled: false,
  },
});
export type ModelsConfigResponse = z.infer<typeof modelsConfigResponse>;

export const modelsConfigUpdateResponse = z.object({ status: z.literal('ok'), ...configFields }).meta({ id: 'ModelsConfigUpdateResponse' });
export type ModelsConfigUpdateResponse = z.infer<typeof modelsConfigUpdateResponse>;

/**
 * `PUT /api/models/config`. The original clients send `ai_model` (with `dlib`) or `model`; values are checked by
 * the route so a wrong one gets a message naming the allowed ones.
 */
export const modelsConfigRequest = z
  .object({
    recognition_model: z
      .string()
      .optional()
      .meta({ description: '`lbph` or `embedding` (`dlib` is read as `embedding`).', example: 'embedding' }),
    ai_model: z.string().optional().meta({ description: 'Alias of `recognition_model` (original clients).' }),
    model: z.string().optional().meta({ description: 'Alias of `recognition_model`.' }),
  })
  .loose()
  .meta({ id: 'ModelsConfigRequest' });

/** `PUT /api/models/detection`; `method` is the original clients' name, `opencv`/`openvino` their values. */
export const detectionRequest = z
  .object({
    detection_method: z.string().optional().meta({ description: '`local` or `remote` (`opencv`/`openvino` accepted).', example: 'remote' }),
    method: z.string().optional().meta({ description: 'Alias of `detection_method` (original clients).' }),
  })
  .loose()
  .meta({ id: 'DetectionRequest' });

export const detectionResponse = z
  .object({
    status: z.literal('ok'),
    detection_method: detectionMethod,
    remote_status: remoteStatus,
    ovms_info: compat(ovmsInfo, 'the remote detection server; null when none is configured.'),
  })
  .meta({
    id: 'DetectionResponse',
    example: {
      status: 'ok',
      detection_method: 'remote',
      remote_status: 'connected',
      ovms_info: { model_name: 'face-detection-retail-0005', endpoint: 'http://ovms:8080', status: 'connected', confidence_threshold: 0.5 },
    },
  });
export type DetectionResponse = z.infer<typeof detectionResponse>;

const choice = {
  available: z.boolean(),
  reason: z.string().optional().meta({ description: 'Why it cannot be chosen now, in words; absent when available.' }),
  active: z.boolean(),
};

/** An entry of the original service's `models[]`; `type` is what `PUT /api/models/config` takes as `ai_model`. */
export const compatModel = z
  .object({
    type: recognitionModel,
    name: z.string().meta({ description: 'Display name.' }),
    available: z.boolean(),
    description: z.string(),
  })
  .meta({ id: 'CompatModel' });

export const modelsAvailableResponse = z
  .object({
    recognition_models: z.array(z.object({ name: recognitionModel, ...choice, trained: z.boolean() })),
    detection_methods: z.array(
      z.object({
        name: detectionMethod,
        ...choice,
        status: remoteStatus.optional(),
        type: compat(detectionMethod, 'what `PUT /api/models/detection` takes (the same as `name`).'),
        description: compat(z.string(), 'the method in words.'),
      }),
    ),
    models: compat(z.array(compatModel), 'the recognizers as the original listed them (`recognition_models`).'),
  })
  .meta({
    id: 'ModelsAvailableResponse',
    example: {
      recognition_models: [
        { name: 'lbph', available: true, active: true, trained: true },
        { name: 'embedding', available: true, active: false, trained: true },
      ],
      detection_methods: [
        { name: 'local', available: true, active: true, type: 'local', description: 'Haar cascade in this server.' },
        {
          name: 'remote',
          available: false,
          reason: 'REMOTE_DETECTOR_ENABLED is false',
          active: false,
          status: 'disabled',
          type: 'remote',
          description: 'A KServe V2 model server (face-detection-retail-0005).',
        },
      ],
      models: [
        { type: 'lbph', name: 'LBPH', available: true, description: 'Local binary pattern histograms.' },
        { type: 'embedding', name: 'Face embedding', available: true, description: '128-d face-api descriptors.' },
      ],
    },
  });
export type ModelsAvailableResponse = z.infer<typeof modelsAvailableResponse>;
/** One entry of `recognition_models` / `detection_methods`. */
export type ModelChoice<N extends string> = { name: N; available: boolean; reason?: string; active: boolean };

export const trainedModelFile = z
  .object({
    available: z.boolean(),
    url: z.string(),
    bytes: z.number().int().nullable().meta({ description: 'Size of the file in bytes; null when not available.' }),
  })
  .meta({ id: 'TrainedModelFile' });
export type TrainedModelFile = z.infer<typeof trainedModelFile>;

export const trainedModelsResponse = z
  .object({
    version: z
      .string()
      .nullable()
      .meta({ description: 'Content hash of the model files (also their ETag); null when nothing was trained.' }),
    trained_at: isoTime.nullable(),
    labels: z.array(z.string()).meta({ description: 'Every label either model knows, sorted.' }),
    lbph: trainedModelFile,
    embedding: trainedModelFile,
  })
  .meta({
    id: 'TrainedModelsResponse',
    example: {
      version: '9f2c4e1a0b7d',
      trained_at: '2024-05-01T12:00:00.000Z',
      labels: ['alice-smith'],
      lbph: { available: true, url: '/api/models/trained/lbph', bytes: 523412 },
      embedding: { available: true, url: '/api/models/trained/embedding', bytes: 10240 },
    },
  });
export type TrainedModelsResponse = z.infer<typeof trainedModelsResponse>;

/** Headers of the trained-model answers: the ETag is the models' version (send it back in If-None-Match). */
export const trainedModelHeaders = z.object({
  etag: z.string().optional().meta({ description: "The models' version in quotes; absent when nothing was trained." }),
  'cache-control': z.string().meta({ description: '`no-cache`: revalidate with If-None-Match.' }),
});
export const trainedFileHeaders = trainedModelHeaders.extend({
  'x-model-version': z.string().meta({ description: "The models' version, unquoted." }),
});
