/**
 * Client of an OpenAI-compatible LLM endpoint (llama.cpp server, vLLM, OpenAI): `POST /v1/chat/completions`,
 * plain or streamed as server-sent events, and `GET /v1/models` for the status check.
 *
 * Every failure is an ApiError: unreachable `llm_unavailable` (503), too slow `llm_timeout` (504), an upstream
 * error status or a reply that is not OpenAI-shaped `llm_bad_gateway` (502), no free slot `llm_busy` (429).
 * The API key and the service-account token never reach a message, a log line or a response: every message
 * this module builds is passed through `redact`, and upstream text is dropped for auth failures.
 *
 * The parts live in llm/: credentials.ts (endpoint and Authorization), gate.ts (one request upstream at a time,
 * a bounded queue), deadline.ts (timeouts and cancellation) and sse.ts (the event stream).
 */
import type { ChatMessage } from '../../shared/chat/prompt.js';
import type { ErrorCode } from '../../shared/api/errors.js';
import { ApiError } from '../http/errors.js';
import { fetchIdempotent } from '../http/idempotent-fetch.js';
import type { Logger } from '../logger.js';
import { Credentials, parseEndpoint } from './llm/credentials.js';
import { Deadline } from './llm/deadline.js';
import { Gate } from './llm/gate.js';
import { SseParser } from './llm/sse.js';

export { parseEndpoint } from './llm/credentials.js';
export { SseParser } from './llm/sse.js';

export interface LlmClientOptions {
  /** Base URL (`http://llm:8080`, `http://llm:8080/v1/` and `.../v1/chat/completions` all work). */
  endpoint: string;
  /** Model name sent upstream; empty: the first model `GET /v1/models` lists. */
  model?: string;
  /** Static API key (CHAT_API_KEY); wins over `tokenFile`. */
  apiKey?: string;
  /** File holding a bearer token (CHAT_TOKEN_FILE, e.g. the projected service-account token); re-read when it changes. */
  tokenFile?: string;
  maxTokens?: number;
  temperature?: number;
  /** Whole exchange for a plain completion; time to the first byte and longest silence for a stream. */
  timeoutMs?: number;
  /** Requests upstream at once (the LLM runtime has 1 parallel slot); more wait in a queue. */
  maxConcurrent?: number;
  /** Requests allowed to wait for a slot; beyond that `llm_busy`. */
  maxQueue?: number;
  log?: Logger;
}

export interface CompletionOptions {
  /** Cancels the upstream request (e.g. the browser went away); the rejection is the signal's reason. */
  signal?: AbortSignal;
  maxTokens?: number;
  temperature?: number;
}

export interface LlmCompletion {
  text: string;
  /** `stop`, `length` (cut at max_tokens), ...; null when the server did not say. */
  finishReason: string | null;
  /** The model that answered, as the server names it. */
  model: string | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

/** Text pieces of a streamed reply, in order. Iterate it to the end or call `cancel()`: either frees the slot. */
export interface LlmStream extends AsyncIterable<string> {
  cancel(): Promise<void>;
}

const REDACTED = '[redacted]';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The message of an OpenAI-style error body (`{error:{message}}`, `{error:"..."}`, `{message}`), if any. */
function upstreamMessage(text: string): string | null {
  try {
    const v = JSON.parse(text) as unknown;
    if (!isObj(v)) return null;
    const e = v.error;
    const m = isObj(e) ? e.message : typeof e === 'string' ? e : v.message;
    return typeof m === 'string' && m.trim() ? m.trim().slice(0, 200) : null;
  } catch {
    return null;
  }
}

export class LlmClient {
  /** The endpoint's base URL without credentials: safe to show and log. */
  readonly endpoint: string;
  private readonly base: string;
  private readonly configuredModel: string;
  private discoveredModel: string | null = null;
  private readonly credentials: Credentials;
  private readonly gate: Gate;
  readonly timeoutMs: number;
  private readonly maxTokens: number;
  private readonly temperature: number;
  private readonly log?: Logger;

