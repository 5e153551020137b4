/**
 * The IdP's calls to the Lookout API (IDP_BACKEND_URL) for enrollment and the face step, authenticated as the
 * realm's confidential client `<realm>-service` with a client-credentials token from the IdP's own token endpoint
 * (cached until shortly before it expires). Every failure becomes a BackendError with a reason code the face step
 * denies with: the IdP fails closed, so a backend that is down, slow or answers nonsense never lets anyone in.
 */
import { createHash } from 'node:crypto';
import { type DeletedPerson, deletionsResponse } from '../../shared/api/deletions.js';
import { recognizeResponse } from '../../shared/api/faces.js';
import { type VerifyResponse, verifyResponse } from '../../shared/api/verify.js';

export type BackendErrorCode = 'backend_unavailable' | 'backend_timeout' | 'backend_refused' | 'backend_error';

export class BackendError extends Error {
  constructor(
    readonly code: BackendErrorCode,
    message: string,
    /** The API's error code when it answered one (e.g. `invalid_image`). */
    readonly apiCode?: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'BackendError';
  }
}

export interface RecognizedFace {
  x: number;
  y: number;
  w: number;
  h: number;
  label: string;
  confidence: number;
  reason?: string;
}

export interface Recognition {
  faces: RecognizedFace[];
  recognitionModel: string;
  trained: boolean;
}

export interface BackendOptions {
  /** The API's base URL, without a trailing slash. */
  baseUrl: string;
  /** Per-call timeout in milliseconds (training gets ten times as long). */
  timeoutMs: number;
  /** The IdP's token endpoint, resolved once the issuer is known; undefined: no token is sent. */
  tokenEndpoint?: () => string;
  clientId?: string;
  /** Secret of the service client; undefined: calls go without a token (an API with AUTH_MODE=off). */
  clientSecret?: string;
}

export interface Backend {
  health(): Promise<void>;
  /** `recognizer`: the API's recognizer to use for this request (its active one when absent). */
  recognize(image: Buffer, recognizer?: 'embedding' | 'lbph'): Promise<Recognition>;
  /**
   * `POST /api/verify` with every frame: each one's face against `label`'s own samples only. The answer is checked
   * against the API's schema; one that does not fit (or that is about other frames or another label) is a
   * BackendError, so a malformed answer never grants.
   */
  verify(label: string, frames: Buffer[], recognizer?: 'embedding' | 'lbph'): Promise<VerifyResponse>;
  upload(label: string, image: Buffer, type: string): Promise<void>;
  /**
   * `PUT /api/people/{label}` `{ kiosk }`: whether devices' downloaded models (the kiosk gallery) hold this person.
   * The second factor's people are kept out (enrollment.ts). Optional for test doubles.
   */
  setKiosk?(label: string, kiosk: boolean): Promise<void>;
  train(): Promise<void>;
  /**
   * `GET /api/deletions?since&limit`: people the API deleted at or after `since`, newest first, at most `limit`
   * (1000). An answer that does not fit the schema is a BackendError. Optional for test doubles (enrollment-sync.ts
   * treats a backend without it as one that cannot answer).
   */
  deletions?(since: Date, limit?: number): Promise<DeletedPerson[]>;
}

