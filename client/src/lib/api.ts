/**
 * The browser's client for the Lookout REST API. Every failure becomes an ApiFailure whose message a person
 * can read: the server's own message for a refused request, a plain sentence when the server cannot be reached.
 */
import type {
  ChatAnalysis,
  ChatStatusBody,
  ImageUploadResponse,
  LabelDeleteResponse,
  LabelImagesResponse,
  LabelsResponse,
  ModelsAvailableResponse,
  ModelsConfigResponse,
  ObjectDetectionResponse,
  ObjectStatusResponse,
  ReadyResponse,
  RecognitionModel,
  DetectionMethod,
  RecognizeResponse,
  TrainResponse,
  TrainStatusResponse,
  HealthResponse,
} from '../../../shared/api/contract';

export const UNREACHABLE_MESSAGE = 'Cannot reach the Lookout server. Check that it is running and that this device is online.';

export class ApiFailure extends Error {
  constructor(
    message: string,
    /** HTTP status, or 0 when the server could not be reached at all. */
    readonly status: number,
    /** The API's error code (`network` when unreachable). */
    readonly code: string,
  ) {
    super(message);
  }
  get unreachable(): boolean {
    return this.status === 0;
  }
}

async function send(path: string, init?: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`/api${path}`, init);
  } catch {
    throw new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
  }
  if (res.ok) return res;
  let code = 'http_error';
  let message = `The server answered ${res.status} ${res.statusText}.`;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = capitalize(body.error.message);
    if (body.error?.code) code = body.error.code;
  } catch {
    // Not our JSON error body (a proxy's page, say): keep the status line.
    if (res.status === 502 || res.status === 504) message = UNREACHABLE_MESSAGE;
  }
  throw new ApiFailure(message, res.status, code);
}

function capitalize(s: string): string {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await send(path, init)).json() as Promise<T>;
}

function jsonBody(method: string, body: unknown): RequestInit {
  return { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

export const api = {
  health: () => json<HealthResponse>('/health'),
  /** /api/ready answers 503 with the same body while not ready: read it either way. */
  ready: async (): Promise<ReadyResponse> => {
    try {
      const res = await fetch('/api/ready');
      if (res.ok || res.status === 503) return (await res.json()) as ReadyResponse;
      throw new ApiFailure(`The server answered ${res.status}.`, res.status, 'http_error');
    } catch (err) {
      if (err instanceof ApiFailure) throw err;
      throw new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
    }
  },
  labels: () => json<LabelsResponse>('/labels'),
  labelImages: (label: string) => json<LabelImagesResponse>(`/images/${encodeURIComponent(label)}`),
  imageUrl: (label: string, filename: string) => `/api/images/${encodeURIComponent(label)}/${encodeURIComponent(filename)}`,
  deleteLabel: (label: string) => json<LabelDeleteResponse>(`/images/${encodeURIComponent(label)}`, { method: 'DELETE' }),
  uploadImage: (label: string, image: Blob, filename = 'capture.jpg') => {
    const form = new FormData();
    form.set('label', label);
    form.set('file', image, filename);
    return json<ImageUploadResponse>('/images', { method: 'POST', body: form });
  },
  train: () => json<TrainResponse>('/train', jsonBody('POST', {})),
  trainStatus: () => json<TrainStatusResponse>('/train/status'),
  recognize: (image: string, signal?: AbortSignal) => json<RecognizeResponse>('/recognize', { ...jsonBody('POST', { image }), signal }),
  detectObjects: (image: string, confidence?: number, signal?: AbortSignal) =>
    json<ObjectDetectionResponse>('/objects/detect', { ...jsonBody('POST', confidence === undefined ? { image } : { image, confidence }), signal }),
  objectStatus: () => json<ObjectStatusResponse>('/objects/status'),
  modelsConfig: () => json<ModelsConfigResponse>('/models/config'),
  modelsAvailable: () => json<ModelsAvailableResponse>('/models/available'),
  setRecognitionModel: (recognition_model: RecognitionModel) => json<ModelsConfigResponse>('/models/config', jsonBody('PUT', { recognition_model })),
  setDetectionMethod: (detection_method: DetectionMethod) =>
    json<{ detection_method: DetectionMethod; remote_status: ReadyResponse['remote_status'] }>('/models/detection', jsonBody('PUT', { detection_method })),
  chatStatus: () => json<ChatStatusBody>('/chat/status'),
  chat: (message: string, image?: string) =>
    json<{ response: string; analysis: ChatAnalysis | null }>('/chat', jsonBody('POST', image ? { message, image } : { message })),
};
