/**
 * The processor's own access token under `AUTH_MODE=oidc`: a confidential client's client-credentials grant
 * (`PROCESSOR_OIDC_TOKEN_URL`, `PROCESSOR_OIDC_CLIENT_ID`, `PROCESSOR_OIDC_CLIENT_SECRET` or `_FILE`), kept in
 * memory and fetched again before it expires, so the polls of `/api/labels` and `/api/models/config` never go out
 * with a stale one. A 401 from the API (a key rotated, a token revoked) drops the token and the request is tried
 * once more with a fresh one. The token and the secret are never logged.
 */
import { readFile } from 'node:fs/promises';
import type { ProcessorSettings } from '../config/settings.js';

export interface ServiceTokenOptions {
  tokenUrl: string;
  clientId: string;
  /** The secret itself, or a file holding it (read at each fetch, so a rotated Secret is taken up). */
  clientSecret?: string;
  clientSecretFile?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
}

export class ServiceTokenError extends Error {
  constructor(
    message: string,
    /**
     * `refused`: the token endpoint refused the client id and secret; `unreadable`: the secret file cannot be read;
     * `unreachable`: no answer. The first two are the processor's configuration: it is not ready (#28).
     */
    readonly kind: 'refused' | 'unreadable' | 'unreachable',
  ) {
    super(message);
    this.name = 'ServiceTokenError';
  }
}

/** Renew when less than this share of the lifetime is left (at least 10 s, as clocks and polls drift). */
const RENEW_SHARE = 0.2;
const RENEW_MIN_MS = 10_000;

export class ServiceToken {
  private current: { token: string; renewAt: number } | null = null;
  private pending: Promise<string> | null = null;
  private readonly fetch: typeof fetch;
  private readonly now: () => number;
  /** How many tokens were fetched (for tests and the log). */
  fetched = 0;

  constructor(private readonly opts: ServiceTokenOptions) {
    this.fetch = opts.fetch ?? globalThis.fetch;
    this.now = opts.now ?? Date.now;
  }

  /** A token valid for a while yet; concurrent callers share one fetch. */
  async get(): Promise<string> {
    if (this.current && this.now() < this.current.renewAt) return this.current.token;
    this.pending ??= this.request().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /** Forget the token (the API refused it): the next get fetches a new one. */
  invalidate(): void {
    this.current = null;
  }

  private async secret(): Promise<string> {
    if (this.opts.clientSecretFile) {
      try {
        return (await readFile(this.opts.clientSecretFile, 'utf8')).replace(/\r?\n$/, '');
      } catch (err) {
        throw new ServiceTokenError(
          `cannot read PROCESSOR_OIDC_CLIENT_SECRET_FILE: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
          'unreadable',
        );
      }
    }
    return this.opts.clientSecret ?? '';
  }

  private async request(): Promise<string> {
    const started = this.now();
    // client_secret_basic, form-encoded id and secret (RFC 6749 2.3.1), as Keycloak and Lookout's IdP take it.
    const basic = Buffer.from(`${encodeURIComponent(this.opts.clientId)}:${encodeURIComponent(await this.secret())}`).toString('base64');
    let res: Response;
    try {
      res = await this.fetch(this.opts.tokenUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (err) {
      throw new ServiceTokenError(`token endpoint unreachable: ${err instanceof Error ? err.message : String(err)}`, 'unreachable');
    }
    const body = (await res.json().catch(() => null)) as { access_token?: unknown; expires_in?: unknown; error?: unknown } | null;
    if (!res.ok || typeof body?.access_token !== 'string') {
      // The endpoint's error code only when it is one (RFC 6749 5.2), never free text of the answer.
      const why = typeof body?.error === 'string' && /^[a-z_]{1,40}$/.test(body.error) ? body.error : `status ${res.status}`;
      if (res.status >= 500) throw new ServiceTokenError(`token endpoint failed (${why})`, 'unreachable');
      throw new ServiceTokenError(
        `the token endpoint refused the processor's client credentials (${why}): check PROCESSOR_OIDC_CLIENT_ID and PROCESSOR_OIDC_CLIENT_SECRET (or _FILE)`,
        'refused',
      );
    }
    // No expires_in: assume a minute, so the token is renewed well before a typical lifetime ends.
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 60) * 1000;
    const renewIn = Math.max(0, lifetimeMs - Math.max(RENEW_MIN_MS, lifetimeMs * RENEW_SHARE));
    this.current = { token: body.access_token, renewAt: started + renewIn };
    this.fetched++;
    return body.access_token;
  }
}

/** A fetch that sends the service token, and on a 401 fetches a new one and tries once more. */
export function fetchWithServiceToken(token: ServiceToken, inner: typeof fetch = globalThis.fetch) {
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    const send = async () => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${await token.get()}`);
      return inner(url, { ...init, headers });
    };
    const first = await send();
    if (first.status !== 401) return first;
    await first.body?.cancel();
    token.invalidate();
    return send();
  };
}

/**
 * The processor's fetch for the backend, with the service token when PROCESSOR_OIDC_TOKEN_URL is set, and that
 * token (the poller gets it first, so a refused secret is told apart from an unreachable backend).
 */
export function serviceFetch(
  s: Pick<
    ProcessorSettings,
    | 'processorOidcTokenUrl'
    | 'processorOidcClientId'
    | 'processorOidcClientSecret'
    | 'processorOidcClientSecretFile'
    | 'remoteDetectorTimeoutMs'
  >,
): { fetch: (url: string, init?: RequestInit) => Promise<Response>; token: ServiceToken } | undefined {
  if (!s.processorOidcTokenUrl) return undefined;
  const token = new ServiceToken({
    tokenUrl: s.processorOidcTokenUrl,
    clientId: s.processorOidcClientId,
    clientSecret: s.processorOidcClientSecret || undefined,
    clientSecretFile: s.processorOidcClientSecretFile || undefined,
    timeoutMs: s.remoteDetectorTimeoutMs,
  });
  return { fetch: fetchWithServiceToken(token), token };
}