  constructor(opts: LlmClientOptions) {
    const ep = parseEndpoint(opts.endpoint);
    this.base = ep.base;
    this.endpoint = ep.display;
    this.configuredModel = opts.model?.trim() ?? '';
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.maxTokens = opts.maxTokens ?? 512;
    this.temperature = opts.temperature ?? 0.7;
    if (!(this.timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');
    if (!(Number.isInteger(this.maxTokens) && this.maxTokens > 0)) throw new RangeError('maxTokens must be a positive integer');
    if (!(this.temperature >= 0 && this.temperature <= 2)) throw new RangeError('temperature must be between 0 and 2');
    const apiKey = opts.apiKey?.trim() || undefined;
    const tokenFile = opts.tokenFile?.trim() || undefined;
    this.credentials = new Credentials(apiKey, tokenFile, ep.basic, opts.log);
    this.gate = new Gate(Math.max(1, opts.maxConcurrent ?? 1), Math.max(0, opts.maxQueue ?? 4));
    this.log = opts.log;
  }

  /** The model requests name: the configured one, else the one the server listed (null until known). */
  get model(): string | null {
    return this.configuredModel || this.discoveredModel;
  }

  /** Removes every secret this client holds from a text. */
  redact(text: string): string {
    let out = text;
    for (const s of this.credentials.secrets()) out = out.split(s).join(REDACTED);
    return out;
  }

  private error(code: ErrorCode, message: string, details?: unknown): ApiError {
    return new ApiError(code, this.redact(message), details);
  }

  /** The reply to `messages`, as text. */
  async complete(messages: ChatMessage[], opts: CompletionOptions = {}): Promise<string> {
    return (await this.completion(messages, opts)).text;
  }

  /** The reply to `messages`, with why it ended and the token usage. */
  async completion(messages: ChatMessage[], opts: CompletionOptions = {}): Promise<LlmCompletion> {
    return this.logged(async () => {
      const release = await this.acquire(opts.signal);
      try {
        const what = 'the chat completion request';
        const body = await this.body(messages, false, opts);
        const { res, deadline } = await this.request('POST', '/v1/chat/completions', what, { body, signal: opts.signal });
        try {
          return this.parseCompletion(await this.readText(res, deadline, what));
        } finally {
          deadline.done();
        }
      } finally {
        release();
      }
    });
  }

  /**
   * Starts a streamed reply. Resolves once the server has accepted the request (so connection, auth and status
   * errors reject here, before anything was sent to a browser); errors later in the stream are thrown by the
   * iterator. The timeout bounds the wait for the first byte and every silence after it.
   */
  async stream(messages: ChatMessage[], opts: CompletionOptions = {}): Promise<LlmStream> {
    return this.logged(async () => {
      const release = await this.acquire(opts.signal);
      // Set once the reply is under way; a timeout before that is handled by request() itself.
      let cleanup: (() => void) | undefined;
      let res: Response;
      let deadline: Deadline;
      try {
        const body = await this.body(messages, true, opts);
        ({ res, deadline } = await this.request('POST', '/v1/chat/completions', 'the streamed chat completion request', {
          body,
          accept: 'text/event-stream',
          signal: opts.signal,
          // A consumer that stops reading must not hold the slot past the timeout.
          onTimeout: () => cleanup?.(),
        }));
      } catch (err) {
        release();
        throw err;
      }
      if (!res.body) {
        deadline.done();
        release();
        throw this.error(
          'llm_bad_gateway',
          `The LLM endpoint at ${this.endpoint} answered the streamed chat completion request with an empty body.`,
        );
      }
      const reader = res.body.getReader();
      let closed = false;
      cleanup = () => {
        if (closed) return;
        closed = true;
        deadline.done();
        release();
        // Closes the upstream connection when the consumer stops early; harmless after the end.
        reader.cancel().catch(() => {});
      };
      const done = cleanup;
      const json = /application\/json/i.test(res.headers.get('content-type') ?? '');
      const gen = json ? this.wholeReply(reader, deadline, done) : this.pieces(reader, deadline, done);
      return {
        [Symbol.asyncIterator]: () => gen,
        cancel: async () => {
          done();
          await gen.return(undefined);
        },
      };
    });
  }

  /** The model ids the server lists (`GET /v1/models`); for the status check, so not queued behind chats. */
  async listModels(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<string[]> {
    const what = 'the model list request';
    const { res, deadline } = await this.request('GET', '/v1/models', what, { signal: opts.signal, timeoutMs: opts.timeoutMs });
    let text: string;
    try {
      text = await this.readText(res, deadline, what);
    } finally {
      deadline.done();
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.error('llm_bad_gateway', `The LLM endpoint at ${this.endpoint} sent malformed JSON in reply to ${what}.`);
    }
    const data = isObj(value) ? value.data : undefined;
    if (!Array.isArray(data) || !data.every((m) => isObj(m) && typeof m.id === 'string')) {
      throw this.error(
        'llm_bad_gateway',
        `The LLM endpoint at ${this.endpoint} answered ${what} with something that is not an OpenAI model list (no data[].id).`,
      );
    }
    const ids = data.map((m) => (m as { id: string }).id);
    if (!this.configuredModel && ids.length) this.discoveredModel = ids[0];
    return ids;
  }

  /** Logs a failure once, in words that hold no secret, and passes it on. */
  private async logged<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ApiError) this.log?.warn(`chat: ${err.code}: ${err.message}`);
      throw err;
    }
  }

