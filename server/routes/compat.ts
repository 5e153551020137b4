/**
 * The original service's (v1.2.0) fields that Lookout's answers carry beside its own, so its clients keep working:
 * its Angular web frontend, its Keycloak extension, scripts written against its FastAPI answers. One place maps
 * Lookout's state onto them (README, "Moving from the original service"); the identifiers stay Lookout's
 * (`local`/`remote`, `lbph`/`embedding`).
 */
import {
  type ModelInfo,
  type ObjectStatusResponse,
  type OvmsInfo,
  RECOGNITION_MODELS,
  type ReadyResponse,
  type RecognitionModel,
  type RemoteStatus,
} from '../../shared/api/index.js';
import type { AppContext } from '../http/context.js';

/** The application's name, as the original's `GET /api/health` gave its own (`app`). */
export const APP_NAME = 'Lookout';

/** The original's `ovms_status` for a configured remote server (it said `error` when the model was not ready). */
const OVMS_STATUS: Record<RemoteStatus, ReadyResponse['ovms_status']> = {
  connected: 'connected',
  model_not_ready: 'error',
  unreachable: 'unreachable',
  disabled: undefined,
};

export function ovmsStatus(status: RemoteStatus): ReadyResponse['ovms_status'] {
  return OVMS_STATUS[status];
}

/** A URL as it may be shown: no user name or password, no trailing slash. */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return '';
  }
}

/** `ovms_info`: the remote detection server, or null when none is configured. */
export function ovmsInfo(ctx: AppContext): OvmsInfo {
  const s = ctx.settings;
  if (ctx.remote.status === 'disabled' || !s.remoteDetectorUrl) return null;
  const url = displayUrl(s.remoteDetectorUrl);
  return {
    name: 'Remote face detector',
    type: 'kserve-v2',
    model_name: s.remoteDetectorModelName,
    rest_url: url,
    available: ctx.remote.status === 'connected',
    confidence_threshold: s.remoteDetectorConfidenceThreshold,
    endpoint: url,
    status: ctx.remote.status,
  };
}

const MODEL_NAMES: Record<RecognitionModel, string> = { lbph: 'LBPH', embedding: 'Face embedding' };

const MODEL_DESCRIPTIONS: Record<RecognitionModel, string> = {
  lbph: 'Local binary pattern histograms (OpenCV-compatible): fast and light, the default.',
  embedding: '128-dimensional face descriptors (face-api), compared by euclidean distance.',
};

/** `models[]` of `GET /api/models/available`, as the original listed its recognizers. */
export function compatModels(ctx: AppContext): { type: RecognitionModel; name: string; available: boolean; description: string }[] {
  return RECOGNITION_MODELS.map((type) => ({
    type,
    name: MODEL_NAMES[type],
    available: ctx.faces.recognitionUnavailable(type) === null,
    description: MODEL_DESCRIPTIONS[type],
  }));
}

export const DETECTION_DESCRIPTIONS = {
  local: 'Haar cascade (OpenCV-compatible) in this server, on the CPU.',
  remote: 'A KServe V2 model server (OpenVINO Model Server or `npm run model-server`) running the detection model.',
} as const;

/** `model_info`: the active recognizer described. */
export function modelInfo(ctx: AppContext): ModelInfo {
  const model = ctx.faces.recognitionModel;
  const rule = ctx.faces.ruleFor(model);
  const params: Record<string, unknown> =
    model === 'lbph'
      ? { radius: 1, neighbors: 8, grid_x: 8, grid_y: 8, distance_min: rule.min, distance_max: rule.max }
      : { dimensions: 128, distance_max: rule.max };
  return {
    name: MODEL_NAMES[model],
    type: model,
    backend: 'lookout',
    available: ctx.faces.recognitionUnavailable(model) === null,
    params,
  };
}

/** The compatibility fields of `GET`/`PUT /api/models/config`. */
export function compatConfig(ctx: AppContext) {
  return {
    ai_model: ctx.faces.recognitionModel,
    is_trained: ctx.faces.trained,
    model_info: modelInfo(ctx),
    ovms_info: ovmsInfo(ctx),
    chat_enabled: ctx.chatStatus.status().enabled,
  };
}

/**
 * `chat_backend` of `GET /api/ready`, as the original answered it: the LLM endpoint, whether it is an AI gateway (the
 * original's test: its URL names `ai-gateway`) and whether the last check reached it; absent (undefined) unless chat
 * is switched on with an endpoint (a local model has none).
 */
export function chatBackend(ctx: AppContext): ReadyResponse['chat_backend'] {
  const chat = ctx.chatStatus.status();
  if (!chat.enabled || !ctx.settings.chatEndpoint || !chat.endpoint) return undefined;
  return {
    endpoint: chat.endpoint,
    via_ai_gateway: chat.endpoint.includes('ai-gateway'),
    status: chat.reachable ? 'connected' : 'unreachable',
  };
}

/** `GET /api/objects/status` (and `detector` of `/api/objects/classes`): the engine's report and the original's names. */
export function objectStatus(ctx: AppContext): ObjectStatusResponse {
  const status = ctx.objects.status();
  return { ...status, type: status.runtime ?? 'none', classes_count: status.classes };
}
