/**
 * GET /api/processor/status over real HTTP: the API server reads the event processor's `GET /ready` in the
 * background and relays the last answer. The processor is the REAL one (test/helpers/processor-harness.ts: the
 * in-process queue and the file outbox by default, or Kafka at an address nothing listens on), polling the very
 * API server that relays it, as deployed. PROCESSOR_URL carries credentials, which must never come back; what
 * the relay sends them as is seen by a plain HTTP server that is no processor at all, put where the processor was.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProcessorReady, ProcessorStatusResponse } from '../../shared/api/index.js';
import { freePort, type InProcessProcessor, outbox, startProcessor, tempDir, waitFor } from '../helpers/processor-harness.js';
import { getJson, readTestImage, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

// The relay needs none of the engines but face detection, for the label registered in one test.
const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };
const USER = 'relay-user';
const PASSWORD = 'pr0cessor-secret-pw';

/** The port PROCESSOR_URL names: the processor's, then a plain HTTP server's, then the processor's again. */
let port: number;
let dataDir: string;
/** The API server: it relays the processor, which polls its labels. */
let server: TestServer;
let processor: InProcessProcessor | null = null;
const cleanup: (() => Promise<unknown>)[] = [];

function processorEnv(): Record<string, string> {
  return { DATA_DIR: dataDir, PROCESSOR_BACKEND_URL: server.url, PROCESSOR_PORT: String(port) };
}

beforeAll(async () => {
  port = await freePort();
  dataDir = await tempDir();
  const url = new URL(`http://127.0.0.1:${port}`);
  url.username = USER;
  url.password = PASSWORD;
  server = await startTestServer({ ...LIGHT, PROCESSOR_URL: url.href, PROCESSOR_CHECK_INTERVAL_MS: '100' });
  processor = await startProcessor(processorEnv());
});

afterAll(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  await processor?.close();
  await server?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

async function status(base: string): Promise<ProcessorStatusResponse> {
  const { status, body } = await getJson(`${base}/api/processor/status`);
  expect(status).toBe(200);
  return body as ProcessorStatusResponse;
}

/** Polls a relay until `done` holds for an answer checked after `since` (the background check runs every 100 ms). */
async function statusWhen(
  done: (s: ProcessorStatusResponse) => boolean,
  base = server.url,
  since = new Date().toISOString(),
): Promise<ProcessorStatusResponse> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    const s = await status(base);
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

/** A /ready body without what moves between two reads (uptime, the time of the last poll). */
function steady(r: ProcessorReady | null): unknown {
  if (!r) return r;
  return { ...r, uptime_s: 0, polls: { ...r.polls, labels: { ...r.polls.labels, last_at: null } } };
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

  it('relays a ready processor on the in-process queue, its body as it answers it, never the URL credentials', async () => {
    await waitFor('the first poll of the labels', async () => (await processor!.ready()).polls.labels.ok);
    const s = await statusWhen((x) => x.processor?.status === 'ready' && x.processor.polls.labels.ok === true);
    expect(s).toMatchObject({ configured: true, reachable: true, error: null });
    expect(Date.parse(s.checked_at!)).not.toBeNaN();
    expect(s.processor).toMatchObject({
      status: 'ready',
      version: 'test',
      broker: { kind: 'in-process', connected: true, brokers: [], topic: 'cv.face.detections' },
      role: 'polling',
      polls: { interval_ms: 250, labels: { ok: true, error: null, known_labels: 0, announced: 0, pending: 0 }, remote: null },
      queue: { invalid: 0, unknown_skipped: 0 },
      mail: {
        transport: 'file',
        target: path.join(dataDir, 'outbox'),
        sent: 0,
        failed_attempts: 0,
        dead_lettered: 0,
        last_sent_at: null,
        last_error: null,
      },
    });
    // The processor's own answer, relayed as it is.
    expect(steady(s.processor)).toEqual(steady(await processor!.ready()));
    expectNoSecret(s);
  });

  it("relays the processor's counters: a label registered after its first poll is one mail sent, in the outbox", async () => {
    const face = await readTestImage('faces/grace_hopper.jpg');
    expect((await uploadImage(server.url, 'ada', face)).status).toBe(200);
    const s = await statusWhen((x) => x.processor?.mail.sent === 1);
    expect(s.processor!.polls.labels).toMatchObject({ ok: true, known_labels: 1, announced: 1, pending: 0 });
    expect(s.processor!.mail).toMatchObject({ transport: 'file', sent: 1, failed_attempts: 0, dead_lettered: 0, last_error: null });
    expect(Date.parse(s.processor!.mail.last_sent_at!)).not.toBeNaN();
    const mails = await outbox(dataDir);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.raw).toMatch(/^Subject: New person registered: ada/m);
    expectNoSecret(s);
  });

  it('relays a processor answering 503 not_ready (Kafka unreachable): reachable, with its body', async () => {
    const kafka = await startProcessor({ DATA_DIR: await tempDir(), PROCESSOR_BACKEND_URL: server.url, KAFKA_BROKERS: '127.0.0.1:1' });
    cleanup.push(() => kafka.close());
    const relay = await startTestServer({ ...LIGHT, PROCESSOR_URL: kafka.url, PROCESSOR_CHECK_INTERVAL_MS: '100' });
    cleanup.push(() => relay.close());
    expect((await fetch(`${kafka.url}/ready`)).status).toBe(503);
    const s = await statusWhen((x) => x.processor !== null, relay.url);
    expect(s).toMatchObject({ configured: true, reachable: true, error: null });
    expect(s.processor).toMatchObject({
      status: 'not_ready',
      broker: { kind: 'kafka', connected: false, brokers: ['127.0.0.1:1'] },
      role: 'stopped',
      polls: { labels: { last_at: null } },
      mail: { transport: 'file', sent: 0 },
    });
    expect(steady(s.processor)).toEqual(steady(await kafka.ready()));
  });

  it('a server answering something that is not a ProcessorReady: unreachable, "unexpected answer"; back with the processor', async () => {
    await processor!.close();
    processor = null;
    // A plain HTTP server where the processor was: it answers /ready, but not as a processor does.
    const requests: { path: string | undefined; authorization: string | undefined }[] = [];
    const other = http.createServer((req, res) => {
      requests.push({ path: req.url, authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', service: 'not a processor' }));
    });
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
    try {
      const s = await statusWhen((x) => x.error === 'unexpected answer');
      expect(s).toMatchObject({ configured: true, reachable: false, error: 'unexpected answer', processor: null });
      expectNoSecret(s);
      // The URL's credentials go as Basic auth, as a browser would send them.
      expect(requests.at(-1)).toEqual({ path: '/ready', authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` });
    } finally {
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
    // It recovers on the next check once the processor answers there again (same state directory).
    processor = await startProcessor(processorEnv());
    // Reachable comes first, ready once its first poll of the API has answered (seconds, on a loaded machine).
    const back = await statusWhen((x) => x.reachable && x.processor?.status === 'ready');
    expect(back).toMatchObject({ error: null, processor: { status: 'ready', broker: { kind: 'in-process' } } });
  }, 120_000);

  it('a processor that is gone: unreachable with an error, no credentials in it', async () => {
    await processor!.close();
    processor = null;
    const s = await statusWhen((x) => !x.reachable);
    expect(s.configured).toBe(true);
    expect(s.processor).toBeNull();
    expect(s.error).toMatch(/cannot be reached|no answer/);
    expectNoSecret(s);
  });
});
