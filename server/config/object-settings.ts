/** Object detection: which detector, its confidence and suppression, its threads. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { boolean, integer, number, type SettingSpec } from './setting-schemas.js';

export const OBJECT_SETTINGS = {
  objectDetectionEnabled: {
    env: 'OBJECT_DETECTION_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Object detection on; the detector loads on the first request that needs it (ENGINE_IDLE_RELEASE_S); `false` leaves /api/objects/detect answering 503.',
  },
  objectModel: {
    env: 'OBJECT_MODEL',
    schema: z
      .string()
      .trim()
      .regex(/^(nanodet|[A-Za-z0-9._-]+\.onnx)$/, '`nanodet` or the file name of a YOLO ONNX model in public/models/'),
    default: 'nanodet',
    doc: 'Object detector: `nanodet` (built in) or the file name of a YOLOv5/v8 ONNX model put in `public/models/`.',
  },
  objectConfidence: {
    env: 'OBJECT_CONFIDENCE',
    schema: number(0, 1),
    default: '0.4',
    doc: 'Default minimum object confidence, 0 to 1 (a request may send its own `confidence`).',
  },
  objectNmsIou: {
    env: 'OBJECT_NMS_IOU',
    schema: number(0, 1),
    default: '0.4',
    doc: 'IoU above which two boxes of one class are the same object (non-maximum suppression).',
  },
  objectWorkers: {
    env: 'OBJECT_WORKERS',
    schema: integer(1, 16),
    default: '1',
    doc: 'Worker threads running the object detector.',
  },
  engineIdleReleaseS: {
    env: 'ENGINE_IDLE_RELEASE_S',
    schema: number(0, 86_400),
    default: '300',
    doc: 'Seconds without a request after which the object detector and the embedding worker are let go (their memory freed); they load again on the next request that needs them, which waits for the load. `0`: keep them once loaded. Both load on first use, never at start. Vision workers beyond the first (WORKERS) stop after as long without a job.',
  },
} as const satisfies Record<string, SettingSpec>;