  private acquire(signal?: AbortSignal): Promise<() => void> {
    return this.gate.acquire(
      this.timeoutMs,
      (why) => this.error('llm_busy', `The LLM is busy answering other questions (${why}); try again shortly.`),
      signal,
    );
  }

  private async body(messages: ChatMessage[], stream: boolean, opts: CompletionOptions): Promise<string> {
    let model = this.model;
    if (!model) {
      const ids = await this.listModels({ signal: opts.signal });
      if (!ids.length) throw this.error('llm_bad_gateway', `The LLM endpoint at ${this.endpoint} lists no models; set CHAT_MODEL.`);
      model = ids[0];
    }
    return JSON.stringify({
      model,
      messages,
      max_tokens: opts.maxTokens ?? this.maxTokens,
      temperature: opts.temperature ?? this.temperature,
      stream,
    });
  }

  /** Sends one request under a deadline; resolves with a 2xx response whose body is still to be read. */
  private async request(
    method: 'GET' | 'POST',
    path: string,
    what: string,
    opts: { body?: string; accept?: string; signal?: AbortSignal; onTimeout?: () => void; timeoutMs?: number },
  ): Promise<{ res: Response; deadline: Deadline }> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const auth = await this.credentials.header();
    if (auth) headers.authorization = auth;
    const deadline = new Deadline(timeoutMs, opts.signal, opts.onTimeout);
    let res: Response;
    try {
      res = await (method === 'GET' ? fetchIdempotent : fetch)(this.base + path, {
        method,
        headers,
        body: opts.body,
        signal: deadline.signal,
      });
    } catch (err) {
      deadline.done();
      throw this.failure(err, what, deadline, timeoutMs, 'connect');
    }
    if (res.status < 200 || res.status > 299) {
      try {
        throw await this.statusError(res, what, deadline);
      } finally {
        deadline.done();
      }
    }
    return { res, deadline };
  }

