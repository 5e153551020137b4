/**
 * Model configuration (`/api/models/config`, `/api/models/detection`, `/api/models/available`), each recognizer's
 * decision thresholds (`/api/models/thresholds`, with a preview of a change) and the trained models a browser
 * downloads to run itself (`/api/models/trained`).
 */
import { z } from 'zod';
import { compat, detectionMethod, isoTime, RECOGNITION_MODELS, recognitionModel } from './common.js';
import { remoteStatus } from './health.js';
import type { DecisionRule } from '../recognition/decision.js';

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

/**
 * The original service's `ovms_info`: the remote detection server, or null when none is configured. Its Model Config
 * page reads `available` (its "OVMS Status"), `model_name` and `rest_url`; `endpoint` and `status` are Lookout's.
 */
export const ovmsInfo = z
  .object({
    name: z.string().meta({ description: 'Display name of the remote detector.' }),
    type: z.string().meta({ description: 'What kind of server it is: `kserve-v2`.' }),
    model_name: z.string(),
    rest_url: z.string().meta({ description: 'Base URL of the KServe V2 server, without credentials (as `endpoint`).' }),
    available: z.boolean().meta({ description: 'The server answers and the model is ready (`status` is `connected`).' }),
    confidence_threshold: z.number(),
    endpoint: z.string().meta({ description: 'Base URL of the KServe V2 server, without credentials.' }),
    status: remoteStatus,
  })
  .nullable()
  .meta({ id: 'OvmsInfo' });
export type OvmsInfo = z.infer<typeof ovmsInfo>;

/** #29: the detection method the models were trained with, and whether LBPH needs a retraining for the active one. */
const trainedDetectionFields = {
  trained_detection_method: detectionMethod.nullable().meta({
    description:
      'The detection method of the training the installed models come from; null when not known (not trained, or trained before this was kept).',
  }),
  retrain_recommended: z.boolean().meta({
    description:
      'The LBPH model was trained with another detection method than the active one: the two draw different boxes, so its face crops ' +
      'differ and LBPH may not recognise people until `POST /api/train` runs again. The embedding recognizer aligns faces by their landmarks and is not affected.',
  }),
};

