/**
 * The LLM client over real HTTP against the OpenAI double (test/helpers/openai-double.ts): the request it
 * sends, plain and streamed replies, and every failure mapped to its error code, without hanging and without
 * the key or token in any message or log line.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIDouble, type OpenAIDouble } from '../../test/helpers/openai-double.js';
import type { ChatMessage } from '../../shared/chat/prompt.js';
import { ApiError } from '../http/errors.js';
import { createLogger } from '../logger.js';
import { LlmClient, parseEndpoint, SseParser, type LlmClientOptions } from './llm-client.js';

const KEY = 'sk-test-SECRET-0123456789abcdef';
const TOKEN_A = 'eyJhbGciOiJSUzI1NiJ9.TOKEN-A-secret.sig';
const TOKEN_B = 'eyJhbGciOiJSUzI1NiJ9.TOKEN-B-secret.sig';
const messages: ChatMessage[] = [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: 'Hello?' },
];

let double: OpenAIDouble;
let tmp: string;
const logLines: string[] = [];
const log = createLogger('debug', (l) => logLines.push(l));

beforeAll(async () => {
  double = await startOpenAIDouble();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-llm-'));
});
afterAll(async () => {
  await double.close();
  await fs.rm(tmp, { recursive: true, force: true });
});
afterEach(async () => {
  double.mode = 'ok';
  double.delayMs = 5000;
  double.pieces = ['I see ', 'two ', 'people', '.'];
  double.stallAfterPieces = null;
  double.requests.length = 0;
  await double.start();
});

function client(opts: Partial<LlmClientOptions> = {}): LlmClient {
  return new LlmClient({ endpoint: double.url, model: 'test-model', apiKey: KEY, timeoutMs: 2000, log, ...opts });
}

/** Awaits a rejection that must be an ApiError with this code and status; returns it. */
async function apiError(p: Promise<unknown>, code: string, status: number): Promise<ApiError> {
  const err = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).code).toBe(code);
  expect((err as ApiError).status).toBe(status);
  return err as ApiError;
}

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const piece of stream) out.push(piece);
  return out;
}

/** Neither secret appears anywhere a person or a log could see it. */
function expectNoSecrets(...texts: unknown[]): void {
  for (const t of [...texts, logLines.join('')]) {
    const s = typeof t === 'string' ? t : JSON.stringify(t);
    for (const secret of [KEY, TOKEN_A, TOKEN_B, 'SECRET', 'TOKEN-A', 'TOKEN-B']) expect(s).not.toContain(secret);
  }
}

