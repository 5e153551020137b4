/**
 * The two requests offline mode sends: a training image with its `capture_id`, and a batch of results. Like
 * lib/api.ts, every failure is an ApiFailure (status 0 when the server cannot be reached); unlike it, each
 * request has a time limit, so a server that accepts the connection and never answers cannot hold the queue.
 */
import type { ImageUploadResponse, ResultRecordInput, ResultsPostResponse } from '../../../shared/api/index';
import { authFetch } from '../auth/session';
import { ApiFailure, UNREACHABLE_MESSAGE } from '../lib/api';
import type { CaptureDetails } from './queue';

export const UPLOAD_TIMEOUT_MS = 60_000;
export const RESULTS_TIMEOUT_MS = 20_000;
export const CHECK_TIMEOUT_MS = 20_000;

async function post<T>(path: string, init: RequestInit, timeoutMs: number): Promise<T> {
  let res: Response;
  try {
    res = await authFetch(`/api${path}`, { ...init, method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    // No answer (refused, offline, timed out): the server may or may not have it; the dedup id makes a resend safe.
    throw new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
  }
  if (res.ok) return (await res.json()) as T;
  let code = 'http_error';
  let message = `The server answered ${res.status} ${res.statusText}.`;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = body.error.message.charAt(0).toUpperCase() + body.error.message.slice(1);
    if (body.error?.code) code = body.error.code;
  } catch {
    // A proxy's page in front of a stopped server: as good as unreachable.
    if (res.status === 502 || res.status === 504) throw new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
  }
  throw new ApiFailure(message, res.status, code);
}

function extensionOf(type: string): string {
  return ({ 'image/png': 'png', 'image/webp': 'webp', 'image/gif': 'gif' } as Record<string, string>)[type] ?? 'jpg';
}

export function postCapture(label: string, blob: Blob, captureId: string, details: CaptureDetails = {}): Promise<ImageUploadResponse> {
  const form = new FormData();
  form.set('label', label);
  form.set('capture_id', captureId);
  if (details.display_name) form.set('display_name', details.display_name);
  if (details.face) form.set('face', JSON.stringify(details.face));
  form.set('file', blob, details.original_name || `capture.${extensionOf(blob.type)}`);
  return post<ImageUploadResponse>('/images', { body: form }, UPLOAD_TIMEOUT_MS);
}

/** `POST /api/images/check`: a training photo's check before it is saved (nothing is stored), of the picked `face` where given. Read by lib/photo-check.ts. */
export function postPhotoCheck(image: string, face?: { x: number; y: number; w: number; h: number }): Promise<unknown> {
  return post<unknown>(
    '/images/check',
    { headers: { 'content-type': 'application/json' }, body: JSON.stringify(face ? { image, face } : { image }) },
    CHECK_TIMEOUT_MS,
  );
}

export function postResults(results: ResultRecordInput[]): Promise<ResultsPostResponse> {
  return post<ResultsPostResponse>(
    '/results',
    { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ results }) },
    RESULTS_TIMEOUT_MS,
  );
}

/**
 * Whether a failed request should be tried again later (kept in the queue) rather than given up on: no answer,
 * a server error or "busy", or an endpoint this server does not have yet (an older server: wait for upgrade).
 * Any other 4xx means the server looked at the item and refused it: resending cannot help.
 */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof ApiFailure)) return true;
  const s = err.status;
  return s === 0 || s >= 500 || s === 404 || s === 405 || s === 408 || s === 425 || s === 429;
}
