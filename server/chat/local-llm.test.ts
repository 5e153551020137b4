/**
 * Offline chat end to end: a tiny random-weight GGUF model is generated, loaded through node-llama-cpp (from
 * `.llama/`, CPU prebuilt binaries), served by local-llm-server on 127.0.0.1, and called through `LlmClient`.
 * Skipped, with a note, where node-llama-cpp is not installed (see LOCAL_LLM_INSTALL_COMMAND).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../shared/chat/prompt.js';
import { ApiError } from '../http/errors.js';
import { writeTinyGguf } from '../../test/helpers/tiny-gguf.js';
import { LlmClient } from './llm-client.js';
import { loadNodeLlamaCpp, LocalLlm } from './local-llm.js';
import { startLocalLlmServer, type LocalLlmServer } from './local-llm-server.js';

const appDir = path.resolve(import.meta.dirname, '../..');

const messages: ChatMessage[] = [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: 'Say something, anything.' },
];

// Needs the runtime in .llama/ (`npm run llama:install`, which .ci/run does): a missing runtime fails here, it
// is never skipped.
describe('local LLM (node-llama-cpp) behind the OpenAI interface', () => {
  it('node-llama-cpp is installed in .llama/', async () => {
    await expect(loadNodeLlamaCpp(appDir)).resolves.toBeDefined();
  });

  let dir: string;
  let llm: LocalLlm;
  let server: LocalLlmServer;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-llm-'));
    const file = path.join(dir, 'tiny.gguf');
    await writeTinyGguf(file);
    llm = await LocalLlm.load({ modelPath: file, appDir, threads: 2, maxQueue: 1, temperature: 0 });
    server = await startLocalLlmServer(llm);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await llm?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const client = (extra: Partial<ConstructorParameters<typeof LlmClient>[0]> = {}) =>
    new LlmClient({ endpoint: server.url, timeoutMs: 30_000, maxTokens: 16, ...extra });

  it('loads the model with the configured limits and lists it', async () => {
    expect(llm.contextSize).toBe(2048); // the tiny model's own context is smaller than 8192
    expect(llm.threads).toBe(2);
    expect(await client().listModels()).toEqual(['tiny']);
  });

  it('answers a plain completion with text, cut at max_tokens', async () => {
    const c = client();
    const r = await c.completion(messages, { maxTokens: 12 });
    expect(r.text.length).toBeGreaterThan(0);
    expect(r.finishReason).toBe('length');
    expect(r.model).toBe('tiny');
    expect(r.usage?.completion_tokens).toBe(12);
    const short = await c.completion(messages, { maxTokens: 3 });
    expect(short.usage?.completion_tokens).toBe(3);
    expect(short.text.length).toBeLessThan(r.text.length);
  });

  it('streams pieces, then ends', async () => {
    const s = await client().stream(messages, { maxTokens: 10 });
    const pieces: string[] = [];
    for await (const p of s) pieces.push(p);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('').length).toBeGreaterThan(0);
    expect(llm.load).toEqual({ active: 0, queued: 0 });
  });

  it('serves concurrent requests one at a time, in order', async () => {
    const big = await LocalLlm.load({ modelPath: path.join(dir, 'tiny.gguf'), appDir, threads: 2, maxQueue: 4, temperature: 0 });
    const srv = await startLocalLlmServer(big);
    try {
      // The client lets all three through at once, so the server's slot is what orders them.
      const cc = new LlmClient({ endpoint: srv.url, timeoutMs: 30_000, maxConcurrent: 8, maxQueue: 8 });
      const done: number[] = [];
      const seen: Array<{ active: number; queued: number }> = [];
      const watch = setInterval(() => seen.push(big.load), 2);
      const ask = (i: number, maxTokens = 40) =>
        cc.completion(messages, { maxTokens }).then((r) => {
          done.push(i);
          return r;
        });
      // The first answer is long, so the other two are still queued behind it on a busy machine too (with
      // equal lengths the first could end before the third arrived, and the queue never held two).
      const first = ask(1, 400);
      await vi.waitFor(() => expect(big.load.active).toBe(1));
      const second = ask(2);
      await vi.waitFor(() => expect(big.load.queued).toBe(1));
      const third = ask(3);
      await vi.waitFor(() => expect(big.load.queued).toBe(2));
      const all = await Promise.all([first, second, third]);
      clearInterval(watch);
      expect(done).toEqual([1, 2, 3]);
      expect(all.map((r) => r.usage?.completion_tokens)).toEqual([400, 40, 40]);
      expect(Math.max(...seen.map((s) => s.active))).toBe(1);
      expect(seen.some((s) => s.queued === 2)).toBe(true);
      expect(big.load).toEqual({ active: 0, queued: 0 });
    } finally {
      await srv.close();
      await big.close();
    }
  }, 60_000);

  it('refuses with 429 llm_busy when the queue is full', async () => {
    const c = client({ maxConcurrent: 8, maxQueue: 8 });
    // Long enough that it cannot end before the second request is queued behind it (60 tokens did once in CI).
    const running = c.completion(messages, { maxTokens: 400 });
    await vi.waitFor(() => expect(llm.load.active).toBe(1));
    const waiting = c.completion(messages, { maxTokens: 4 });
    await vi.waitFor(() => expect(llm.load.queued).toBe(1)); // maxQueue: 1
    const err = await c.completion(messages, { maxTokens: 4 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('llm_busy');
    expect((err as ApiError).status).toBe(429);
    expect((err as ApiError).details).toEqual({ upstream_status: 429 });
    expect((await running).finishReason).toBe('length');
    expect((await waiting).text.length).toBeGreaterThan(0);
  }, 60_000);

  it('a queued request the client abandons leaves the queue', async () => {
    const c = client({ maxConcurrent: 8, maxQueue: 8 });
    // Long enough that it cannot end before the second request is queued behind it (60 tokens did once in CI).
    const running = c.completion(messages, { maxTokens: 400 });
    await vi.waitFor(() => expect(llm.load.active).toBe(1));
    const ac = new AbortController();
    const queued = c.completion(messages, { maxTokens: 4, signal: ac.signal }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(llm.load.queued).toBe(1));
    ac.abort(new Error('gone'));
    await vi.waitFor(() => expect(llm.load.queued).toBe(0), { timeout: 5000 });
    expect(await queued).toBeInstanceOf(Error);
    expect((await running).finishReason).toBe('length');
  }, 30_000);

  it('caps the context at 8192 for a model trained on more', async () => {
    const file = path.join(dir, 'long.gguf');
    await writeTinyGguf(file, { contextLength: 32768 });
    const long = await LocalLlm.load({ modelPath: file, appDir, threads: 1 });
    try {
      expect(long.contextSize).toBe(8192);
      expect(long.threads).toBe(1);
      expect((await long.complete(messages, { maxTokens: 5 })).completionTokens).toBe(5);
    } finally {
      await long.close();
    }
  }, 60_000);

  it('a stream the consumer cancels frees the slot', async () => {
    const c = client();
    const s = await c.stream(messages, { maxTokens: 500 });
    for await (const _ of s) break;
    await vi.waitFor(() => expect(llm.load).toEqual({ active: 0, queued: 0 }), { timeout: 5000 });
    expect((await c.completion(messages, { maxTokens: 2 })).usage?.completion_tokens).toBe(2);
  }, 30_000);
});

describe('loading node-llama-cpp', () => {
  it('says how to install it when it is missing', async () => {
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-nollama-'));
    try {
      await expect(loadNodeLlamaCpp(empty)).rejects.toThrow(
        /CHAT_MODEL_PATH is set, but node-llama-cpp cannot be loaded.*npm install --prefix \.llama/s,
      );
    } finally {
      await fs.rm(empty, { recursive: true, force: true });
    }
  });
});
