/** Liveness and readiness probes. */
import { Hono } from 'hono';
import type { ReadyResponse } from '../../shared/api/index.js';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';
import { APP_NAME, chatBackend, ovmsStatus } from './compat.js';
import type { ObjectDetectorState } from '../engines/objects/object-service.js';

const OBJECT_READINESS: Record<ObjectDetectorState, ReadyResponse['object_detection_state']> = {
  ready: 'ready',
  loading: 'loading',
  not_loaded: 'not_loaded',
  error: 'error',
  disabled: 'unavailable',
};

/** #38 2: an engine loaded on first use answers its requests (they wait for the load) until a load fails. */
const ANSWERS: readonly ReadyResponse['object_detection_state'][] = ['ready', 'loading', 'not_loaded'];

export function healthRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  mountRoute(app, 'health', () => ({
    status: 'ok' as const,
    app: APP_NAME,
    version: ctx.version,
    uptime_s: Math.round((Date.now() - ctx.startedAt) / 1000),
  }));

  // Ready once the local detector runs in the workers (it is loaded before the server listens). The remote
  // engine, the object detector, the embedding worker and the PPE detector are reported beside it; none holds
  // readiness back (#38 2: the last two load on the first request that needs them).
  mountRoute(app, 'ready', (c) => {
    const remoteStatus = ctx.remote.status;
    const objects = OBJECT_READINESS[ctx.objects.readiness];
    const ovms = ovmsStatus(remoteStatus);
    // #37: with DATABASE_URL a replica whose copy cannot follow PostgreSQL is taken out of service.
    const sharedState = ctx.shared.kind === 'local' ? 'local' : ctx.shared.inSync?.() === false ? 'unreachable' : 'in_sync';
    const body: ReadyResponse = {
      status: ctx.workers > 0 && sharedState !== 'unreachable' ? 'ready' : 'not_ready',
      shared_state: sharedState,
      local_detector: ctx.workers > 0 ? 'ok' : 'error',
      recognizer_trained: ctx.faces.trained,
      detection_method: ctx.faces.detectionMethod,
      recognition_model: ctx.faces.recognitionModel,
      remote_status: remoteStatus,
      object_detection_state: objects,
      embedding_state: ctx.embedding ? ctx.embedding.state : 'unavailable',
      workers: ctx.workers,
      ppe: ctx.ppe.readiness(),
      // The original service's fields, for its dashboard and scripts (docs/migrating.md, "Moving from the original service").
      model_loaded: ctx.faces.trained,
      ai_model: ctx.faces.recognitionModel,
      object_detection: ANSWERS.includes(objects),
      ovms_enabled: remoteStatus !== 'disabled',
      ...(ovms ? { ovms_status: ovms } : {}),
      chat_enabled: ctx.chatStatus.status().enabled,
      ppe_enabled: ctx.settings.ppeEnabled,
    };
    // The original named its upstreams only when they were configured; so does Lookout.
    const ppeServing = ctx.ppe.serving();
    if (ppeServing) body.ppe_serving = ppeServing;
    const chat = chatBackend(ctx);
    if (chat) body.chat_backend = chat;
    return c.json(body, body.status === 'ready' ? 200 : 503);
  });

  return app;
}
