/** Probes: `GET /api/health` (liveness) and `GET /api/ready` (readiness, 503 with the same body until ready). */
import { z } from 'zod';
import { detectionMethod, recognitionModel } from './common.js';

export const healthResponse = z
  .object({ status: z.literal('ok'), version: z.string(), uptime_s: z.number().int() })
  .meta({ id: 'HealthResponse', example: { status: 'ok', version: '0.1.0', uptime_s: 3600 } });
export type HealthResponse = z.infer<typeof healthResponse>;

export const readyCheck = z.enum(['ok', 'loading', 'error']);
export type ReadyCheck = z.infer<typeof readyCheck>;

export const remoteStatus = z
  .enum(['connected', 'unreachable', 'model_not_ready', 'disabled'])
  .meta({ id: 'RemoteStatus', description: 'State of the remote detection server.' });
export type RemoteStatus = z.infer<typeof remoteStatus>;

export const readyResponse = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    local_detector: readyCheck,
    recognizer_trained: z.boolean(),
    detection_method: detectionMethod,
    recognition_model: recognitionModel,
    remote_status: remoteStatus,
    object_detection: z.enum(['ready', 'loading', 'unavailable', 'error']),
    workers: z.number().int(),
    ppe: z.enum(['ready', 'unreachable', 'not_configured', 'disabled']).meta({
      description: 'The PPE detector: `ready` when its /health answers; reported only, it never holds readiness back.',
    }),
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
      object_detection: 'ready',
      workers: 2,
      ppe: 'disabled',
    },
  });
export type ReadyResponse = z.infer<typeof readyResponse>;
