/**
 * The original service's later clients (its Angular frontend up to v1.5.0), over real HTTP (issue #35): the PPE page
 * draws each detection from `objects[].bbox.{x1,y1,x2,y2}` and lists `expected_ppe` (it threw "Cannot read
 * properties of undefined (reading 'x1')"), and `GET /api/ready` names its upstreams in `ppe_serving` and
 * `chat_backend` as the original did. One test per field. The PPE detector is a TEST DOUBLE
 * (test/helpers/ppe-detector-double.ts), and so is the LLM (test/helpers/openai-double.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { base64 } from '../helpers/faces.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { startPpeDetectorDouble, type PpeDetectorDouble } from '../helpers/ppe-detector-double.js';
import { getJson, postJson, readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';
import * as original from './original-v1.5.0.js';

const SECRET = 'ppe-secret-35';

let detector: PpeDetectorDouble;
let llm: OpenAIDouble;
let server: TestServer;
let plain: TestServer;

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The body is in the original's shape; returns it. */
function expectOriginal(schema: z.ZodType, body: unknown, where: string): any {
  const result = schema.safeParse(body);
  const problems = result.success ? [] : result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
  expect(problems, `${where} is not the original's shape`).toEqual([]);
  return body;
}

beforeAll(async () => {
  detector = await startPpeDetectorDouble();
  llm = await startOpenAIDouble();
  const lean = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false' };
  [server, plain] = await Promise.all([
    startTestServer({
      ...lean,
      PPE_ENABLED: 'true',
      PPE_ENDPOINT: `http://ppe-user:${SECRET}@127.0.0.1:${detector.port}`,
      PPE_CHECK_INTERVAL_MS: '200',
      CHAT_ENDPOINT: llm.url,
      CHAT_MODEL: 'double-model',
      CHAT_CHECK_INTERVAL_MS: '300',
    }),
    startTestServer({ ...lean, PPE_ENABLED: 'false', CHAT_ENABLED: 'false' }),
  ]);
  await waitFor('the PPE detector check', async () => (await getJson(`${server.url}/api/ppe/status`)).body.reachable === true);
  await waitFor('the chat check', async () => (await getJson(`${server.url}/api/chat/status`)).body.reachable === true);
});

afterAll(async () => {
  await Promise.all([server?.close(), plain?.close()]);
  await detector?.close();
  await llm?.close();
});

describe('the v1.5.0 PPE page: POST /api/ppe/detect and GET /api/ppe/status', () => {
  let body: any;
  let sent: { class_name: string; bbox: { x1: number; y1: number; x2: number; y2: number } }[];

  beforeAll(async () => {
    detector.scene = 'equipped';
    const res = await postJson(`${server.url}/api/ppe/detect`, { image: base64(await readTestImage('faces/grace_hopper.jpg')) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    body = res.body;
    sent = detector.detectionsFor('equipped', body.width, body.height);
  });

  it("answers the original's shape", () => {
    expectOriginal(original.ppeDetect, body, 'POST /api/ppe/detect');
    expect(body.objects.length).toBe(sent.length);
  });

  for (const corner of ['x1', 'y1', 'x2', 'y2'] as const) {
    it(`objects[].bbox.${corner}: the detector's ${corner}, in pixels of the frame`, () => {
      for (const d of sent) {
        const o = body.objects.find((x: any) => x.class_name === d.class_name);
        expect(o.bbox[corner], `${d.class_name} ${corner}`).toBe(Math.round(d.bbox[corner]));
      }
    });
  }

  it("objects[].bbox agrees with Lookout's own x, y, w, h", () => {
    for (const o of body.objects) expect(o.bbox).toEqual({ x1: o.x, y1: o.y, x2: o.x + o.w, y2: o.y + o.h });
  });

  it('expected_ppe of the check: the expected items, each present or missing', () => {
    expect(body.expected_ppe).toEqual(['hardhat', 'safety-vest', 'goggles']);
    for (const item of body.expected_ppe) expect(body.present_ppe.includes(item) || body.missing_ppe.includes(item)).toBe(true);
  });

  it('expected_ppe of GET /api/ppe/status: the same items', async () => {
    const { status, body: ppe } = await getJson(`${server.url}/api/ppe/status`);
    expect(status).toBe(200);
    expectOriginal(original.ppeStatus, ppe, 'GET /api/ppe/status');
    expect(ppe.expected_ppe).toEqual(['hardhat', 'safety-vest', 'goggles']);
    expect(ppe.expected_ppe).toEqual(ppe.expected);
  });
});

describe('GET /api/ready: ppe_serving and chat_backend', () => {
  it("ppe_serving: the PPE detector's endpoint (no credentials) and connected", async () => {
    const { body } = await getJson(`${server.url}/api/ready`);
    expectOriginal(original.ready, body, 'GET /api/ready');
    expect(body.ppe_serving).toEqual({ endpoint: `http://127.0.0.1:${detector.port}`, status: 'connected' });
    expect(JSON.stringify(body)).not.toContain(SECRET);
  });

  it('chat_backend: the LLM endpoint, not through an AI gateway, and connected', async () => {
    const { body } = await getJson(`${server.url}/api/ready`);
    expect(body.chat_backend).toEqual({ endpoint: llm.url, via_ai_gateway: false, status: 'connected' });
  });

  it('ppe_serving follows the detector going away', async () => {
    await detector.stop();
    try {
      await waitFor(
        'ppe_serving unreachable',
        async () => (await getJson(`${server.url}/api/ready`)).body.ppe_serving?.status === 'unreachable',
        10_000,
      );
    } finally {
      await detector.start();
    }
    await waitFor('ppe_serving connected', async () => (await getJson(`${server.url}/api/ready`)).body.ppe_serving?.status === 'connected');
  });

  it('ppe_serving says error when the detector answers but cannot take checks (its model not loaded)', async () => {
    detector.healthReady = false;
    try {
      await waitFor(
        'ppe_serving error',
        async () => (await getJson(`${server.url}/api/ready`)).body.ppe_serving?.status === 'error',
        10_000,
      );
    } finally {
      detector.healthReady = true;
    }
    await waitFor('ppe_serving connected', async () => (await getJson(`${server.url}/api/ready`)).body.ppe_serving?.status === 'connected');
  });

  it('both absent when PPE and chat are off, as the original answered', async () => {
    const { body } = await getJson(`${plain.url}/api/ready`);
    expectOriginal(original.ready, body, 'GET /api/ready, PPE and chat off');
    expect(body).not.toHaveProperty('ppe_serving');
    expect(body).not.toHaveProperty('chat_backend');
  });
});
