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
    // One thread: two threads that spin on each other's barrier slow down tenfold when the machine is busy.
    const big = await LocalLlm.load({ modelPath: path.join(dir, 'tiny.gguf'), appDir, threads: 1, maxQueue: 4, temperature: 0 });
    const srv = await startLocalLlmServer(big);
    try {
      // The client lets all three through at once, so the server's slot is what orders them.
      // Every answer must end here (the order is the point), so the timeouts allow for a loaded machine.
      const cc = new LlmClient({ endpoint: srv.url, timeoutMs: 120_000, maxConcurrent: 8, maxQueue: 8 });
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
      const first = ask(1, 1500);
      await vi.waitFor(() => expect(big.load.active).toBe(1));
      const second = ask(2);
      await vi.waitFor(() => expect(big.load.queued).toBe(1));
      const third = ask(3);
      await vi.waitFor(() => expect(big.load.queued).toBe(2));
      const all = await Promise.all([first, second, third]);
      clearInterval(watch);
      expect(done).toEqual([1, 2, 3]);
      expect(all.map((r) => r.usage?.completion_tokens)).toEqual([1500, 40, 40]);
      expect(Math.max(...seen.map((s) => s.active))).toBe(1);
      expect(seen.some((s) => s.queued === 2)).toBe(true);
      expect(big.load).toEqual({ active: 0, queued: 0 });
    } finally {
      await srv.close();
      await big.close();
    }
  }, 180_000);

  // The request holding the slot is long (it cannot end before the others are queued behind it, however busy
  // the machine: 60 tokens once did in CI) and is stopped once the queue has been checked, rather than waited
  // for: on a loaded machine its hundreds of tokens took longer than the client's and the test's timeouts.
  const holdSlot = (c: LlmClient) => {
    const hold = new AbortController();
    const running = c.completion(messages, { maxTokens: 1500, signal: hold.signal }).catch((e: unknown) => e);
    return { running, release: () => hold.abort(new Error('released by the test')) };
  };
  // Marks a promise handled now (a failed assertion before its `await` must not leave an unhandled rejection);
  // awaiting it later still throws its error into the test.
  const later = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => {});
    return p;
  };

  it('refuses with 429 llm_busy when the queue is full', async () => {
    const c = client({ maxConcurrent: 8, maxQueue: 8 });
    const { running, release } = holdSlot(c);
    try {
      await vi.waitFor(() => expect(llm.load.active).toBe(1));
      const waiting = later(c.completion(messages, { maxTokens: 4 }));
      await vi.waitFor(() => expect(llm.load.queued).toBe(1)); // maxQueue: 1
      const err = await c.completion(messages, { maxTokens: 4 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('llm_busy');
      expect((err as ApiError).status).toBe(429);
      expect((err as ApiError).details).toEqual({ upstream_status: 429 });
      // The refusal disturbed neither the running request nor the queued one, which is served once the slot frees.
      expect(llm.load).toEqual({ active: 1, queued: 1 });
      release();
      expect((await waiting).usage?.completion_tokens).toBe(4);
    } finally {
      release();
      await running;
    }
    await vi.waitFor(() => expect(llm.load).toEqual({ active: 0, queued: 0 }));
  }, 60_000);

  it('a queued request the client abandons leaves the queue', async () => {
    const c = client({ maxConcurrent: 8, maxQueue: 8 });
    const { running, release } = holdSlot(c);
    try {
      await vi.waitFor(() => expect(llm.load.active).toBe(1));
      const ac = new AbortController();
      const queued = c.completion(messages, { maxTokens: 4, signal: ac.signal }).catch((e: unknown) => e);
      await vi.waitFor(() => expect(llm.load.queued).toBe(1));
      ac.abort(new Error('gone'));
      await vi.waitFor(() => expect(llm.load.queued).toBe(0), { timeout: 5000 });
      expect(await queued).toBeInstanceOf(Error);
      expect(llm.load.active).toBe(1); // the running request goes on
      // Its place is free: with maxQueue 1, the next request is queued (not refused with 429) and then served.
      const next = later(c.completion(messages, { maxTokens: 4 }));
      await vi.waitFor(() => expect(llm.load.queued).toBe(1));
      release();
      expect((await next).usage?.completion_tokens).toBe(4);
    } finally {
      release();
      await running;
    }
    await vi.waitFor(() => expect(llm.load).toEqual({ active: 0, queued: 0 }));
  }, 60_000);

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
