/**
 * POST /api/chat and GET /api/chat/status over real HTTP, against an OpenAI-compatible TEST DOUBLE on
 * 127.0.0.1 (no real LLM can run here) that records what it received.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, trainingCaptures } from '../helpers/faces.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { getJson, postJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

const KEY = 'sk-test-key-never-shown-1234';
let llm: OpenAIDouble;
let server: TestServer;

beforeAll(async () => {
  llm = await startOpenAIDouble();
  server = await startTestServer({
    CHAT_ENDPOINT: llm.url,
    CHAT_MODEL: 'double-model',
    CHAT_API_KEY: KEY,
    CHAT_TIMEOUT_MS: '1500',
    CHAT_CHECK_INTERVAL_MS: '300',
    CHAT_SYSTEM_PROMPT: 'You are the Lookout test assistant.',
  });
  for (const capture of await trainingCaptures('grace')) expect((await uploadImage(server.url, 'grace', capture)).status).toBe(200);
  expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
});

afterAll(async () => {
  await server?.close();
  await llm?.close();
});

function userText(request: { body: unknown }): string {
  const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
  return messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
}

describe('POST /api/chat', () => {
  it('with an image: the prompt holds the system text, the analysis of that image and the question', async () => {
    llm.mode = 'ok';
    const before = llm.completions().length;
    const image = base64(await readTestImage('faces/grace_hopper.jpg'));
    const { status, body } = await postJson(`${server.url}/api/chat`, { message: 'Who is in this picture?', image });
    expect(status).toBe(200);
    expect(body.response).toBe(llm.reply);
    expect(body.analysis.detection_method).toBe('local');
    expect(body.analysis.faces.map((f: { label: string }) => f.label)).toEqual(['grace']);
    expect(body.analysis.objects.some((o: { class_name: string }) => o.class_name === 'person')).toBe(true);

    const sent = llm.completions()[before];
    const messages = (sent.body as { messages: { role: string; content: string }[] }).messages;
    expect(messages[0]).toEqual({ role: 'system', content: 'You are the Lookout test assistant.' });
    const text = userText(sent);
    expect(text).toContain('Who is in this picture?');
    expect(text).toContain('grace');
    expect(text).toContain('person');
    expect(text).toMatch(/local/);
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect((sent.body as { model: string }).model).toBe('double-model');
  });

  it('without an image: only the message, no image context', async () => {
    const before = llm.completions().length;
    const { status, body } = await postJson(`${server.url}/api/chat`, { message: 'What can you do?' });
    expect(status).toBe(200);
    expect(body.analysis).toBeNull();
    const text = userText(llm.completions()[before]);
    expect(text).toContain('What can you do?');
    expect(text).not.toMatch(/grace|face|person|detection/i);
  });

  it('streams the reply as server-sent events: analysis, deltas in order, done', async () => {
    const res = await fetch(`${server.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Describe it', image: base64(await readTestImage('objects/chelsea.png')), stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await res.text();
    const events = [...text.matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => ({ event: m[1], data: JSON.parse(m[2]) }));
    expect(events[0].event).toBe('analysis');
    expect(events[0].data.objects.some((o: { class_name: string }) => o.class_name === 'cat')).toBe(true);
    const deltas = events.filter((e) => e.event === 'delta').map((e) => e.data.content);
    expect(deltas).toEqual(llm.pieces);
    expect(events.at(-1)).toEqual({ event: 'done', data: { response: llm.pieces.join('') } });
  });

  it('a message over the length limit, an empty one and a bad image are 400s', async () => {
    expect((await postJson(`${server.url}/api/chat`, { message: 'x'.repeat(4001) })).status).toBe(400);
    expect((await postJson(`${server.url}/api/chat`, { message: '   ' })).status).toBe(400);
    const bad = await postJson(`${server.url}/api/chat`, { message: 'hi', image: 'nope!' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_image');
  });

  it.each([
    ['error500', 502, 'llm_bad_gateway'],
    ['error401', 502, 'llm_bad_gateway'],
    ['not_openai', 502, 'llm_bad_gateway'],
    ['malformed', 502, 'llm_bad_gateway'],
    ['slow', 504, 'llm_timeout'],
  ] as const)('an LLM answering %s gives %i %s, never the key', async (mode, status, code) => {
    llm.mode = mode;
    llm.delayMs = 3000;
    try {
      const res = await postJson(`${server.url}/api/chat`, { message: 'hello' });
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(JSON.stringify(res.body)).not.toContain(KEY);
    } finally {
      llm.mode = 'ok';
    }
  });

  it('an LLM that is down gives 503 llm_unavailable, and the status says so', async () => {
    await llm.stop();
    try {
      const res = await postJson(`${server.url}/api/chat`, { message: 'hello' });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('llm_unavailable');
      await expect.poll(async () => (await getJson(`${server.url}/api/chat/status`)).body.reachable, { timeout: 5000 }).toBe(false);
    } finally {
      await llm.start();
    }
    await expect.poll(async () => (await getJson(`${server.url}/api/chat/status`)).body.reachable, { timeout: 5000 }).toBe(true);
  });
});

describe('GET /api/chat/status', () => {
  it('reports enabled, endpoint and model, never the key', async () => {
    const { status, body } = await getJson(`${server.url}/api/chat/status`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ enabled: true, endpoint_configured: true, model: 'double-model', reachable: true });
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  it('chat disabled or not configured: 503 with a clear code', async () => {
    const off = await startTestServer({
      CHAT_ENABLED: 'false',
      CHAT_ENDPOINT: llm.url,
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    });
    const unconfigured = await startTestServer({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
    try {
      const a = await postJson(`${off.url}/api/chat`, { message: 'hi' });
      expect(a.status).toBe(503);
      expect(a.body.error.code).toBe('chat_disabled');
      const b = await postJson(`${unconfigured.url}/api/chat`, { message: 'hi' });
      expect(b.status).toBe(503);
      expect(b.body.error.code).toBe('chat_not_configured');
      expect((await getJson(`${unconfigured.url}/api/chat/status`)).body).toMatchObject({
        enabled: false,
        switched_on: true,
        endpoint_configured: false,
      });
    } finally {
      await off.close();
      await unconfigured.close();
    }
  });
});

describe('offline chat (CHAT_MODEL_PATH, a GGUF served in-process by node-llama-cpp)', () => {
  it('answers through the same API with a tiny random-weight model the test writes', async () => {
    const { writeTinyGguf } = await import('../helpers/tiny-gguf.js');
    const fs = await import('node:fs/promises');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-gguf-'));
    const model = path.join(dir, 'tiny.gguf');
    await writeTinyGguf(model, { seed: 7 });
    const offline = await startTestServer({
      CHAT_MODEL_PATH: model,
      CHAT_MAX_TOKENS: '8',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    });
    try {
      const { status, body } = await postJson(`${offline.url}/api/chat`, { message: 'Say something' });
      expect(status).toBe(200);
      expect(typeof body.response).toBe('string');
      expect(body.response.length).toBeGreaterThan(0); // the words are nonsense: the weights are random
      await expect.poll(async () => (await getJson(`${offline.url}/api/chat/status`)).body.reachable, { timeout: 5000 }).toBe(true);
      expect((await getJson(`${offline.url}/api/chat/status`)).body.model).toBe('tiny');
    } finally {
      await offline.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('a CHAT_MODEL_PATH that cannot be loaded stops start-up with a message naming it', async () => {
    await expect(startTestServer({ CHAT_MODEL_PATH: '/nonexistent/model.gguf', OBJECT_DETECTION_ENABLED: 'false' })).rejects.toThrow(
      /CHAT_MODEL_PATH/,
    );
  });
});
