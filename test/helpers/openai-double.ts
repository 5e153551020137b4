/**
 * TEST DOUBLE of an OpenAI-compatible LLM server (llama.cpp server, vLLM, OpenAI itself). No real LLM can run
 * here, so tests talk to this instead: a real HTTP server on 127.0.0.1 speaking the protocol's wire format
 * (`POST /v1/chat/completions` plain and `stream: true` as server-sent events, `GET /v1/models`). Its replies
 * are canned, not generated. It records every request (method, path, headers, body) and can be switched to
 * misbehave: answer slowly, answer 500 or 401, answer a 200 that is not OpenAI-shaped, answer malformed JSON,
 * stall mid-stream, or stop listening altogether (connection refused) and come back on the same port.
 */
import { closeNow, listenLocal } from './double-server.js';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or the raw text when it is not JSON (undefined when empty). */
  body: unknown;
}

/**
 * How the double answers every endpoint:
 * - `ok`: a proper OpenAI answer;
 * - `slow`: a proper answer after `delayMs` (set it past the client's timeout);
 * - `error500` / `error401`: an OpenAI error body with that status (the 401 echoes the bearer token it got,
 *   as some servers do, so tests can check the client never passes it on);
 * - `not_openai`: 200 with JSON that is not OpenAI-shaped;
 * - `malformed`: 200 with broken JSON (and a broken event in a stream).
 */
export type DoubleMode = 'ok' | 'slow' | 'error500' | 'error401' | 'not_openai' | 'malformed';

export interface OpenAIDouble {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  mode: DoubleMode;
  /** Content of a non-streamed reply. */
  reply: string;
  /** Deltas of a streamed reply, in order. */
  pieces: string[];
  /** Model ids listed by /v1/models. */
  models: string[];
  /** Delay of `slow` mode, in milliseconds. */
  delayMs: number;
  /** When set, a stream sends this many pieces and then hangs (headers sent, nothing more). */
  stallAfterPieces: number | null;
  /** The chat completion requests received, in order. */
  completions(): RecordedRequest[];
  /** Stops listening (clients get connection refused); the port is kept for start(). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

const DEFAULTS = {
  reply: 'I see two people: alice and one unknown person.',
  pieces: ['I see ', 'two ', 'people', '.'],
  models: ['double-model'],
  delayMs: 5000,
};

export async function startOpenAIDouble(
  init: Partial<Pick<OpenAIDouble, 'mode' | 'reply' | 'pieces' | 'models' | 'delayMs'>> = {},
): Promise<OpenAIDouble> {
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const gone = (res: ServerResponse) => res.destroyed || !res.socket || res.socket.destroyed;
  const send = (res: ServerResponse, status: number, type: string, text: string) => {
    if (gone(res)) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const json = (res: ServerResponse, status: number, value: unknown) => send(res, status, 'application/json', JSON.stringify(value));

  const completion = (model: string) => ({
    id: 'chatcmpl-double',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: double.reply }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
  const chunk = (model: string, delta: object, finish: string | null) => ({
    id: 'chatcmpl-double',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  const stream = (res: ServerResponse, model: string) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (data: unknown) => !gone(res) && res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    if (double.mode === 'malformed') {
      event(chunk(model, { role: 'assistant', content: 'Hel' }, null));
      event('{"choices": [ {"delta": ');
      event('[DONE]');
      res.end();
      return;
    }
    event(chunk(model, { role: 'assistant' }, null));
    const pieces = double.pieces;
    const stallAt = double.stallAfterPieces;
    let i = 0;
    // One piece per tick, so the client really receives them as separate reads.
    const next = () => {
      if (gone(res)) return;
      if (stallAt !== null && i >= stallAt) return; // headers and some pieces sent, then silence
      if (i < pieces.length) {
        event(chunk(model, { content: pieces[i++] }, null));
        later(5, next);
        return;
      }
      event(chunk(model, {}, 'stop'));
      event('[DONE]');
      res.end();
    };
    next();
  };

  const handle = (method: string, path: string, headers: IncomingHttpHeaders, body: unknown, res: ServerResponse) => {
    const mode = double.mode;
    if (mode === 'error500') return json(res, 500, { error: { message: 'the double failed on purpose', type: 'server_error', code: 500 } });
    if (mode === 'error401') {
      const auth = headers.authorization ?? '(none)';
      return json(res, 401, {
        error: { message: `Incorrect API key provided: ${auth}`, type: 'invalid_request_error', code: 'invalid_api_key' },
      });
    }
    if (mode === 'malformed' && !(path === '/v1/chat/completions' && (body as { stream?: unknown })?.stream === true)) {
      return send(res, 200, 'application/json', '{"choices": [{"message": {"content": "trunc');
    }
    if (mode === 'not_openai') return json(res, 200, { result: 'this is not an OpenAI answer', ok: true });

    if (method === 'GET' && path === '/v1/models') {
      return json(res, 200, { object: 'list', data: double.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'double' })) });
    }
    if (method === 'POST' && path === '/v1/chat/completions') {
      const b = body as { model?: unknown; stream?: unknown; messages?: unknown } | undefined;
      if (!b || typeof b !== 'object' || !Array.isArray(b.messages)) {
        return json(res, 400, { error: { message: "'messages' is required", type: 'invalid_request_error' } });
      }
      const model = typeof b.model === 'string' && b.model ? b.model : (double.models[0] ?? 'double-model');
      return b.stream === true ? stream(res, model) : json(res, 200, completion(model));
    }
    return json(res, 404, { error: { message: `no route ${method} ${path}`, type: 'not_found' } });
  };

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const path = (req.url ?? '/').split('?')[0];
      const method = req.method ?? 'GET';
      double.requests.push({ method, path, headers: req.headers, body });
      if (double.mode === 'slow') later(double.delayMs, () => handle(method, path, req.headers, body, res));
      else handle(method, path, req.headers, body, res);
    });
  });

  const listen = (port: number) => listenLocal(server, port);
  const shut = () => closeNow(server, timers);

  const port = await listen(0);
  const double: OpenAIDouble = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: [],
    mode: init.mode ?? 'ok',
    reply: init.reply ?? DEFAULTS.reply,
    pieces: init.pieces ?? [...DEFAULTS.pieces],
    models: init.models ?? [...DEFAULTS.models],
    delayMs: init.delayMs ?? DEFAULTS.delayMs,
    stallAfterPieces: null,
    completions: () => double.requests.filter((r) => r.path === '/v1/chat/completions'),
    stop: shut,
    async start() {
      if (!server.listening) await listen(port);
    },
    close: shut,
  };
  return double;
}
