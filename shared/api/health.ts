/** Probes: `GET /api/health` (liveness) and `GET /api/ready` (readiness, 503 with the same body until ready). */
import { z } from 'zod';
import { compat, detectionMethod, recognitionModel } from './common.js';

export const healthResponse = z
  .object({
    status: z.literal('ok'),
    app: compat(z.string(), "the application's name (`Lookout`)."),
    version: z.string(),
    uptime_s: z.number().int(),
  })
  .meta({ id: 'HealthResponse', example: { status: 'ok', app: 'Lookout', version: '0.1.0', uptime_s: 3600 } });
export type HealthResponse = z.infer<typeof healthResponse>;

export const readyCheck = z.enum(['ok', 'loading', 'error']);
export type ReadyCheck = z.infer<typeof readyCheck>;

export const remoteStatus = z
  .enum(['connected', 'unreachable', 'model_not_ready', 'disabled'])
  .meta({ id: 'RemoteStatus', description: 'State of the remote detection server.' });
export type RemoteStatus = z.infer<typeof remoteStatus>;

export const objectDetectionState = z.enum(['ready', 'loading', 'not_loaded', 'unavailable', 'error']).meta({
  id: 'ObjectDetectionState',
  description:
    'The object detector: loaded, loading, `not_loaded` (it loads on the next request, which waits for it: not used since the start, or let go after ENGINE_IDLE_RELEASE_S), switched off, or failed to load.',
});
export type ObjectDetectionState = z.infer<typeof objectDetectionState>;

/** #38 2: the embedding worker, loaded on first use like the object detector. */
export const embeddingState = z.enum(['ready', 'loading', 'not_loaded', 'unavailable', 'error']).meta({
  id: 'EmbeddingState',
  description:
    "The embedding worker (the `embedding` recognizer's nets, also the sightings' and trainings' descriptors): loaded, loading, `not_loaded` (it loads on the next request that needs it, which waits for it), switched off (EMBEDDING_ENABLED=false), or failed to load.",
});
export type EmbeddingState = z.infer<typeof embeddingState>;

export const readyResponse = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    local_detector: readyCheck,
    recognizer_trained: z.boolean(),
    detection_method: detectionMethod,
    recognition_model: recognitionModel,
    remote_status: remoteStatus,
    object_detection_state: objectDetectionState,
    embedding_state: embeddingState,
    workers: z.number().int().meta({
      description:
        'Vision worker threads the server may run (WORKERS): it runs one at idle and starts the others when the work asks for them (#38; `lookout_worker_threads` in /metrics says how many run).',
    }),
    shared_state: z.enum(['local', 'in_sync', 'unreachable']).optional().meta({
      description:
        "Where photos, models and settings are kept (#37): `local` in DATA_DIR (the embedded default); with DATABASE_URL, `in_sync` while this replica's copy follows PostgreSQL, `unreachable` when its last check could not reach it (not ready: a write would be refused).",
    }),
    ppe: z.enum(['ready', 'unreachable', 'not_configured', 'disabled']).meta({
      description: 'The PPE detector: `ready` when its /health answers; reported only, it never holds readiness back.',
    }),
    model_loaded: compat(z.boolean(), 'the active recognizer is trained (`recognizer_trained`).'),
    ai_model: compat(z.string(), 'the active recognizer (`recognition_model`: `lbph` or `embedding`).'),
    object_detection: compat(
      z.boolean(),
      'the object detector answers requests: `object_detection_state` is `ready`, `loading` or `not_loaded` (it loads on the first request, #38), not `unavailable` or `error`.',
    ),
    ovms_enabled: compat(z.boolean(), 'a remote detection server is configured (REMOTE_DETECTOR_URL).'),
    ovms_status: compat(
      z.enum(['connected', 'error', 'unreachable']).optional(),
      'the remote detection server (`remote_status`; `error` for `model_not_ready`); absent when none is configured.',
    ),
    chat_enabled: compat(z.boolean(), 'chat can answer (`enabled` of GET /api/chat/status).'),
    ppe_enabled: compat(z.boolean(), 'PPE checks are switched on (PPE_ENABLED).'),
    ppe_serving: compat(
      z
        .object({
          endpoint: z.string().meta({ description: 'PPE_ENDPOINT without credentials.' }),
          status: z.enum(['connected', 'error', 'unreachable', 'unknown']).meta({
            description:
              '`connected` (`ppe` is `ready`), `error` (it answered its health check but cannot take checks), `unreachable`, `unknown` (not checked yet).',
          }),
        })
        .optional(),
      'the PPE detector (`ppe`); present only when PPE is switched on with PPE_ENDPOINT set.',
    ),
    chat_backend: compat(
      z
        .object({
          endpoint: z.string().meta({ description: 'The LLM endpoint without credentials (`endpoint` of GET /api/chat/status).' }),
          via_ai_gateway: z.boolean().meta({ description: 'The endpoint is an AI gateway (its URL names `ai-gateway`).' }),
          status: z.enum(['connected', 'unreachable']).meta({ description: '`reachable` of GET /api/chat/status.' }),
        })
        .optional(),
      'the chat LLM; present only when chat is switched on with CHAT_ENDPOINT set.',
    ),
  })
  .meta({
    id: 'ReadyResponse',
    example: {
      status: 'ready',
      local_detector: 'ok',
      recognizer_trained: true,
      detection_method: 'local',
      recognition_model: 'lbph',
      remote_status: 'disabled',
      object_detection_state: 'ready',
      embedding_state: 'not_loaded',
      workers: 2,
      ppe: 'disabled',
      model_loaded: true,
      ai_model: 'lbph',
      object_detection: true,
      ovms_enabled: false,
      chat_enabled: true,
      ppe_enabled: false,
    },
  });
export type ReadyResponse = z.infer<typeof readyResponse>;