  private async readText(res: Response, deadline: Deadline, what: string): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      throw this.failure(err, what, deadline, this.timeoutMs, 'body');
    }
  }

  private async statusError(res: Response, what: string, deadline: Deadline): Promise<ApiError> {
    const status = res.status;
    const details = { upstream_status: status };
    if (status === 401 || status === 403) {
      // Servers echo (parts of) the rejected key in these bodies: drop them.
      res.body?.cancel().catch(() => {});
      return this.error(
        'llm_bad_gateway',
        `The LLM endpoint at ${this.endpoint} rejected the credentials (HTTP ${status}) for ${what}; check CHAT_API_KEY or CHAT_TOKEN_FILE.`,
        details,
      );
    }
    let text = '';
    try {
      text = await res.text();
    } catch {
      if (deadline.cancelled) throw deadline.signal.reason;
      // The status alone says enough.
    }
    const reason = upstreamMessage(text);
    if (status === 429)
      return this.error(
        'llm_busy',
        `The LLM endpoint at ${this.endpoint} is busy (HTTP 429)${reason ? `: ${reason}` : ''}; try again shortly.`,
        details,
      );
    return this.error(
      'llm_bad_gateway',
      `The LLM endpoint at ${this.endpoint} answered HTTP ${status} to ${what}${reason ? `: ${reason}` : ''}.`,
      details,
    );
  }

  /** A thrown fetch/read error as an ApiError; a caller's cancellation is passed on as is. */
  private failure(err: unknown, what: string, deadline: Deadline, timeoutMs: number, phase: 'connect' | 'body' | 'stream'): unknown {
    if (err instanceof ApiError) return err;
    if (deadline.timedOut) {
      return this.error(
        'llm_timeout',
        phase === 'stream'
          ? `The LLM endpoint at ${this.endpoint} sent nothing more of ${what} for ${timeoutMs} ms.`
          : `The LLM endpoint at ${this.endpoint} did not answer ${what} within ${timeoutMs} ms.`,
      );
    }
    if (deadline.cancelled) return deadline.signal.reason ?? err;
    const e = err as { message?: string; cause?: { code?: string; message?: string } };
    const code = e?.cause?.code;
    if (phase !== 'connect') {
      return this.error(
        'llm_bad_gateway',
        `The LLM endpoint at ${this.endpoint} broke off ${what} (${code ?? e?.cause?.message ?? e?.message ?? 'connection closed'}).`,
      );
    }
    if (code === 'ECONNREFUSED')
      return this.error('llm_unavailable', `The LLM endpoint at ${this.endpoint} refused the connection for ${what}; is it running?`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      return this.error('llm_unavailable', `The host of the LLM endpoint ${this.endpoint} cannot be resolved.`);
    return this.error(
      'llm_unavailable',
      `The LLM endpoint at ${this.endpoint} could not be reached for ${what} (${code ?? e?.cause?.message ?? e?.message ?? String(err)}).`,
    );
  }

  private parseCompletion(text: string): LlmCompletion {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.error('llm_bad_gateway', `The LLM endpoint at ${this.endpoint} sent malformed JSON as its chat completion.`);
    }
    const choice = isObj(value) && Array.isArray(value.choices) ? value.choices[0] : undefined;
    const message = isObj(choice) ? choice.message : undefined;
    const content = isObj(message) ? message.content : undefined;
    if (typeof content !== 'string') {
      const reason = isObj(value) ? upstreamMessage(JSON.stringify(value)) : null;
      throw this.error(
        'llm_bad_gateway',
        `The LLM endpoint at ${this.endpoint} sent a reply that is not an OpenAI chat completion (no choices[0].message.content)${reason ? `: ${reason}` : ''}.`,
      );
    }
    const v = value as Obj;
    const usage = isObj(v.usage) ? (v.usage as LlmCompletion['usage']) : undefined;
    return {
      text: content,
      finishReason: typeof (choice as Obj).finish_reason === 'string' ? ((choice as Obj).finish_reason as string) : null,
      model: typeof v.model === 'string' ? v.model : null,
      ...(usage ? { usage } : {}),
    };
  }

  /** The stream's text pieces. */
  private async *pieces(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    deadline: Deadline,
    cleanup: () => void,
  ): AsyncGenerator<string, void, undefined> {
    const what = 'the streamed reply';
    const parser = new SseParser();
    const decoder = new TextDecoder();
    let finished = false;
    try {
      for (;;) {
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (err) {
          throw this.failure(err, what, deadline, this.timeoutMs, 'stream');
        }
        if (deadline.timedOut) throw this.failure(new Error('timed out'), what, deadline, this.timeoutMs, 'stream');
        deadline.arm(); // the timeout is on silence, not on the whole answer
        let events: string[];
        try {
          events = parser.push(r.done ? decoder.decode() : decoder.decode(r.value, { stream: true }), r.done);
        } catch (err) {
          throw this.error(
            'llm_bad_gateway',
            `The LLM endpoint at ${this.endpoint} sent a broken event stream (${(err as Error).message}).`,
          );
        }
        for (const data of events) {
          if (data.trim() === '[DONE]') return;
          const chunk = this.parseChunk(data);
          if (chunk.finished) finished = true;
          if (chunk.content) yield chunk.content;
        }
        if (r.done) {
          // Without [DONE] or a finish_reason the reply may be cut short: say so rather than pass it as whole.
          if (!finished) throw this.error('llm_bad_gateway', `The LLM endpoint at ${this.endpoint} ended ${what} before it was complete.`);
          return;
        }
      }
    } catch (err) {
      if (err instanceof ApiError) this.log?.warn(`chat: ${err.code}: ${err.message}`);
      throw err;
    } finally {
      cleanup();
    }
  }

  /** A server that ignored `stream: true` and sent one JSON completion: one piece. */
  private async *wholeReply(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    deadline: Deadline,
    cleanup: () => void,
  ): AsyncGenerator<string, void, undefined> {
    try {
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (err) {
          throw this.failure(err, 'the chat completion', deadline, this.timeoutMs, 'body');
        }
        if (r.done) break;
        text += decoder.decode(r.value, { stream: true });
      }
      text += decoder.decode();
      const { text: reply } = this.parseCompletion(text);
      if (reply) yield reply;
    } catch (err) {
      if (err instanceof ApiError) this.log?.warn(`chat: ${err.code}: ${err.message}`);
      throw err;
    } finally {
      cleanup();
    }
  }

  private parseChunk(data: string): { content?: string; finished: boolean } {
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      throw this.error('llm_bad_gateway', `The LLM endpoint at ${this.endpoint} sent a malformed event in the streamed reply.`);
    }
    if (!isObj(value))
      throw this.error('llm_bad_gateway', `The LLM endpoint at ${this.endpoint} sent an event that is not an OpenAI chunk.`);
    if (value.error !== undefined) {
      const reason = upstreamMessage(data);
      throw this.error(
        'llm_bad_gateway',
        `The LLM endpoint at ${this.endpoint} reported an error in the streamed reply${reason ? `: ${reason}` : ''}.`,
      );
    }
    // Chunks without choices (e.g. a final usage chunk) carry no text.
    const choice = Array.isArray(value.choices) ? value.choices[0] : undefined;
    if (!isObj(choice)) return { finished: false };
    const delta = choice.delta;
    const content = isObj(delta) && typeof delta.content === 'string' ? delta.content : undefined;
    return { content, finished: typeof choice.finish_reason === 'string' };
  }
}
