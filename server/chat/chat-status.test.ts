/** The chat status follows the OpenAI double going down and up, and never shows credentials. */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startOpenAIDouble, type OpenAIDouble } from '../../test/helpers/openai-double.js';
import { ApiError } from '../http/errors.js';
import { createLogger } from '../logger.js';
import { ChatStatus } from './chat-status.js';
import { LlmClient } from './llm-client.js';

const KEY = 'sk-status-SECRET-42';
let double: OpenAIDouble;
const logLines: string[] = [];
const log = createLogger('debug', (l) => logLines.push(l));
const statuses: ChatStatus[] = [];

beforeAll(async () => {
  double = await startOpenAIDouble();
});
afterAll(() => double.close());
afterEach(async () => {
  for (const s of statuses.splice(0)) s.stop();
  double.mode = 'ok';
  double.requests.length = 0;
  await double.start();
});

// Checks get 3 s: a first check on a loaded machine once took more than 500 ms against the local double.
function make(opts: { enabled?: boolean; client?: LlmClient | null; intervalMs?: number; checkTimeoutMs?: number } = {}): ChatStatus {
  const client =
    opts.client === undefined ? new LlmClient({ endpoint: double.url, model: 'test-model', apiKey: KEY, timeoutMs: 2000 }) : opts.client;
  const s = new ChatStatus({
    enabled: opts.enabled ?? true,
    client,
    intervalMs: opts.intervalMs ?? 30_000,
    checkTimeoutMs: opts.checkTimeoutMs ?? 3000,
    log,
  });
  statuses.push(s);
  return s;
}

describe('ChatStatus', { timeout: 10_000 }, () => {
  it('is reachable when GET /v1/models answers, with the model and the time of the check', async () => {
    const s = make();
    expect(s.status()).toMatchObject({ reachable: false, reason: 'not checked yet', checked_at: null });
    await s.start();
    const st = s.status();
    expect(st).toMatchObject({
      enabled: true,
      switched_on: true,
      endpoint_configured: true,
      endpoint: double.url,
      model: 'test-model',
      model_endpoint: double.url,
      model_name: 'test-model',
      reachable: true,
      models: ['double-model'],
    });
    expect(st.reason).toBeUndefined();
    expect(Date.parse(st.checked_at!)).toBeGreaterThan(Date.now() - 5000);
    const [req] = double.requests;
    expect(`${req.method} ${req.path}`).toBe('GET /v1/models');
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('follows the endpoint going down and coming back, on its own timer', async () => {
    logLines.length = 0;
    const s = make({ intervalMs: 50 });
    await s.start();
    expect(s.status().reachable).toBe(true);

    await double.stop();
    await vi.waitFor(() => expect(s.status().reachable).toBe(false), { timeout: 3000, interval: 20 });
    // A check in flight when the double stopped says it broke off; the next one finds the port closed.
    await vi.waitFor(() => expect(s.status().reason).toMatch(/refused the connection/), { timeout: 3000, interval: 20 });
    expect(s.status().models).toBeUndefined();

    await double.start();
    await vi.waitFor(() => expect(s.status().reachable).toBe(true), { timeout: 3000, interval: 20 });
    const lines = logLines.join('');
    expect(lines).toMatch(/is unreachable/);
    expect(lines).toMatch(/is reachable/);
  });

  it('is unreachable, with the reason, when the endpoint errs or is not OpenAI-compatible', async () => {
    const s = make({ checkTimeoutMs: 500 });
    double.mode = 'error401';
    await s.check();
    expect(s.status()).toMatchObject({ reachable: false });
    expect(s.status().reason).toMatch(/HTTP 401/);
    double.mode = 'not_openai';
    await s.check();
    expect(s.status().reason).toMatch(/not an OpenAI model list/);
    double.mode = 'slow';
    await s.check();
    expect(s.status().reason).toMatch(/within 500 ms/);
    expect(JSON.stringify(s.status()) + logLines.join('')).not.toContain(KEY);
  });

  it('shows the endpoint without credentials', async () => {
    const withCreds = double.url.replace('http://', 'http://admin:pw-SECRET@');
    const s = make({ client: new LlmClient({ endpoint: `${withCreds}/v1/`, model: 'm' }) });
    await s.start();
    expect(s.status()).toMatchObject({ endpoint: double.url, reachable: true });
    expect(double.requests[0].headers.authorization).toBe(`Basic ${Buffer.from('admin:pw-SECRET').toString('base64')}`);
    expect(JSON.stringify(s.status())).not.toContain('SECRET');
  });

  it('names the model the server lists when none is configured', async () => {
    const s = make({ client: new LlmClient({ endpoint: double.url, model: '' }) });
    expect(s.status().model).toBeNull();
    await s.start();
    expect(s.status().model).toBe('double-model');
  });

  it('switched off: never checks, says why, and the chat guard refuses with chat_disabled', async () => {
    const s = make({ enabled: false });
    await s.start();
    expect(double.requests).toHaveLength(0);
    expect(s.status()).toMatchObject({ enabled: false, switched_on: false, endpoint_configured: true, reachable: false, checked_at: null });
    expect(s.status().reason).toMatch(/CHAT_ENABLED/);
    expect(() => s.requireClient()).toThrow(ApiError);
    try {
      s.requireClient();
    } catch (err) {
      expect(err).toMatchObject({ code: 'chat_disabled', status: 503 });
    }
  });

  it('no endpoint: not enabled though switched on, says why, and the chat guard refuses with chat_not_configured', async () => {
    const s = make({ client: null });
    await s.start();
    expect(s.status()).toMatchObject({
      enabled: false,
      switched_on: true,
      endpoint_configured: false,
      endpoint: null,
      model: null,
      model_endpoint: null,
      model_name: null,
      reachable: false,
    });
    expect(s.status().reason).toMatch(/CHAT_ENDPOINT or CHAT_MODEL_PATH/);
    try {
      s.requireClient();
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ code: 'chat_not_configured', status: 503 });
    }
  });

  it('returns the client when chat can be used', async () => {
    const s = make();
    await s.start();
    expect(s.requireClient()).toBeInstanceOf(LlmClient);
    s.stop();
  });
});