const configFields = {
  recognition_model: recognitionModel,
  detection_method: detectionMethod,
  recognizers: recognizerStatus,
  ...trainedDetectionFields,
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
    trained_detection_method: 'local',
    retrain_recommended: false,
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
    ...trainedDetectionFields,
    ovms_info: compat(ovmsInfo, 'the remote detection server; null when none is configured.'),
  })
  .meta({
    id: 'DetectionResponse',
    example: {
      status: 'ok',
      detection_method: 'remote',
      remote_status: 'connected',
      trained_detection_method: 'local',
      retrain_recommended: true,
      ovms_info: {
        name: 'Remote face detector',
        type: 'kserve-v2',
        model_name: 'face-detection-retail-0005',
        rest_url: 'http://ovms:8080',
        available: true,
        confidence_threshold: 0.5,
        endpoint: 'http://ovms:8080',
        status: 'connected',
      },
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
    version: z.string().nullable().meta({
      description:
        'Content hash of the model files and their corrections (also the ETag); null when nothing was trained. A new or deleted correction changes it.',
    }),
    trained_at: isoTime.nullable(),
    labels: z.array(z.string()).meta({ description: 'Every label either model knows, sorted.' }),
    lbph: trainedModelFile,
    embedding: trainedModelFile,
    // #26 corrections: absent before any training.
    models_version: z.string().optional().meta({
      description:
        "The model files' own version (their ETag): equal to `version` without corrections; a device whose files have it downloads only the corrections.",
    }),
    corrections: trainedModelFile
      .extend({ count: z.number().int().meta({ description: 'How many correction templates (one per correction and recognizer).' }) })
      .optional()
      .meta({
        description:
          'The corrections ("not this person") of the people in these models, for the engine to apply offline; not available when there are none.',
      }),
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

/** `GET /api/models/trained/corrections` (shared/recognition/correction-file.ts writes and reads it). */
const correctionFileEntry = z.object({
  label: z.string().meta({ description: 'The person the face is not.' }),
  feature: z.string().meta({ description: "base64 of the face's feature, little-endian float32 (an LBPH histogram or a descriptor)." }),
});
export const trainedCorrectionsFile = z
  .object({
    format: z.literal('lookout-corrections'),
    version: z.string().meta({ description: 'The version of `GET /api/models/trained` these corrections belong to.' }),
    descriptor_model: z.string().nullable().meta({ description: 'The descriptor model of the embedding corrections (null: none).' }),
    lbph: z.array(correctionFileEntry),
    embedding: z.array(correctionFileEntry),
  })
  .meta({ id: 'TrainedCorrectionsFile' });

/** Headers of the trained-model answers: the ETag is the models' version (send it back in If-None-Match). */
export const trainedModelHeaders = z.object({
  etag: z.string().optional().meta({ description: "The models' version in quotes; absent when nothing was trained." }),
  'cache-control': z.string().meta({ description: '`no-cache`: revalidate with If-None-Match.' }),
});
export const trainedFileHeaders = trainedModelHeaders.extend({
  'x-model-version': z.string().meta({ description: "The models' version, unquoted." }),
});

// ---------------------------------------------------------------- thresholds (the decision rule, issue #25)

/** The keys of a recognizer's decision rule a site may set (`PUT /api/models/thresholds`). */
export const THRESHOLD_KEYS = ['max', 'sure_max', 'ratio_max', 'verify_max', 'cohort_ratio'] as const;
export type ThresholdKey = (typeof THRESHOLD_KEYS)[number];

const ruleFields = {
  min: z.number().meta({
    description:
      'Smallest distance accepted: closer is a pixel copy of a training photo (`copy_of_training_image`); LBPH 4, embedding 0. Set by LBPH_DISTANCE_MIN only.',
  }),
  max: z.number().meta({ description: 'The limit: the nearest person may be named up to this distance.' }),
  sure_max: z
    .number()
    .meta({ description: 'Named with certainty `high` up to this distance, `unsure` ("probably") between it and `max`.' }),
  near_max: z.number().meta({
    description:
      'Past `max` but within this distance a face is `below_threshold` (a near miss, with its candidate); beyond it `no_match`. Follows `max` up when `max` is raised past it.',
  }),
  ratio_max: z.number().nullable().meta({
    description: 'Margin rule: `ambiguous` when d1 / d2 (nearest / next person) is above this; null: off.',
  }),
  verify_max: z.number().meta({
    description:
      '1:1 verification (`POST /api/verify`): a match up to this distance to the claimed person. Its own limit: a change of `max` leaves it as it is (#36).',
  }),
  cohort_ratio: z.number().nullable().optional().meta({
    description:
      "Per-person limit (embedding): a person is named only within this share of their cohort bound, the distance from their photos to the nearest faces of a background cohort of strangers shipped with Lookout (docs/recognition.md); a person whose photos sit near many strangers' faces gets a stricter limit than `max`. The same share applies to `sure_max` and `verify_max`. null: off (LBPH).",
  }),
  quality: z
    .object({
      min_face_px: z.number().meta({ description: 'A face narrower than this (pixels) is `unknown` with reason `low_quality`.' }),
      min_sharpness: z.number().meta({ description: 'A face less sharp than this (photo check measure) is `low_quality`.' }),
      sure_face_px: z.number().meta({ description: 'A face narrower than this is named at most `unsure`.' }),
      sure_sharpness: z
        .number()
        .meta({ description: 'A face less sharp than this is named at most `unsure` (so are too dark, burnt-out and turned faces).' }),
    })
    .nullable()
    .optional()
    .meta({ description: "Quality floors of the query face (the enrollment photo check's measures); null: quality is not looked at." }),
};

/** A decision rule in numbers (distances in the recognizer's own scale: LBPH chi-square, embedding euclidean). */
export const thresholdValues = z.object(ruleFields).meta({ id: 'ThresholdValues' });
export type ThresholdValues = z.infer<typeof thresholdValues>;

/** A decision rule (shared/recognition/decision.ts) in the API's snake_case keys. */
export function thresholdValuesOf(rule: DecisionRule): ThresholdValues {
  return {
    min: rule.min,
    max: rule.max,
    sure_max: rule.sureMax,
    near_max: rule.nearMax,
    ratio_max: rule.ratioMax,
    verify_max: rule.verifyMax,
    cohort_ratio: rule.cohortRatio ?? null,
    quality: rule.quality
      ? {
          min_face_px: rule.quality.minFacePx,
          min_sharpness: rule.quality.minSharpness,
          sure_face_px: rule.quality.sureFacePx,
          sure_sharpness: rule.quality.sureSharpness,
        }
      : null,
  };
}

export const recognizerThresholds = z
  .object({
    ...ruleFields,
    defaults: thresholdValues.meta({
      description:
        'What each key is without the saved overrides: the calibrated default with the settings (LBPH_DISTANCE_*, EMBEDDING_DISTANCE_MAX) over it.',
    }),
    overridden: z
      .array(z.enum(THRESHOLD_KEYS))
      .meta({ description: 'The keys set by `PUT /api/models/thresholds` (the others are the defaults).' }),
    bounds: z
      .object({
        min: z.number(),
        max: z.number().meta({
          description:
            'The calibrated bound of this recognizer and descriptor model: past it strangers pass as enrolled people (LBPH 85, faceapi-128 0.55, faceres-1024 0.92).',
        }),
        basis: z.string().meta({ description: 'Where `max` comes from (the bench measure it rests on).' }),
      })
      .meta({
        description:
          '`max`, `sure_max` and `verify_max` may be set above `bounds.min` and up to `bounds.max`; `PUT /api/models/thresholds` refuses others with 400.',
      }),
    descriptor_model: z.string().optional().meta({
      description: 'Embedding only: the descriptor model these distances belong to (overrides are kept per descriptor model).',
      example: 'faceapi-128',
    }),
    similarity: z
      .object({
        max: z.number().min(0).max(100),
        sure_max: z.number().min(0).max(100),
        verify_max: z.number().min(0).max(100),
        near_max: z.number().min(0).max(100),
      })
      .optional()
      .meta({
        description:
          "#36: each limit in the units of a face's `confidence`: the similarity (percent, docs/recognition.md) of that distance on this recognizer's (and descriptor model's) scale. The calibrated default `max` is 60. Fixed per distance: moving a limit moves its similarity, never a face's `confidence`. Absent from servers before #36.",
      }),
    problem: z
      .string()
      .optional()
      .meta({ description: 'Why the saved overrides are not in use (they no longer fit the defaults); absent when they are.' }),
  })
  .meta({ id: 'RecognizerThresholds' });
export type RecognizerThresholds = z.infer<typeof recognizerThresholds>;

const LBPH_EXAMPLE = { min: 4, max: 85, sure_max: 75, near_max: 100, ratio_max: null, verify_max: 75 };
const EMBEDDING_EXAMPLE = { min: 0, max: 0.5, sure_max: 0.42, near_max: 0.6, ratio_max: 0.87, verify_max: 0.45 };

export const thresholdsResponse = z
  .object({
    lbph: recognizerThresholds,
    embedding: recognizerThresholds,
    updated_at: isoTime.nullable().meta({ description: 'When the saved settings were last changed (by any replica); null when never.' }),
  })
  .meta({
    id: 'ThresholdsResponse',
    example: {
      lbph: {
        ...LBPH_EXAMPLE,
        max: 70,
        sure_max: 70,
        verify_max: 70,
        defaults: LBPH_EXAMPLE,
        overridden: ['max'],
        similarity: { max: 65.3, sure_max: 65.3, verify_max: 65.3, near_max: 25.8 },
        bounds: {
          min: 4,
          max: 85,
          basis: "the original's window end; the bench's 1:1 impostor pairs pass at 1% from 84.0 (bench/RESULTS.md)",
        },
      },
      embedding: {
        ...EMBEDDING_EXAMPLE,
        defaults: EMBEDDING_EXAMPLE,
        overridden: [],
        bounds: { min: 0, max: 0.55, basis: "the bench's 1:1 impostor pairs pass at 1% from 0.546 (bench/RESULTS.md)" },
        descriptor_model: 'faceapi-128',
      },
      updated_at: '2024-05-01T12:00:00.000Z',
    },
  });
export type ThresholdsResponse = z.infer<typeof thresholdsResponse>;

const settable = (description: string) =>
  z
    .number({ error: 'must be a number, or null to reset it to its default' })
    .nullable()
    .optional()
    .meta({ description: `${description} null: back to the default; absent: unchanged.` });

/**
 * `PUT /api/models/thresholds` and its preview: one recognizer's keys to set. Unknown keys are refused (a typo
 * such as `sureMax` must not be silently ignored).
 */
export const thresholdsRequest = z
  .strictObject(
    {
      recognizer: z.enum(RECOGNITION_MODELS, { error: 'must be "lbph" or "embedding"' }),
      max: settable(
        'The limit (above `bounds.min`, at most `bounds.max`). A lower one takes an unsent `sure_max` down with it, never `verify_max` (#36).',
      ),
      sure_max: settable('The sure bound, at most `max`.'),
      ratio_max: settable('The margin rule, above 0 and at most 1 (1 switches it off).'),
      verify_max: settable(
        "1:1 verification's own limit (above `bounds.min`, at most `bounds.max`); not bound by `max`, and left as it is when `max` changes (#36).",
      ),
      cohort_ratio: settable(
        "Embedding only: the per-person limit, a share of each person's cohort bound above 0 and at most 1.5 (1.5 leaves `max` in charge for nearly everyone; with `ratio_max` 1 as well, the background cohort takes no part).",
      ),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')}; the keys are recognizer, ${THRESHOLD_KEYS.join(', ')}`
          : undefined,
    },
  )
  .meta({ id: 'ThresholdsRequest' });
export type ThresholdsRequest = z.infer<typeof thresholdsRequest>;

/** Where a training sample of the enrolled people ends up under a rule (leave-one-out). */
export const ENROLLED_OUTCOMES = ['named_right', 'named_wrong', 'unsure_right', 'unsure_wrong', 'unknown'] as const;
/** Where a stored face ends up under a rule. */
export const RECENT_OUTCOMES = ['named', 'unsure', 'unknown'] as const;

const reasonCounts = z
  .record(z.string(), z.number().int())
  .meta({ description: 'The unknown ones by reason (`below_threshold`, `no_match`, `ambiguous`, `copy_of_training_image`).' });

export const enrolledCounts = z
  .object({
    named_right: z.number().int().meta({ description: 'Named as themselves, certainty `high`.' }),
    named_wrong: z.number().int().meta({ description: 'Named as someone else, certainty `high`.' }),
    unsure: z.number().int().meta({ description: 'Named with certainty `unsure` ("probably ..."), right or wrong.' }),
    unsure_wrong: z.number().int().meta({ description: 'Of `unsure`: named as someone else.' }),
    unknown: z.number().int(),
    unknown_reasons: reasonCounts,
  })
  .meta({ id: 'EnrolledCounts' });
export type EnrolledCounts = z.infer<typeof enrolledCounts>;

export const recentCounts = z
  .object({
    named: z.number().int().meta({ description: 'Named, certainty `high`.' }),
    unsure: z.number().int().meta({ description: 'Named, certainty `unsure`.' }),
    unknown: z.number().int(),
    unknown_reasons: reasonCounts,
  })
  .meta({ id: 'RecentCounts' });
export type RecentCounts = z.infer<typeof recentCounts>;

const change = <O extends readonly [string, ...string[]]>(outcomes: O) =>
  z.object({
    label: z.string().meta({ description: 'The person (the true one for enrolled samples; the nearest one for stored faces).' }),
    before: z.enum(outcomes),
    after: z.enum(outcomes),
    count: z.number().int(),
  });

export const thresholdsPreviewResponse = z
  .object({
    recognizer: recognitionModel,
    descriptor_model: z.string().optional().meta({ description: 'Embedding only: the descriptor model of the distances.' }),
    current: thresholdValues.meta({ description: 'The rule in use now ("before").' }),
    proposed: thresholdValues.meta({ description: 'The rule the request would make ("after"); nothing is saved.' }),
    enrolled: z
      .object({
        available: z.boolean(),
        reason: z
          .string()
          .optional()
          .meta({ description: 'Why there is nothing to show (not trained, too few samples); absent when available.' }),
        people: z.number().int().meta({ description: 'People in the trained model.' }),
        samples: z.number().int().meta({ description: 'Training samples in the trained model.' }),
        evaluated: z
          .number()
          .int()
          .meta({ description: 'Samples evaluated (all of them, or a share spread over every person on a large model).' }),
        alone: z.number().int().meta({
          description:
            'Evaluated samples whose person has no other sample: they stand for strangers (right is `unknown`, any name is wrong).',
        }),
        before: enrolledCounts,
        after: enrolledCounts,
        changes: z
          .array(change(ENROLLED_OUTCOMES))
          .meta({ description: 'Samples whose outcome changes, by person, most first (at most 20).' }),
      })
      .meta({
        description:
          'Leave-one-out over the trained model: each training sample decided against all the others, as a new photo of an enrolled person would be.',
      }),
    recent: z
      .object({
        records: z
          .number()
          .int()
          .meta({ description: 'Recent recognition results of this recognizer looked at (newest first, at most 500).' }),
        faces: z.number().int().meta({ description: 'Faces in them.' }),
        evaluated: z.number().int().meta({ description: 'Faces decided again from their stored distance.' }),
        not_evaluated: z.record(z.string(), z.number().int()).meta({
          description:
            "Faces that cannot be decided again, by why: `not_trained`, `no_candidate` (unknown with no nearest person stored), `margin` (`ambiguous` or `given_to_another_face`: the next person's distance is not stored), `no_distance`.",
        }),
        before: recentCounts,
        after: recentCounts,
        changes: z
          .array(change(RECENT_OUTCOMES))
          .meta({ description: 'Faces whose outcome changes, by nearest person, most first (at most 20).' }),
        limits: z.array(z.string()).meta({ description: 'What this estimate cannot see, in words.' }),
      })
      .meta({
        description:
          'The recent sightings stored through `POST /api/results`, each face decided again from its stored distance by the current and the proposed rule.',
      }),
  })
  .meta({ id: 'ThresholdsPreviewResponse' });
export type ThresholdsPreviewResponse = z.infer<typeof thresholdsPreviewResponse>;
