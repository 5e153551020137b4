/**
 * Whether chat can work, checked in the background (never per request) so `GET /api/chat/status` answers at
 * once: `GET {endpoint}/v1/models` every `intervalMs`. Also the guard the chat route calls first.
 */
import type { ChatStatusBody } from '../../shared/api/index.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { PeriodicCheck } from '../periodic-check.js';
import type { LlmClient } from './llm-client.js';

export interface ChatStatusOptions {
  /** CHAT_ENABLED. */
  enabled: boolean;
  /** Null when no endpoint is configured (CHAT_ENDPOINT empty). */
  client: LlmClient | null;
  /** Time between checks (e.g. 30 000). */
  intervalMs: number;
  /** Timeout of one check; defaults to the smaller of 5 s and the client's timeout. */
  checkTimeoutMs?: number;
  log?: Logger;
}

export class ChatStatus {
  private reachable = false;
  private reason: string;
  private models: string[] | undefined;
  private checkedAt: string | null = null;
  private readonly periodic: PeriodicCheck;

  constructor(private readonly opts: ChatStatusOptions) {
    this.reason = !opts.enabled
      ? 'chat is switched off (CHAT_ENABLED=false)'
      : !opts.client
        ? 'no language model is configured (set CHAT_ENDPOINT or CHAT_MODEL_PATH)'
        : 'not checked yet';
    this.periodic = new PeriodicCheck(opts.intervalMs, () => this.checkOnce());
  }

  private get active(): boolean {
    return this.opts.enabled && this.opts.client !== null;
  }

  /** Checks now and then every `intervalMs`; resolves after the first check (it never rejects). */
  start(): Promise<void> {
    return this.active ? this.periodic.start() : Promise.resolve();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** Checks now (one check at a time; concurrent callers share it). Never rejects. */
  check(): Promise<void> {
    return this.active ? this.periodic.now() : Promise.resolve();
  }

  private async checkOnce(): Promise<void> {
    const client = this.opts.client;
    if (!client) return;
    const before = this.reachable;
    const timeoutMs = this.opts.checkTimeoutMs ?? Math.min(5000, client.timeoutMs);
    try {
      this.models = await client.listModels({ timeoutMs });
      this.reachable = true;
      this.reason = '';
    } catch (err) {
      this.reachable = false;
      this.models = undefined;
      this.reason = err instanceof Error ? client.redact(err.message) : 'the check failed';
    }
    this.checkedAt = new Date().toISOString();
    if (before !== this.reachable) {
      const what = this.reachable ? 'reachable' : `unreachable (${this.reason})`;
      this.opts.log?.[this.reachable ? 'info' : 'warn'](`chat: LLM endpoint ${client.endpoint} is ${what}`);
    }
  }

  /** The body of `GET /api/chat/status`. */
  status(): ChatStatusBody {
    const client = this.opts.client;
    const endpoint = client?.endpoint ?? null;
    const model = client?.model ?? null;
    const body: ChatStatusBody = {
      // Switched on but with nothing to answer is not enabled: the original's clients would offer a chat that always fails.
      enabled: this.active,
      switched_on: this.opts.enabled,
      endpoint_configured: client !== null,
      endpoint,
      model,
      reachable: this.active && this.reachable,
      checked_at: this.checkedAt,
      model_endpoint: endpoint,
      model_name: model,
    };
    if (!body.reachable) body.reason = this.reason;
    if (this.models && this.active) body.models = this.models.slice(0, 20);
    return body;
  }

  /**
   * Throws `chat_disabled` or `chat_not_configured` (both 503) when chat cannot be used at all; returns the
   * client otherwise. A last check that failed does not refuse: the request itself says what is wrong now.
   */
  requireClient(): LlmClient {
    if (!this.opts.enabled) throw new ApiError('chat_disabled', 'Chat is switched off on this server (CHAT_ENABLED=false).');
    if (!this.opts.client) throw new ApiError('chat_not_configured', 'Chat needs an LLM endpoint; none is configured (set CHAT_ENDPOINT).');
    return this.opts.client;
  }
}
