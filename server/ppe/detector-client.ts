/**
 * Client of the PPE detector (PPE_ENDPOINT): `POST {endpoint}/v1/predict` with the frame as raw JPEG (header
 * `X-Confidence`), answered `{ detections: [{ class_id, class_name, confidence, bbox: {x1,y1,x2,y2} }], count }`;
 * and `GET {endpoint}/health`, read in the background every PPE_CHECK_INTERVAL_MS (never per request).
 *
 * Every failure of a prediction is an ApiError, never a 500: unreachable or not ready (its own 503)
 * `ppe_detector_unavailable` (503), another error
 * status or an answer not of that shape `ppe_detector_failed` (502), no answer within the timeout
 * `ppe_detector_timeout` (504). Credentials in the endpoint (`http://user:pass@host`) are sent as Basic auth and
 * never shown: messages, logs and the status name the endpoint without them.
 */
import { z } from 'zod';
import type { PpeDetection } from '../../shared/ppe/rule.js';
import { ApiError } from '../http/errors.js';
import { fetchIdempotent } from '../http/idempotent-fetch.js';
import type { Logger } from '../logger.js';
import { PeriodicCheck } from '../periodic-check.js';

/** The detector's answer as the contract writes it. */
export const predictAnswer = z.object({
  detections: z.array(
    z.object({
      class_id: z.number().int(),
      class_name: z.string(),
      confidence: z.number().min(0).max(1),
      bbox: z.object({ x1: z.number(), y1: z.number(), x2: z.number(), y2: z.number() }),
    }),
  ),
  count: z.number().int().min(0),
});

export interface DetectorEndpoint {
  /** Base URL without credentials, query or fragment, no trailing slash: safe to show and log. */
  display: string;
  authorization?: string;
  /** Values to remove from any error text. */
  secrets: string[];
}

/** Parses PPE_ENDPOINT; `/v1/predict` or `/health` on its end are accepted too. The message never echoes the value. */
export function parseDetectorEndpoint(raw: string): DetectorEndpoint | null {
  if (!raw.trim()) return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new TypeError('PPE_ENDPOINT is not a valid URL');
  }
  const display =
    url.origin +
    url.pathname
      .replace(/\/+$/, '')
      .replace(/\/(v1\/predict|health)$/, '')
      .replace(/\/+$/, '');
  const endpoint: DetectorEndpoint = { display, secrets: [] };
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  if (user || password) {
    const basic = Buffer.from(`${user}:${password}`).toString('base64');
    endpoint.authorization = `Basic ${basic}`;
    endpoint.secrets = [basic, `${user}:${password}`, password, url.username, url.password].filter((s) => s.length >= 3);
  }
  return endpoint;
}

export interface PpeDetectorClientOptions {
  /** PPE_ENDPOINT (may be empty: not configured). */
  endpoint: string;
  /** PPE_TIMEOUT_MS: the whole exchange of one prediction. */
  timeoutMs: number;
  /** PPE_CHECK_INTERVAL_MS. */
  checkIntervalMs: number;
  /** Timeout of one health check; the smaller of 5 s and `timeoutMs` by default. */
  checkTimeoutMs?: number;
  log: Logger;
}

export interface DetectorHealth {
  reachable: boolean;
  checkedAt: string | null;
  /** Why checks cannot run, in words that follow "the PPE detector" (null when they can, or before the first check). */
  error: string | null;
  /** The detector answered its last health check (reachable, or up with an error or its model not loaded). */
  answered: boolean;
}

type FetchFailure = { kind: 'timeout' } | { kind: 'unreachable'; why: string };

/** The `ready` flag of a /health body, when it has one. */
function readyFlag(text: string): boolean | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && typeof (v as { ready?: unknown }).ready === 'boolean'
      ? (v as { ready: boolean }).ready
      : undefined;
  } catch {
    return undefined;
  }
}

function fetchFailure(err: unknown): FetchFailure {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return { kind: 'timeout' };
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const why =
    typeof cause?.code === 'string'
      ? cause.code
      : typeof cause?.message === 'string'
        ? cause.message
        : err instanceof Error
          ? err.message
          : String(err);
  return { kind: 'unreachable', why };
}

export class PpeDetectorClient {
  readonly endpoint: DetectorEndpoint | null;
  private readonly periodic: PeriodicCheck;
  private health: DetectorHealth = { reachable: false, checkedAt: null, error: null, answered: false };

  constructor(private readonly opts: PpeDetectorClientOptions) {
    this.endpoint = parseDetectorEndpoint(opts.endpoint);
    this.periodic = new PeriodicCheck(opts.checkIntervalMs, () => this.checkOnce());
  }

