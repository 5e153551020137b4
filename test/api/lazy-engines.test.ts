/**
 * #38 2: the object detector and the embedding worker load on first use, not at start, and are let go after
 * ENGINE_IDLE_RELEASE_S without work. Over real HTTP: right after a start /api/ready says they are not loaded
 * (and stays ready), the first request is answered right (it waits for the load; concurrent first requests
 * share one), /api/ready then says loaded, and after the idle time they are let go and the next request is
 * answered right again.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

/** Short enough for a test, long enough that a loaded engine is still there when /api/ready is asked next. */
const IDLE_RELEASE_S = '2';

async function ready(server: TestServer) {
  const res = await getJson(`${server.url}/api/ready`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Polls /api/ready until `field` is `state` (the idle release runs on a timer). */
async function waitFor(server: TestServer, field: string, state: string, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const body = await ready(server);
    if (body[field] === state) return body;
    if (Date.now() > deadline) throw new Error(`${field} stayed ${body[field]}, not ${state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('the object detector loads on first use', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ ENGINE_IDLE_RELEASE_S: IDLE_RELEASE_S });
  });
  afterAll(async () => {
    await server?.close();
  });

  const detectCat = async () => {
    const res = await postJson(`${server.url}/api/objects/detect`, { image: base64(await readTestImage('objects/chelsea.png')) });
    expect(res.status).toBe(200);
    expect(res.body.objects.map((o: { class_name: string }) => o.class_name)).toContain('cat');
    return res.body;
  };

  it('is not loaded after the start, and readiness does not wait for it', async () => {
    const body = await ready(server);
    expect(body).toMatchObject({
      status: 'ready',
      object_detection_state: 'not_loaded',
      object_detection: true,
      embedding_state: 'not_loaded',
    });
    const status = await getJson(`${server.url}/api/objects/status`);
    expect(status.body).toMatchObject({ state: 'not_loaded', available: true });
    expect(server.service.ctx.objects.loads).toBe(0);
  });

  it('answers the first requests right, with one load for concurrent ones, then says it is loaded', async () => {
    const [a, b] = await Promise.all([detectCat(), detectCat()]);
    expect(a).toEqual(b);
    expect(server.service.ctx.objects.loads).toBe(1);
    expect(await ready(server)).toMatchObject({ object_detection_state: 'ready', object_detection: true });
    const status = await getJson(`${server.url}/api/objects/status`);
    expect(status.body).toMatchObject({ state: 'ready', available: true, name: 'nanodet', input_size: 416 });
    expect(status.body.load_ms).toBeGreaterThan(0);
  });

  it('is let go after the idle time, and the next request is answered right again', async () => {
    const before = await detectCat();
    await waitFor(server, 'object_detection_state', 'not_loaded');
    expect((await ready(server)).object_detection).toBe(true);
    expect(await detectCat()).toEqual(before);
    expect(server.service.ctx.objects.loads).toBe(2);
    expect((await ready(server)).object_detection_state).toBe('ready');
  });
});

describe('the embedding worker loads on first use', () => {
  let dataDir: string;
  let server: TestServer;
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-lazy-'));
    // Trained by one server (the training loads the nets), recognized by a fresh one on the same data.
    const trainer = await startTestServer({}, dataDir);
    try {
      for (const person of ['grace', 'eileen', 'lionel'] as const) {
        for (const capture of await trainingCaptures(person)) expect((await uploadImage(trainer.url, person, capture)).status).toBe(200);
      }
      expect((await postJson(`${trainer.url}/api/train`, {})).body.recognizers_trained).toEqual(['lbph', 'embedding']);
    } finally {
      await trainer.close();
    }
    server = await startTestServer({ ENGINE_IDLE_RELEASE_S: IDLE_RELEASE_S, SIGHTINGS_ENABLED: 'false' }, dataDir);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const recognizeGrace = async () => {
    const res = await postJson(`${server.url}/api/recognize`, {
      image: base64(await rescaled('grace', 0.7)),
      recognition_model: 'embedding',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ recognition_model: 'embedding', trained: true });
    expect(res.body.faces[0]).toMatchObject({ label: 'grace' });
    expect(res.body.faces[0].distance).toBeLessThanOrEqual(0.6);
    return res.body.faces[0];
  };

  it('is not loaded after the start, and the recognizer is offered all the same', async () => {
    expect(await ready(server)).toMatchObject({ status: 'ready', embedding_state: 'not_loaded' });
    const { body } = await getJson(`${server.url}/api/models/available`);
    expect(body.recognition_models.find((m: { name: string }) => m.name === 'embedding')).toMatchObject({ available: true, trained: true });
    expect(server.service.ctx.embedding?.loads).toBe(0);
  });

  it('names the face right on the first recognition after the start, then says it is loaded', async () => {
    const [a, b] = await Promise.all([recognizeGrace(), recognizeGrace()]);
    expect(a).toEqual(b);
    expect(server.service.ctx.embedding?.loads).toBe(1);
    expect((await ready(server)).embedding_state).toBe('ready');
  });

  it('is let go after the idle time, and the next recognition is right again', async () => {
    const before = await recognizeGrace();
    await waitFor(server, 'embedding_state', 'not_loaded');
    expect(await recognizeGrace()).toEqual(before);
    expect(server.service.ctx.embedding?.loads).toBe(2);
    expect((await ready(server)).embedding_state).toBe('ready');
  });
});