export function createBackend(options: BackendOptions): Backend {
  let token: { value: string; until: number } | null = null;

  async function bearer(): Promise<Record<string, string>> {
    if (!options.clientSecret || !options.tokenEndpoint || !options.clientId) return {};
    if (token && token.until > Date.now()) return { authorization: `Bearer ${token.value}` };
    const basic = Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64');
    const res = await send(options.tokenEndpoint(), {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const body = (await res.json().catch(() => null)) as { access_token?: string; expires_in?: number } | null;
    if (!res.ok || typeof body?.access_token !== 'string')
      throw new BackendError('backend_refused', `The identity provider did not give its service client a token (${res.status}).`);
    token = { value: body.access_token, until: Date.now() + Math.max(0, (body.expires_in ?? 60) - 30) * 1000 };
    return { authorization: `Bearer ${token.value}` };
  }

  async function send(url: string, init: RequestInit, timeoutMs = options.timeoutMs): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new BackendError('backend_timeout', `The face service did not answer within ${timeoutMs} ms.`);
      throw new BackendError('backend_unavailable', 'The face service cannot be reached.');
    }
  }

  /**
   * Calls the API; a non-2xx answer is a BackendError carrying the API's own code and status, its message in the
   * IdP's words: the API's text (which may name its hosts or database) would reach the browser (#28).
   */
  async function call(pathname: string, init: RequestInit = {}, timeoutMs?: number): Promise<unknown> {
    const headers = { ...(await bearer()), ...(init.headers as Record<string, string> | undefined) };
    const res = await send(`${options.baseUrl}${pathname}`, { ...init, headers }, timeoutMs);
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    if (res.ok) return body;
    const apiCode = typeof body?.error?.code === 'string' ? body.error.code : undefined;
    if (res.status === 401 || res.status === 403)
      throw new BackendError(
        'backend_refused',
        `The face service refused the identity provider (status ${res.status}).`,
        apiCode,
        res.status,
      );
    if (res.status >= 500)
      throw new BackendError('backend_unavailable', `The face service failed (status ${res.status}).`, apiCode, res.status);
    throw new BackendError('backend_error', `The face service refused the request (status ${res.status}).`, apiCode, res.status);
  }

  return {
    async health() {
      const body = (await call('/api/health')) as { status?: string } | null;
      if (body?.status !== 'ok' && body?.status !== 'healthy')
        throw new BackendError('backend_unavailable', 'The face service does not report itself healthy.');
    },
    async recognize(image, recognizer) {
      const body = await call('/api/recognize', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ image: image.toString('base64'), ...(recognizer ? { recognition_model: recognizer } : {}) }),
      });
      // Checked against the contract: an answer of another shape (a string as confidence) passes nothing (#28).
      const parsed = recognizeResponse.safeParse(body);
      if (!parsed.success) throw new BackendError('backend_error', 'The face service gave a malformed recognition answer.');
      return { faces: parsed.data.faces, recognitionModel: parsed.data.recognition_model, trained: parsed.data.trained };
    },
    async verify(label, frames, recognizer) {
      const body = await call('/api/verify', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          label,
          frames: frames.map((f) => f.toString('base64')),
          ...(recognizer ? { recognition_model: recognizer } : {}),
        }),
      });
      const parsed = verifyResponse.safeParse(body);
      if (!parsed.success) throw new BackendError('backend_error', 'The face service gave a malformed verification answer.');
      if (parsed.data.frames?.length !== frames.length)
        throw new BackendError('backend_error', 'The face service answered for other frames than those sent.');
      return parsed.data;
    },
    async upload(label, image, type) {
      const form = new FormData();
      form.set('label', label);
      // The same bytes give the same capture_id, so a retried enrollment stores each capture once.
      form.set('capture_id', createHash('sha256').update(label).update(image).digest('hex').slice(0, 32));
      form.set('file', new Blob([new Uint8Array(image)], { type }), `capture.${type === 'image/png' ? 'png' : 'jpg'}`);
      await call('/api/images', { method: 'POST', body: form });
    },
    async setKiosk(label, kiosk) {
      await call(`/api/people/${encodeURIComponent(label)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kiosk }),
      });
    },
    async deletions(since, limit = 1000) {
      const query = new URLSearchParams({ since: since.toISOString(), limit: String(limit) });
      const parsed = deletionsResponse.safeParse(await call(`/api/deletions?${query}`));
      if (!parsed.success) throw new BackendError('backend_error', 'The face service gave a malformed list of deletions.');
      return parsed.data.deleted;
    },
    async train() {
      // One training at a time on the API: wait out another one (409) for a while.
      for (let attempt = 0; ; attempt++) {
        try {
          await call('/api/train', { method: 'POST' }, options.timeoutMs * 10);
          return;
        } catch (err) {
          if (!(err instanceof BackendError) || err.status !== 409 || attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
  };
}
