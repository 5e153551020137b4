/**
 * The browser's client for the Lookout REST API, typed from the shared route table (shared/api/routes.ts): a
 * changed response schema breaks this build, not the page. Every failure becomes an ApiFailure whose message
 * a person can read: the server's own message for a refused request, a plain sentence when the server cannot
 * be reached.
 */
// The client module itself, not the index: the index's schemas (zod) would come into the app's bundle
// (shared/api/client-bundle.test.ts).
import { createLookoutClient, LookoutError, type RequestOf, type ResponseOf } from '../../../shared/api/client';
import type { DetectionMethod, ReadyResponse, RecognitionModel, RouteName, ThresholdsRequest } from '../../../shared/api/index';
import { authFetch } from '../auth/session';

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

// authFetch: the bearer token under AUTH_MODE=oidc, a plain fetch with auth off.
const client = createLookoutClient({ fetch: authFetch });

function capitalize(s: string): string {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

function failure(err: unknown): ApiFailure {
  if (!(err instanceof LookoutError) || err.status === 0) return new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
  if (err.body?.error.message) return new ApiFailure(capitalize(err.body.error.message), err.status, err.body.error.code);
  // Not our JSON error body (a proxy's page, say): keep the status line.
  if (err.status === 502 || err.status === 504) return new ApiFailure(UNREACHABLE_MESSAGE, err.status, err.code);
  return new ApiFailure(`The server answered ${err.status} ${err.statusText}.`, err.status, err.code);
}

type Input<N extends RouteName> = {} extends RequestOf<N> ? RequestOf<N> | undefined : RequestOf<N>;

async function send<N extends RouteName>(name: N, input: Input<N>, init?: RequestInit): Promise<Response> {
  try {
    return await (client.send as (n: N, i?: unknown, r?: RequestInit) => Promise<Response>)(name, input, init);
  } catch (err) {
    throw failure(err);
  }
}

/** A route's JSON answer, typed from the route table; a refusal throws an ApiFailure (pages with calls of their own use it). */
export async function call<N extends RouteName>(name: N, input: Input<N>, init?: RequestInit): Promise<ResponseOf<N>> {
  return (await send(name, input, init)).json() as Promise<ResponseOf<N>>;
}

export const api = {
  health: () => call('health', undefined),
  /** /api/ready answers 503 with the same body while not ready: read it either way. */
  ready: async (): Promise<ReadyResponse> => {
    try {
      const res = await fetch(client.url('ready'));
      if (res.ok || res.status === 503) return (await res.json()) as ResponseOf<'ready'>;
      throw new ApiFailure(`The server answered ${res.status}.`, res.status, 'http_error');
    } catch (err) {
      if (err instanceof ApiFailure) throw err;
      throw new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
    }
  },
  labels: () => call('labels', undefined),
  labelImages: (label: string) => call('labelImages', { params: { label } }),
  imageUrl: (label: string, filename: string) => client.url('imageFile', { params: { label, filename } }),
  deleteLabel: (label: string) => call('deleteLabel', { params: { label } }),
  deleteImage: (label: string, filename: string) => call('deleteImage', { params: { label, filename } }),
  uploadImage: (label: string, image: Blob, filename = 'capture.jpg') => {
    const form = new FormData();
    form.set('label', label);
    form.set('file', image, filename);
    return call('uploadImage', { body: form });
  },
  train: () => call('train', { body: {} }),
  trainStatus: () => call('trainStatus', undefined),
  // #26 sightings: `source` says what sent the image (a photo on a page, live camera frames), for the sightings kept.
  recognize: (image: string, signal?: AbortSignal, from?: { source?: 'api' | 'page' | 'camera'; camera?: string }) =>
    call('recognize', { body: { image, ...from } }, { signal }),
  detectObjects: (image: string, confidence?: number, signal?: AbortSignal) =>
    call('detectObjects', { body: confidence === undefined ? { image } : { image, confidence } }, { signal }),
  objectStatus: () => call('objectStatus', undefined),
  modelsConfig: () => call('modelsConfig', undefined),
  modelsAvailable: () => call('modelsAvailable', undefined),
  setRecognitionModel: (recognition_model: RecognitionModel) => call('setModelsConfig', { body: { recognition_model } }),
  setDetectionMethod: (detection_method: DetectionMethod) => call('setDetection', { body: { detection_method } }),
  /** Each recognizer's decision thresholds, their defaults and which are the site's own. */
  thresholds: () => call('thresholds', undefined, { cache: 'no-store' }),
  setThresholds: (body: ThresholdsRequest) => call('setThresholds', { body }),
  /** What the proposed thresholds would do to the people enrolled and the recent recognitions (nothing is saved). */
  previewThresholds: (body: ThresholdsRequest) => call('previewThresholds', { body }),
  chatStatus: () => call('chatStatus', undefined),
  ppeStatus: () => call('ppeStatus', undefined),
  ppeDetect: (image: string, confidence?: number, signal?: AbortSignal) =>
    call('ppeDetect', { body: confidence === undefined ? { image } : { image, confidence } }, { signal }),
  /** The history of PPE checks, newest first. */
  ppeEvents: (limit: number, signal?: AbortSignal) => call('ppeEvents', { query: { limit } }, { signal }),
  /** The frames checked so far with YOLO labels (a zip), for a download link. */
  ppeDatasetUrl: () => client.url('ppeDataset'),
  processorStatus: () => call('processorStatus', undefined),
  chat: (message: string, image?: string) => call('chat', { body: image ? { message, image } : { message } }),
  /** The streamed reply's raw answer (server-sent events, read by lib/chat-stream.ts). */
  chatEvents: (message: string, image: string | undefined, signal?: AbortSignal) =>
    send(
      'chat',
      { body: image ? { message, image, stream: true } : { message, stream: true } },
      { signal, headers: { accept: 'text/event-stream' } },
    ),
};