  /** Checks now and then every interval (resolves after the first check, never rejects); nothing without an endpoint. */
  start(): Promise<void> {
    return this.endpoint ? this.periodic.start() : Promise.resolve();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Checks now (one at a time; concurrent callers share it). Never rejects. */
  check(): Promise<void> {
    return this.endpoint ? this.periodic.now() : Promise.resolve();
  }

  get lastHealth(): DetectorHealth {
    return this.health;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const auth = this.endpoint?.authorization;
    return auth ? { ...extra, authorization: auth } : extra;
  }

  redact(text: string): string {
    let out = text;
    for (const s of this.endpoint?.secrets ?? []) out = out.split(s).join('[redacted]');
    return out;
  }

  private async checkOnce(): Promise<void> {
    const endpoint = this.endpoint;
    if (!endpoint) return;
    const first = this.health.checkedAt === null;
    const before = this.health.reachable;
    const timeoutMs = this.opts.checkTimeoutMs ?? Math.min(5000, this.opts.timeoutMs);
    let error: string | null = null;
    let answered = false;
    try {
      // Asked once more when a pooled keep-alive socket was reset (server/http/idempotent-fetch.ts).
      const res = await fetchIdempotent(`${endpoint.display}/health`, {
        headers: this.headers({ accept: 'application/json' }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
      const text = await res.text();
      answered = true;
      if (res.status < 200 || res.status > 299) error = `answered its health check with HTTP ${res.status}`;
      // `npm run ppe-server` answers 200 `{ ready: false }` while its model loads: no checks can run yet.
      else if (readyFlag(text) === false) error = 'is up but its model is not loaded yet (its /health says ready: false)';
    } catch (err) {
      const f = fetchFailure(err);
      error = f.kind === 'timeout' ? `did not answer its health check within ${timeoutMs} ms` : `is unreachable (${f.why})`;
    }
    this.health = {
      reachable: error === null,
      checkedAt: new Date().toISOString(),
      error: error === null ? null : this.redact(error),
      answered,
    };
    if (first || before !== this.health.reachable) {
      const what = this.health.reachable ? 'is reachable' : this.health.error;
      this.opts.log[this.health.reachable ? 'info' : 'warn'](`ppe: the detector at ${endpoint.display} ${what}`);
    }
  }

  /** The detector's detections on one JPEG frame. Throws ApiError (ppe_not_configured, ppe_detector_*). */
  async predict(jpeg: Uint8Array, confidence: number): Promise<PpeDetection[]> {
    const endpoint = this.endpoint;
    if (!endpoint) throw new ApiError('ppe_not_configured', 'PPE checks need a detector; none is configured (set PPE_ENDPOINT).');
    const where = `The PPE detector at ${endpoint.display}`;
    const timeoutMs = this.opts.timeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const timedOut = () => new ApiError('ppe_detector_timeout', `${where} did not answer within ${timeoutMs} ms (PPE_TIMEOUT_MS).`);
    let res: Response;
    try {
      res = await fetch(`${endpoint.display}/v1/predict`, {
        method: 'POST',
        headers: this.headers({ 'content-type': 'image/jpeg', accept: 'application/json', 'x-confidence': String(confidence) }),
        body: jpeg,
        signal,
        redirect: 'error',
      });
    } catch (err) {
      const f = fetchFailure(err);
      if (f.kind === 'timeout') throw timedOut();
      throw new ApiError('ppe_detector_unavailable', this.redact(`${where} cannot be reached (${f.why}); is it running?`));
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (fetchFailure(err).kind === 'timeout' || signal.aborted) throw timedOut();
      throw new ApiError('ppe_detector_failed', `${where} broke off its answer.`);
    }
    // 503 is the detector saying it cannot serve yet (`npm run ppe-server` while its model loads): unavailable.
    if (res.status === 503) throw new ApiError('ppe_detector_unavailable', `${where} is not ready (HTTP 503).`, { upstream_status: 503 });
    if (res.status < 200 || res.status > 299) {
      throw new ApiError('ppe_detector_failed', `${where} answered HTTP ${res.status}.`, { upstream_status: res.status });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError('ppe_detector_failed', `${where} answered with something that is not JSON.`);
    }
    const parsed = predictAnswer.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ApiError(
        'ppe_detector_failed',
        `${where} answered with something that is not a prediction (${issue.path.join('.') || 'the body'}: ${issue.message}).`,
      );
    }
    return parsed.data.detections.map((d) => ({
      class_id: d.class_id,
      class_name: d.class_name,
      confidence: d.confidence,
      // Corners in either order are the same box.
      bbox: {
        x1: Math.min(d.bbox.x1, d.bbox.x2),
        y1: Math.min(d.bbox.y1, d.bbox.y2),
        x2: Math.max(d.bbox.x1, d.bbox.x2),
        y2: Math.max(d.bbox.y1, d.bbox.y2),
      },
    }));
  }
}
