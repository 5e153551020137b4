/**
 * GET /api/processor/status over real HTTP: the API server reads the event processor's `GET /ready` in the
 * background and relays the last answer. The processor is the TEST DOUBLE of test/helpers/processor-double.ts (a
 * real HTTP server on 127.0.0.1); PROCESSOR_URL carries credentials, which must never come back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessorStatusResponse } from '../../shared/api/index.js';
import { type ProcessorDouble, sampleProcessorReady, startProcessorDouble } from '../helpers/processor-double.js';
import { getJson, startTestServer, type TestServer } from '../helpers/test-server.js';

// The relay needs none of the engines.
const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };
const USER = 'relay-user';
const PASSWORD = 'pr0cessor-secret-pw';

let processor: ProcessorDouble;
let server: TestServer;

beforeAll(async () => {
  processor = await startProcessorDouble();
  const url = new URL(processor.url);
  url.username = USER;
  url.password = PASSWORD;
  server = await startTestServer({ ...LIGHT, PROCESSOR_URL: url.href, PROCESSOR_CHECK_INTERVAL_MS: '100' });
});

afterAll(async () => {
  await server?.close();
  await processor?.close();
});

async function status(base: string): Promise<ProcessorStatusResponse> {
  const { status, body } = await getJson(`${base}/api/processor/status`);
  expect(status).toBe(200);
  return body as ProcessorStatusResponse;
}

/** Polls the relay until `done` holds for an answer checked after `since` (the background check runs every 100 ms). */
async function statusWhen(
  done: (s: ProcessorStatusResponse) => boolean,
  since = new Date().toISOString(),
): Promise<ProcessorStatusResponse> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = await status(server.url);
    if (s.checked_at && s.checked_at > since && done(s)) return s;
    if (Date.now() > deadline) throw new Error(`the relay never answered as expected; last: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function expectNoSecret(s: ProcessorStatusResponse): void {
  const text = JSON.stringify(s);
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(USER);
}

describe('GET /api/processor/status', () => {
  it('without PROCESSOR_URL: configured false, nothing checked', async () => {
    const bare = await startTestServer(LIGHT);
    try {
      expect(await status(bare.url)).toEqual({ configured: false, reachable: false, checked_at: null, error: null, processor: null });
    } finally {
      await bare.close();
    }
  });

  it('relays a ready processor, sending the URL credentials as Basic auth and never showing them', async () => {
    processor.mode = 'ready';
    const s = await statusWhen((x) => x.reachable);
    expect(s).toMatchObject({ configured: true, reachable: true, error: null });
    expect(s.processor).toEqual(sampleProcessorReady());
    expect(Date.parse(s.checked_at!)).not.toBeNaN();
    expect(processor.authorizations.at(-1)).toBe(`Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`);
    expectNoSecret(s);
  });

  it('relays a processor answering 503 not_ready: reachable, with its body', async () => {
    processor.mode = 'not_ready';
    const s = await statusWhen((x) => x.processor?.status === 'not_ready');
    expect(s.reachable).toBe(true);
    expect(s.error).toBeNull();
    expect(s.processor).toEqual({ ...sampleProcessorReady(), status: 'not_ready' });
  });

  it('a processor answering something that is not a ProcessorReady: unreachable, "unexpected answer"', async () => {
    processor.mode = 'garbage';
    const s = await statusWhen((x) => !x.reachable);
    expect(s).toMatchObject({ configured: true, reachable: false, error: 'unexpected answer', processor: null });
    // It recovers on the next check once the answer is right again.
    processor.mode = 'ready';
    expect((await statusWhen((x) => x.reachable)).processor?.status).toBe('ready');
  });

  it('a processor that is gone: unreachable with an error, no credentials in it', async () => {
    await processor.close();
    const s = await statusWhen((x) => !x.reachable);
    expect(s.configured).toBe(true);
    expect(s.processor).toBeNull();
    expect(s.error).toMatch(/cannot be reached|no answer/);
    expectNoSecret(s);
  });
});
