/**
 * Model configuration: which recognizer and which detection engine are active, what is available and why not.
 * Changes apply to the next request at once, with no restart; a request already running keeps what it started with.
 */
import { Hono } from 'hono';
import type { z } from 'zod';
import { DETECTION_METHODS, RECOGNITION_MODELS } from '../../shared/api/index.js';
import { detectionMethodInput, recognitionModelInput } from '../config/settings.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';
import { compatConfig, compatModels, DETECTION_DESCRIPTIONS, ovmsInfo } from './compat.js';

// The original clients send `ai_model` (with `dlib`), `method` or `detection_method` (with `opencv`/`openvino`):
// the table's body schemas take any text, and the values are checked here so the message names the choices.

function parseChoice<T>(raw: string | undefined, schema: z.ZodType<T>, field: string, allowed: string): T {
  if (raw === undefined) throw new ApiError('missing_field', `send { "${field}": ${allowed} }`);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ApiError('bad_request', `"${raw}" is not a ${field.replace('_', ' ')}; use ${allowed}`);
  return parsed.data;
}

export function modelRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const config = () => ({
    recognition_model: ctx.faces.recognitionModel,
    detection_method: ctx.faces.detectionMethod,
    recognizers: ctx.faces.recognizerStatus(),
    ...compatConfig(ctx),
  });

  mountRoute(app, 'modelsConfig', () => config());

  mountRoute(app, 'setModelsConfig', (_c, { body }) => {
    const model = parseChoice(
      body.recognition_model ?? body.ai_model ?? body.model,
      recognitionModelInput,
      'recognition_model',
      '"lbph" or "embedding"',
    );
    ctx.faces.setRecognitionModel(model);
    return { status: 'ok' as const, ...config() };
  });

  mountRoute(app, 'setDetection', (_c, { body }) => {
    const method = parseChoice(body.detection_method ?? body.method, detectionMethodInput, 'detection_method', '"local" or "remote"');
    ctx.faces.setDetectionMethod(method);
    return {
      status: 'ok' as const,
      detection_method: ctx.faces.detectionMethod,
      remote_status: ctx.remote.status,
      ovms_info: ovmsInfo(ctx),
    };
  });

  mountRoute(app, 'modelsAvailable', () => {
    const recognizers = ctx.faces.recognizerStatus();
    return {
      recognition_models: RECOGNITION_MODELS.map((name) => {
        const reason = ctx.faces.recognitionUnavailable(name);
        return {
          name,
          available: reason === null,
          ...(reason ? { reason } : {}),
          active: name === ctx.faces.recognitionModel,
          trained: recognizers[name].trained,
        };
      }),
      detection_methods: DETECTION_METHODS.map((name) => {
        const reason = ctx.faces.detectionUnavailable(name);
        return {
          name,
          available: reason === null,
          ...(reason ? { reason } : {}),
          active: name === ctx.faces.detectionMethod,
          ...(name === 'remote' ? { status: ctx.remote.status } : {}),
          type: name,
          description: DETECTION_DESCRIPTIONS[name],
        };
      }),
      models: compatModels(ctx),
    };
  });

  return app;
}