async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('LlmClient', { timeout: 10_000 }, () => {
  it('posts an OpenAI chat completion and returns the reply text', async () => {
    expect(await client().complete(messages)).toBe(double.reply);
    const [req] = double.completions();
    expect(req.method).toBe('POST');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers['content-type']).toMatch(/application\/json/);
    expect(req.body).toEqual({ model: 'test-model', messages, max_tokens: 512, temperature: 0.7, stream: false });
  });

  it('reports why the reply ended and the usage', async () => {
    const c = await client({ maxTokens: 64, temperature: 0.1 }).completion(messages);
    expect(c).toMatchObject({ text: double.reply, finishReason: 'stop', model: 'test-model', usage: { total_tokens: 15 } });
    expect(double.completions()[0].body).toMatchObject({ max_tokens: 64, temperature: 0.1 });
  });

  it('takes the endpoint with or without a trailing slash or /v1', async () => {
    for (const endpoint of [double.url, `${double.url}/`, `${double.url}/v1`, `${double.url}/v1/`, `${double.url}/v1/chat/completions`]) {
      double.requests.length = 0;
      await client({ endpoint }).complete(messages);
      expect(double.requests.map((r) => r.path)).toEqual(['/v1/chat/completions']);
    }
    expect(parseEndpoint('https://llm.example:8443/serving/v1/').base).toBe('https://llm.example:8443/serving');
  });

  it('never shows credentials given in the endpoint URL', () => {
    const c = new LlmClient({ endpoint: 'http://user:pa55word@llm.local:8080/v1', model: 'm' });
    expect(c.endpoint).toBe('http://llm.local:8080');
    expect(c.redact('x pa55word y')).toBe('x [redacted] y');
    expect(() => new LlmClient({ endpoint: 'ftp://user:pa55word@h/' })).toThrow(/http or https/);
    let message = '';
    try {
      new LlmClient({ endpoint: 'not a url pa55word' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/not a valid URL/);
    expect(message).not.toContain('pa55word');
  });

  it('streams the pieces in order', async () => {
    double.pieces = ['The ', 'image ', 'shows ', 'alice', '.'];
    const stream = await client().stream(messages);
    expect(await collect(stream)).toEqual(['The ', 'image ', 'shows ', 'alice', '.']);
    const [req] = double.completions();
    expect(req.body).toMatchObject({ stream: true, model: 'test-model' });
    expect(req.headers.accept).toBe('text/event-stream');
  });

  it('asks the server for its model when none is configured', async () => {
    const c = client({ model: '' });
    expect(c.model).toBeNull();
    await c.complete(messages);
    expect(double.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models', 'POST /v1/chat/completions']);
    expect(double.completions()[0].body).toMatchObject({ model: 'double-model' });
    expect(c.model).toBe('double-model');
  });

  describe('failures', () => {
    it('connection refused: llm_unavailable 503', async () => {
      const c = client({ endpoint: `http://127.0.0.1:${await closedPort()}` });
      const e1 = await apiError(c.complete(messages), 'llm_unavailable', 503);
      expect(e1.message).toMatch(/refused the connection/);
      await apiError(c.stream(messages), 'llm_unavailable', 503);
      await apiError(c.listModels(), 'llm_unavailable', 503);
      expectNoSecrets(e1.message);
    });

    it('too slow: llm_timeout 504, after the timeout and not much later', async () => {
      double.mode = 'slow';
      double.delayMs = 5000;
      const c = client({ timeoutMs: 300 });
      let t0 = Date.now();
      const e = await apiError(c.complete(messages), 'llm_timeout', 504);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(e.message).toMatch(/within 300 ms/);
      t0 = Date.now();
      await apiError(c.stream(messages), 'llm_timeout', 504);
      expect(Date.now() - t0).toBeLessThan(2000);
      await apiError(c.listModels({ timeoutMs: 200 }), 'llm_timeout', 504);
      expectNoSecrets(e.message);
    });

    it('a stream that goes silent: the pieces so far, then llm_timeout 504', async () => {
      double.pieces = ['one ', 'two ', 'three'];
      double.stallAfterPieces = 2;
      const stream = await client({ timeoutMs: 300 }).stream(messages);
      const got: string[] = [];
      const t0 = Date.now();
      const err = await (async () => {
        for await (const p of stream) got.push(p);
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(got).toEqual(['one ', 'two ']);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'llm_timeout', status: 504 });
      expect(Date.now() - t0).toBeLessThan(2000);
    });

    it('a stream cut off mid-reply: llm_bad_gateway 502', async () => {
      double.stallAfterPieces = 1;
      const stream = await client().stream(messages);
      const it = stream[Symbol.asyncIterator]();
      expect(await it.next()).toEqual({ done: false, value: 'I see ' });
      await double.stop();
      await apiError(it.next(), 'llm_bad_gateway', 502);
    });

    it('upstream 500: llm_bad_gateway 502 naming the status', async () => {
      double.mode = 'error500';
      const e = await apiError(client().complete(messages), 'llm_bad_gateway', 502);
      expect(e.message).toMatch(/HTTP 500/);
      expect(e.message).toMatch(/failed on purpose/);
      expect(e.details).toEqual({ upstream_status: 500 });
      await apiError(client().stream(messages), 'llm_bad_gateway', 502);
      expectNoSecrets(e.message, e.details);
    });

    it('upstream 401 (which echoes the key): llm_bad_gateway 502 without the key', async () => {
      double.mode = 'error401';
      const e = await apiError(client().complete(messages), 'llm_bad_gateway', 502);
      expect(e.message).toMatch(/HTTP 401/);
      expect(e.message).toMatch(/CHAT_API_KEY/);
      const s = await apiError(client().stream(messages), 'llm_bad_gateway', 502);
      expectNoSecrets(e.message, e.details, s.message);
    });

    it('a 200 that is not OpenAI-shaped: llm_bad_gateway 502', async () => {
      double.mode = 'not_openai';
      const e = await apiError(client().complete(messages), 'llm_bad_gateway', 502);
      expect(e.message).toMatch(/not an OpenAI chat completion/);
      // Streamed: the server answered plain JSON, and that JSON is not a completion either.
      const stream = await client().stream(messages);
      await apiError(collect(stream), 'llm_bad_gateway', 502);
      await apiError(client().listModels(), 'llm_bad_gateway', 502);
    });

    it('malformed JSON: llm_bad_gateway 502, plain and streamed', async () => {
      double.mode = 'malformed';
      const e = await apiError(client().complete(messages), 'llm_bad_gateway', 502);
      expect(e.message).toMatch(/malformed JSON/);
      const stream = await client().stream(messages);
      const it = stream[Symbol.asyncIterator]();
      expect(await it.next()).toEqual({ done: false, value: 'Hel' });
      const s = await apiError(it.next(), 'llm_bad_gateway', 502);
      expect(s.message).toMatch(/malformed event/);
    });

    it('the caller cancelling: rejects with its reason, not an ApiError', async () => {
      double.mode = 'slow';
      const ac = new AbortController();
      const p = client().complete(messages, { signal: ac.signal });
      setTimeout(() => ac.abort(new Error('browser went away')), 50);
      await expect(p).rejects.toThrow('browser went away');
    });

    it('keeps the key out of every log line', async () => {
      logLines.length = 0;
      double.mode = 'error401';
      await client()
        .complete(messages)
        .catch(() => {});
      double.mode = 'error500';
      await client()
        .complete(messages)
        .catch(() => {});
      expect(logLines.join('')).toMatch(/llm_bad_gateway/);
      expectNoSecrets();
    });
  });

  describe('one slot upstream', () => {
    it('refuses with llm_busy 429 when the queue is full, serves queued requests in turn', async () => {
      double.mode = 'slow';
      double.delayMs = 300;
      const noQueue = client({ maxConcurrent: 1, maxQueue: 0 });
      const first = noQueue.complete(messages);
      const e = await apiError(noQueue.complete(messages), 'llm_busy', 429);
      expect(e.message).toMatch(/busy/);
      expect(await first).toBe(double.reply);

      const queued = client({ maxConcurrent: 1, maxQueue: 2 });
      const replies = await Promise.all([queued.complete(messages), queued.complete(messages)]);
      expect(replies).toEqual([double.reply, double.reply]);
    });

    it('frees the slot when the consumer stops reading a stream early', async () => {
      const c = client({ maxConcurrent: 1, maxQueue: 0 });
      for await (const piece of await c.stream(messages)) {
        expect(piece).toBe('I see ');
        break;
      }
      expect(await c.complete(messages)).toBe(double.reply);
      const s = await c.stream(messages);
      await s.cancel();
      expect(await c.complete(messages)).toBe(double.reply);
    });
  });

  describe('token file', () => {
    it('sends the token, re-reads it after it changes, not while it stays the same', async () => {
      const file = path.join(tmp, 'token');
      await fs.writeFile(file, `${TOKEN_A}\n`);
      // A whole-second mtime, so it can be put back exactly below.
      const stamp = new Date('2024-01-01T00:00:00Z');
      await fs.utimes(file, stamp, stamp);
      const c = client({ apiKey: undefined, tokenFile: file });
      await c.complete(messages);
      expect(double.completions()[0].headers.authorization).toBe(`Bearer ${TOKEN_A}`);

      // Same size, same mtime: the cached token is used (the file is not read per request).
      await fs.writeFile(file, `${TOKEN_B}\n`);
      await fs.utimes(file, stamp, stamp);
      await c.complete(messages);
      expect(double.completions()[1].headers.authorization).toBe(`Bearer ${TOKEN_A}`);

      // Rotated: a new mtime, so it is read again.
      await fs.utimes(file, new Date(), new Date());
      await c.complete(messages);
      expect(double.completions()[2].headers.authorization).toBe(`Bearer ${TOKEN_B}`);
    });

    it('the API key wins over the token file', async () => {
      const file = path.join(tmp, 'token-unused');
      await fs.writeFile(file, TOKEN_A);
      await client({ tokenFile: file }).complete(messages);
      expect(double.completions()[0].headers.authorization).toBe(`Bearer ${KEY}`);
    });

    it('a missing or unusable token file is llm_unavailable, naming the file and not the token', async () => {
      const missing = path.join(tmp, 'nope');
      const e = await apiError(client({ apiKey: undefined, tokenFile: missing }).complete(messages), 'llm_unavailable', 503);
      expect(e.message).toContain(missing);
      const bad = path.join(tmp, 'bad-token');
      await fs.writeFile(bad, `${TOKEN_A}\n${TOKEN_B}`);
      const b = await apiError(client({ apiKey: undefined, tokenFile: bad }).complete(messages), 'llm_unavailable', 503);
      expect(b.message).toMatch(/not hold a valid bearer token/);
      expect(double.completions()).toHaveLength(0);
      expectNoSecrets(e.message, b.message);
    });

    it('the token never appears in errors, even when the server echoes it', async () => {
      const file = path.join(tmp, 'token-echo');
      await fs.writeFile(file, TOKEN_A);
      logLines.length = 0;
      double.mode = 'error401';
      const e = await apiError(client({ apiKey: undefined, tokenFile: file }).complete(messages), 'llm_bad_gateway', 502);
      expect(double.requests[0].headers.authorization).toBe(`Bearer ${TOKEN_A}`);
      expectNoSecrets(e.message, e.details);
    });

    it('an API key with characters a header cannot hold is refused without echoing it', () => {
      let message = '';
      try {
        client({ apiKey: 'sk-SECRET with space' });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/CHAT_API_KEY/);
      expectNoSecrets(message);
    });
  });
});

describe('SseParser', () => {
  it('splits events across reads, joins multi-line data, skips comments and other fields', () => {
    const p = new SseParser();
    const out = [
      ...p.push(': keep-alive\n\nda'),
      ...p.push('ta: {"a":1}\r'),
      ...p.push('\n\r\nevent: x\nid: 3\ndata: line1\ndata:line2\n\n'),
      ...p.push('data: [DONE]'),
      ...p.push('', true),
    ];
    expect(out).toEqual(['{"a":1}', 'line1\nline2', '[DONE]']);
  });

  it('takes a lone CR as a line end, and a CR ending one read with the LF starting the next as one', () => {
    const p = new SseParser();
    expect([...p.push('data: a\r'), ...p.push('\rdata: b\r\r')]).toEqual(['a', 'b']);
    // Had the LF after "b1" been taken as a second line end, "b1" and "b2" would be two events.
    expect([...p.push('data: b1\r'), ...p.push('\ndata: b2\r\n\r\n')]).toEqual(['b1\nb2']);
    expect(p.push('data: c\n\n')).toEqual(['c']);
  });

  it('reads CRLF streams with comments and events split anywhere, one character at a time', () => {
    const stream = ': keep-alive\r\n\r\ndata: {"a":1}\r\n\r\n:comment\r\ndata: x\r\ndata: y\r\n\r\ndata: [DONE]\r\n\r\n';
    const p = new SseParser();
    const out = [...stream].flatMap((ch) => p.push(ch));
    expect([...out, ...p.push('', true)]).toEqual(['{"a":1}', 'x\ny', '[DONE]']);
  });

  it('ends a last event that has no blank line, or only its last line end, at the end of the stream', () => {
    const p = new SseParser();
    expect(p.push('data: a\n\ndata: b\r')).toEqual(['a']);
    expect(p.push('', true)).toEqual(['b']);
    const q = new SseParser();
    expect([...q.push('data: c'), ...q.push('', true)]).toEqual(['c']);
  });

  it('refuses an event longer than 1 MiB, whether one endless line or many lines', () => {
    expect(() => new SseParser().push(`data: ${'x'.repeat(1 << 20)}`)).toThrow(RangeError);
    const p = new SseParser();
    const line = `data: ${'y'.repeat(1023)}\n`;
    expect(() => {
      for (let i = 0; i < 1100; i++) p.push(line);
    }).toThrow(/longer than 1 MiB/);
  });
});

describe('LlmClient on a raw event stream', { timeout: 10_000 }, () => {
  let server: http.Server;
  let url: string;
  /** The writes of the next reply, sent with a pause between them so they arrive as separate reads. */
  let writes: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const w of writes) {
          res.write(w);
          await new Promise((r) => setTimeout(r, 15));
        }
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  const chunk = (content: string, finish: string | null = null) =>
    JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

  it('streams the pieces of a CRLF stream with comments and events split across reads', async () => {
    const first = `data: ${chunk('I see ')}\r\n\r\n`;
    const second = `data: ${chunk('two people.', 'stop')}\r\n\r\n`;
    writes = [
      ': keep-alive\r\n\r\n',
      first.slice(0, 9),
      `${first.slice(9)}: still there\r`,
      `\n${second.slice(0, 30)}`,
      second.slice(30, -2),
      `${second.slice(-2)}data: [DONE]\r\n\r\n`,
    ];
    const stream = await new LlmClient({ endpoint: url, model: 'm', timeoutMs: 2000, log }).stream(messages);
    expect(await collect(stream)).toEqual(['I see ', 'two people.']);
  });

  it('a stream whose last event ends without a blank line still completes', async () => {
    writes = [`data: ${chunk('done', 'stop')}\n`];
    const stream = await new LlmClient({ endpoint: url, model: 'm', timeoutMs: 2000, log }).stream(messages);
    expect(await collect(stream)).toEqual(['done']);
  });
});
