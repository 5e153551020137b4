/**
 * The event processor's state as the API server relays it (`GET /api/processor/status`): its `GET /ready` is
 * read in the background every `intervalMs` (never per request), so the route answers the last check at once.
 */
import { processorReady, type ProcessorReady, type ProcessorStatusResponse } from '../../shared/api/index.js';
import { fetchIdempotent } from '../http/idempotent-fetch.js';
import type { Logger } from '../logger.js';
import { PeriodicCheck } from '../periodic-check.js';

export interface ProcessorStatusOptions {
  /** PROCESSOR_URL; empty: not configured. */
  url: string;
  /** Time between checks (PROCESSOR_CHECK_INTERVAL_MS). */
  intervalMs: number;
  /** Timeout of one check; 2 s by default (the processor answers from memory). */
  timeoutMs?: number;
  log?: Logger;
}

interface Target {
  /** `{base}/ready`, without credentials (fetch refuses a URL that has them). */
  readyUrl: string;
  /** The base URL without credentials, query or fragment: safe to show and log. */
  display: string;
  authorization?: string;
  /** Values to remove from any error text. */
  secrets: string[];
}

function parseTarget(raw: string): Target | null {
  if (!raw.trim()) return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    // Never echoes the value: it may hold credentials.
    throw new TypeError('PROCESSOR_URL is not a valid URL');
  }
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  // The base URL is documented; `/ready` itself is accepted too.
  const display = url.origin + url.pathname.replace(/\/+$/, '').replace(/\/ready$/, '');
  const target: Target = { readyUrl: `${display}/ready`, display, secrets: [] };
  if (user || password) {
    // Userinfo in PROCESSOR_URL is sent as Basic auth, as a browser would, and never shown.
    const basic = Buffer.from(`${user}:${password}`).toString('base64');
    target.authorization = `Basic ${basic}`;
    target.secrets = [basic, `${user}:${password}`, password, url.username, url.password].filter((s) => s.length >= 3);
  }
  return target;
}

/** The reason a fetch failed, from its cause's code (ECONNREFUSED, ENOTFOUND, ...) where it has one. */
function fetchFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return `cannot be reached (${cause.code})`;
  if (typeof cause?.message === 'string') return `cannot be reached (${cause.message})`;
  return `cannot be reached (${err instanceof Error ? err.message : String(err)})`;
}

export class ProcessorStatus {
  private readonly target: Target | null;
  private readonly timeoutMs: number;
  private reachable = false;
  private error: string | null = null;
  private processor: ProcessorReady | null = null;
  private checkedAt: string | null = null;
  private readonly periodic: PeriodicCheck;

  constructor(private readonly opts: ProcessorStatusOptions) {
    this.target = parseTarget(opts.url);
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.periodic = new PeriodicCheck(opts.intervalMs, () => this.checkOnce());
  }

  get configured(): boolean {
    return this.target !== null;
  }

  /** Checks now and then every `intervalMs`; resolves after the first check (it never rejects). */
  start(): Promise<void> {
    return this.target ? this.periodic.start() : Promise.resolve();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Checks now (one check at a time; concurrent callers share it). Never rejects. */
  check(): Promise<void> {
    return this.target ? this.periodic.now() : Promise.resolve();
  }

  private async checkOnce(): Promise<void> {
    const target = this.target;
    if (!target) return;
    const first = this.checkedAt === null;
    const before = this.reachable;
    try {
      this.processor = await this.read(target);
      this.reachable = true;
      this.error = null;
    } catch (err) {
      this.reachable = false;
      this.processor = null;
      this.error = this.redact(err instanceof Error ? err.message : String(err), target);
    }
    this.checkedAt = new Date().toISOString();
    if (first || before !== this.reachable) {
      const what = this.reachable ? 'reachable' : `not readable: ${this.error}`;
      this.opts.log?.[this.reachable ? 'info' : 'warn'](`event processor at ${target.display} is ${what}`);
    }
  }

  /** The processor's /ready body; throws with a message fit to show when it cannot be read. */
  private async read(target: Target): Promise<ProcessorReady> {
    let res: Response;
    try {
      res = await fetchIdempotent(target.readyUrl, {
        headers: { accept: 'application/json', ...(target.authorization ? { authorization: target.authorization } : {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      throw new Error(fetchFailure(err, this.timeoutMs));
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new Error(fetchFailure(err, this.timeoutMs));
    }
    // 503 is the processor saying "not ready", with the same body.
    if (res.status !== 200 && res.status !== 503) throw new Error(`unexpected answer (HTTP ${res.status})`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('unexpected answer');
    }
    const parsed = processorReady.safeParse(body);
    if (!parsed.success) throw new Error('unexpected answer');
    return parsed.data;
  }

  private redact(text: string, target: Target): string {
    let out = text;
    for (const s of target.secrets) out = out.split(s).join('[redacted]');
    return out;
  }

  /** The body of `GET /api/processor/status`. */
  status(): ProcessorStatusResponse {
    return {
      configured: this.target !== null,
      reachable: this.target !== null && this.reachable,
      checked_at: this.checkedAt,
      error: this.target ? this.error : null,
      processor: this.target && this.reachable ? this.processor : null,
    };
  }
}
