/**
 * Model configuration: which recognizer and which detection engine are active, what is available and why not.
 * Changes apply to the next request at once, with no restart; a request already running keeps what it started with.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { DetectionMethod, RecognitionModel } from '../../shared/api/contract.js';
import { detectionMethodInput, recognitionModelInput } from '../config/settings.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { readJson } from '../http/request.js';

const RECOGNITION_MODELS: RecognitionModel[] = ['lbph', 'embedding'];
const DETECTION_METHODS: DetectionMethod[] = ['local', 'remote'];

// The original clients send `ai_model` (with `dlib`), `method` or `detection_method` (with `opencv`/`openvino`).
const configBody = z.object({ recognition_model: z.string().optional(), ai_model: z.string().optional(), model: z.string().optional() }).loose();
const detectionBody = z.object({ detection_method: z.string().optional(), method: z.string().optional() }).loose();

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
  });

  app.get('/models/config', (c) => c.json(config()));

  app.put('/models/config', async (c) => {
    const body = await readJson(c, configBody);
    const model = parseChoice(body.recognition_model ?? body.ai_model ?? body.model, recognitionModelInput, 'recognition_model', '"lbph" or "embedding"');
    ctx.faces.setRecognitionModel(model);
    return c.json({ status: 'ok', ...config() });
  });

  app.put('/models/detection', async (c) => {
    const body = await readJson(c, detectionBody);
    const method = parseChoice(body.detection_method ?? body.method, detectionMethodInput, 'detection_method', '"local" or "remote"');
    ctx.faces.setDetectionMethod(method);
    return c.json({ status: 'ok', detection_method: ctx.faces.detectionMethod, remote_status: ctx.remote.status });
  });

  app.get('/models/available', (c) => {
    const recognizers = ctx.faces.recognizerStatus();
    return c.json({
      recognition_models: RECOGNITION_MODELS.map((name) => {
        const reason = ctx.faces.recognitionUnavailable(name);
        return { name, available: reason === null, ...(reason ? { reason } : {}), active: name === ctx.faces.recognitionModel, trained: recognizers[name].trained };
      }),
      detection_methods: DETECTION_METHODS.map((name) => {
        const reason = ctx.faces.detectionUnavailable(name);
        return {
          name,
          available: reason === null,
          ...(reason ? { reason } : {}),
          active: name === ctx.faces.detectionMethod,
          ...(name === 'remote' ? { status: ctx.remote.status } : {}),
        };
      }),
    });
  });

  return app;
}
