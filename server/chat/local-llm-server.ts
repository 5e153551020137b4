/**
 * A tiny OpenAI-compatible HTTP server on 127.0.0.1 in front of a `LocalLlm` (CHAT_MODEL_PATH), so `LlmClient`
 * talks to the in-process model exactly as it talks to a llama.cpp server: `POST /v1/chat/completions` (plain,
 * or `stream: true` as server-sent events) and `GET /v1/models`. A full queue answers 429 with an OpenAI error
 * body (code `llm_busy`), which `LlmClient` turns into `llm_busy`.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Hono, type Context } from 'hono';
import { serve } from '@hono/node-server';
import type { ChatMessage } from '../../shared/chat/prompt.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { LocalLlm, type LocalLlmOptions, type LocalStream } from './local-llm.js';

export interface LocalLlmServer {
  /** `http://127.0.0.1:<port>`: the endpoint to give `LlmClient`. */
  readonly url: string;
  readonly port: number;
  readonly llm: LocalLlm;
  /** Stops listening and, when the server loaded the model itself, frees it. */
  close(): Promise<void>;
}

export interface LocalLlmServerOptions {
  /** Port on 127.0.0.1; default 0 (any free port). */
  port?: number;
  log?: Logger;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function openAiError(c: Context, status: number, code: string, message: string, type = 'invalid_request_error'): Response {
  return c.json({ error: { message, type, code } }, status as 400);
}

/** OpenAI messages as ChatMessages; content may be a string or an array of `{type:'text', text}` parts. */
function parseMessages(value: unknown): ChatMessage[] | string {
  if (!Array.isArray(value) || value.length === 0) return "'messages' must be a non-empty array";
  const out: ChatMessage[] = [];
  for (const m of value) {
    if (!isObj(m)) return 'every message must be an object';
    const role = m.role === 'developer' ? 'system' : m.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant') return `unsupported message role ${JSON.stringify(m.role)}`;
    let content: string;
    if (typeof m.content === 'string') content = m.content;
    else if (Array.isArray(m.content)) {
      content = m.content.map((p) => (isObj(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
    } else if (m.content == null && role === 'assistant') content = '';
    else return 'message content must be a string';
    out.push({ role, content });
  }
  return out;
}

export function createLocalLlmApp(llm: LocalLlm, log?: Logger): Hono {
  const app = new Hono();
  const created = Math.floor(Date.now() / 1000);

  app.get('/v1/models', (c) =>
    c.json({ object: 'list', data: [{ id: llm.model, object: 'model', created, owned_by: 'lookout', meta: { n_ctx: llm.contextSize } }] }),
  );

  app.post('/v1/chat/completions', async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return openAiError(c, 400, 'invalid_json', 'the request body is not valid JSON');
    }
    if (!isObj(body)) return openAiError(c, 400, 'bad_request', 'the request body must be a JSON object');
    const messages = parseMessages(body.messages);
    if (typeof messages === 'string') return openAiError(c, 400, 'bad_request', messages);
    const rawMax = body.max_completion_tokens ?? body.max_tokens;
    if (rawMax !== undefined && rawMax !== null && !(Number.isInteger(rawMax) && (rawMax as number) > 0)) {
      return openAiError(c, 400, 'bad_request', 'max_tokens must be a positive integer');
    }
    const temperature = body.temperature;
    if (temperature !== undefined && temperature !== null && !(typeof temperature === 'number' && temperature >= 0 && temperature <= 2)) {
      return openAiError(c, 400, 'bad_request', 'temperature must be a number between 0 and 2');
    }
    const opts = {
      maxTokens: (rawMax as number | null | undefined) ?? undefined,
      temperature: (temperature as number | null | undefined) ?? undefined,
      signal: c.req.raw.signal,
    };
    const model = llm.model;
    const id = `chatcmpl-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

    let stream: LocalStream;
    try {
      stream = await llm.stream(messages, opts);
    } catch (err) {
      if (err instanceof ApiError) {
        const type = err.code === 'llm_busy' ? 'server_busy' : err.status >= 500 ? 'server_error' : 'invalid_request_error';
        return openAiError(c, err.status, err.code, err.message, type);
      }
      if (c.req.raw.signal.aborted) return openAiError(c, 499, 'cancelled', 'the request was cancelled');
      log?.warn(`chat: local LLM server: ${err instanceof Error ? err.message : String(err)}`);
      return openAiError(c, 500, 'internal_error', 'the local LLM failed', 'server_error');
    }

    if (body.stream !== true) {
      try {
        for await (const _ of stream) {
          // drain
        }
        const r = await stream.result;
        return c.json({
          id,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: r.text },
              finish_reason: r.finishReason === 'abort' ? 'stop' : r.finishReason,
            },
          ],
          usage: { completion_tokens: r.completionTokens },
        });
      } catch (err) {
        const e = err instanceof ApiError ? err : new ApiError('llm_bad_gateway', 'the local LLM failed');
        return openAiError(c, 500, e.code, e.message, 'server_error');
      }
    }

    const enc = new TextEncoder();
    const chunk = (delta: object, finish: string | null) =>
      enc.encode(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    const iterator = stream[Symbol.asyncIterator]();
    const s = stream;
    let first = true;
    const sse = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          if (first) {
            first = false;
            controller.enqueue(chunk({ role: 'assistant', content: '' }, null));
            return;
          }
          const next = await iterator.next();
          if (!next.done) {
            controller.enqueue(chunk({ content: next.value }, null));
            return;
          }
          const r = await s.result;
          controller.enqueue(chunk({}, r.finishReason === 'abort' ? 'stop' : r.finishReason));
          controller.enqueue(enc.encode('data: [DONE]\n\n'));
          controller.close();
        } catch (err) {
          const message = err instanceof Error ? err.message : 'the local LLM failed';
          controller.enqueue(enc.encode(`data: ${JSON.stringify({ error: { message, type: 'server_error' } })}\n\n`));
          controller.close();
        }
      },
      cancel() {
        s.cancel();
      },
    });
    return new Response(sse, {
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
    });
  });

  app.notFound((c) => openAiError(c, 404, 'not_found', `no route ${c.req.method} ${c.req.path}`, 'not_found'));
  app.onError((err, c) => {
    log?.warn(`chat: local LLM server: ${err.message}`);
    return openAiError(c, 500, 'internal_error', 'the local LLM server failed', 'server_error');
  });
  return app;
}

/**
 * Serves `llm` (a loaded `LocalLlm`, or the options to load one) on 127.0.0.1. Resolves once listening.
 * When it loaded the model itself, `close()` frees it too.
 */
export async function startLocalLlmServer(llm: LocalLlm | LocalLlmOptions, opts: LocalLlmServerOptions = {}): Promise<LocalLlmServer> {
  const owned = !(llm instanceof LocalLlm);
  const engine = llm instanceof LocalLlm ? llm : await LocalLlm.load(llm);
  const app = createLocalLlmApp(engine, opts.log ?? (owned ? (llm as LocalLlmOptions).log : undefined));
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
      s.once('error', reject);
    });
  } catch (err) {
    if (owned) await engine.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    llm: engine,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections?.();
        });
        if (owned) await engine.close();
      })();
      return closing;
    },
  };
}
