/**
 * Drop-in for the original service's clients (issue #19): every endpoint's real answer, over HTTP, matches the
 * original v1.2.0 shape (original-v1.2.0.ts) beside Lookout's own contract (which the test server checks on every
 * answer), in the states its clients meet: untrained, trained, remote detection on a real KServe V2 server on
 * 127.0.0.1, chat on (an OpenAI-compatible double), chat switched off and chat switched on with no model.
 * It also walks the original frontend's flows: its dashboard flags, its Model Config radios and Apply, its errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';
import * as original from './original-v1.2.0.js';

interface Answer {
  status: number;
  body: any;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The answer is a 200 in the original's shape; returns the body. */
function expectOriginal(schema: z.ZodType, answer: Answer, where: string): any {
  expect(answer.status, `${where}: ${JSON.stringify(answer.body)}`).toBe(200);
  const result = schema.safeParse(answer.body);
  const problems = result.success ? [] : result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);
  expect(problems, `${where} is not the original's shape`).toEqual([]);
  return answer.body;
}

/** An error as FastAPI clients read it: `detail`, the same sentence as Lookout's `error.message`. */
function expectDetail(answer: Answer, status: number, where: string): string {
  expect(answer.status, `${where}: ${JSON.stringify(answer.body)}`).toBe(status);
  expect(original.errorDetail.safeParse(answer.body).success, `${where}: no detail in ${JSON.stringify(answer.body)}`).toBe(true);
  expect(answer.body.detail).toBe(answer.body.error.message);
  return answer.body.detail;
}

/** Waits for a condition outside a test (expect.poll only runs inside one). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function uploadForm(label: string, bytes: Uint8Array): FormData {
  const form = new FormData();
  form.set('label', label);
  form.set('file', new Blob([bytes], { type: 'image/jpeg' }), 'capture.jpg');
  return form;
}

/** The endpoints that read state, each against its original shape: the same in every state. */
async function expectStateful(base: string, state: string): Promise<{ ready: any; config: any; available: any }> {
  expectOriginal(original.health, await call(base, 'GET', '/api/health'), `${state}: GET /api/health`);
  const ready = expectOriginal(original.ready, await call(base, 'GET', '/api/ready'), `${state}: GET /api/ready`);
  const config = expectOriginal(original.modelsConfig, await call(base, 'GET', '/api/models/config'), `${state}: GET /api/models/config`);
  const available = expectOriginal(
    original.modelsAvailable,
    await call(base, 'GET', '/api/models/available'),
    `${state}: GET /api/models/available`,
  );
  expectOriginal(original.labels, await call(base, 'GET', '/api/labels'), `${state}: GET /api/labels`);
  expectOriginal(original.chatStatus, await call(base, 'GET', '/api/chat/status'), `${state}: GET /api/chat/status`);
  expectOriginal(original.objectClasses, await call(base, 'GET', '/api/objects/classes'), `${state}: GET /api/objects/classes`);
  expectOriginal(original.objectStatus, await call(base, 'GET', '/api/objects/status'), `${state}: GET /api/objects/status`);
  // The dashboard and the Model Config page read the same facts from two answers: they must agree.
  expect(ready.model_loaded).toBe(config.is_trained);
  expect(ready.ai_model).toBe(config.ai_model);
  return { ready, config, available };
}

describe('untrained, then trained (local detection, chat on an OpenAI-compatible double)', () => {
  let llm: OpenAIDouble;
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    llm = await startOpenAIDouble();
    server = await startTestServer({
      WORKERS: '1',
      EMBEDDING_ENABLED: 'false',
      CHAT_ENDPOINT: llm.url,
      CHAT_MODEL: 'double-model',
      CHAT_CHECK_INTERVAL_MS: '300',
    });
    base = server.url;
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
  });

  it('untrained: every reading endpoint answers the original shape; the dashboard says "Model Not Trained"', async () => {
    const { ready, config } = await expectStateful(base, 'untrained');
    expect(ready).toMatchObject({ model_loaded: false, ai_model: 'lbph', detection_method: 'local', ovms_enabled: false });
    // No remote server configured: the original showed no remote chip, so there is no ovms_status.
    expect(ready.ovms_status).toBeUndefined();
    expect(config).toMatchObject({ is_trained: false, ovms_info: null, model_info: { type: 'lbph' } });
    const recognized = expectOriginal(
      original.recognize,
      await call(base, 'POST', '/api/recognize', { image: base64(await photo('grace')) }),
      'untrained: POST /api/recognize',
    );
    expect(recognized.faces.map((f: { label: string; confidence: number }) => [f.label, f.confidence])).toEqual([['unknown', 0]]);
  });

  it('untrained: errors carry detail (training without images, a bad image, deleting an unknown label, an unknown path)', async () => {
    expect(expectDetail(await call(base, 'POST', '/api/train', {}), 422, 'POST /api/train with no images')).toMatch(/images/);
    expectDetail(await call(base, 'POST', '/api/recognize', { image: 'bm90IGFuIGltYWdl' }), 400, 'POST /api/recognize, not an image');
    // Listing a label nobody enrolled is not an error: the original answered an empty list.
    const nobody = expectOriginal(original.labelImages, await call(base, 'GET', '/api/images/nobody'), 'GET /api/images/nobody');
    expect(nobody).toMatchObject({ label: 'nobody', images: [], count: 0 });
    expectDetail(await call(base, 'DELETE', '/api/images/nobody'), 404, 'DELETE /api/images/nobody');
    expectDetail(await call(base, 'GET', '/api/nothing-here'), 404, 'GET /api/nothing-here');
    expectDetail(await call(base, 'GET', '/api/train'), 405, 'GET /api/train');
  });

  it('uploads as the original frontend and the Keycloak extension do (multipart label + file), and lists file names', async () => {
    for (const capture of await trainingCaptures('grace')) {
      const stored = expectOriginal(
        original.upload,
        await call(base, 'POST', '/api/images', uploadForm('Grace', capture)),
        'POST /api/images',
      );
      expect(stored.path).toBe(`images/grace/${stored.filename}`);
    }
    const listed = expectOriginal(original.labelImages, await call(base, 'GET', '/api/images/grace'), 'GET /api/images/grace');
    expect(listed.count).toBe(4);
    expect(listed.images.every((name: string) => /^[\w-]+\.jpg$/.test(name))).toBe(true);
  });

  it('trained: train, recognize, the dashboard flags and the Model Config page follow', async () => {
    const trained = expectOriginal(original.train, await call(base, 'POST', '/api/train'), 'POST /api/train (no body)');
    expect(trained).toMatchObject({ labels: ['grace'], total_faces: 4, total_labels: 1, detection_method: 'local' });
    const { ready, config } = await expectStateful(base, 'trained');
    expect(ready.model_loaded).toBe(true);
    expect(config.is_trained).toBe(true);
    const recognized = expectOriginal(
      original.recognize,
      await call(base, 'POST', '/api/recognize', { image: base64(await photo('grace')) }),
      'trained: POST /api/recognize',
    );
    expect(recognized.faces.map((f: { label: string; detection_method: string }) => [f.label, f.detection_method])).toEqual([
      ['grace', 'local'],
    ]);
  });

  it('analyze: every face with its features and the cascades loaded, as the original answered', async () => {
    const analyzed = expectOriginal(
      original.analyze,
      await call(base, 'POST', '/api/analyze', { image: base64(await photo('grace')) }),
      'POST /api/analyze',
    );
    expect(analyzed.count).toBe(1);
    expect(analyzed.faces[0]).toMatchObject({
      label: 'grace',
      detection_method: 'local',
      features: { glasses_detected: true, eyes_detected: 2 },
    });
    expect(analyzed.cascades_loaded).toEqual({ face: true, eye: true, smile: true, profile: true, eye_glasses: true });
    expect(typeof analyzed.faces[0].features.profile_face).toBe('boolean');
    expectDetail(await call(base, 'POST', '/api/analyze', { image: 'bm90IGFuIGltYWdl' }), 400, 'POST /api/analyze, not an image');
  });

  it('Model Config: each available model and method applies by its `type`, and the answer replaces the page config', async () => {
    const available = expectOriginal(
      original.modelsAvailable,
      await call(base, 'GET', '/api/models/available'),
      'GET /api/models/available',
    );
    for (const model of available.models) {
      const put = await call(base, 'PUT', '/api/models/config', { ai_model: model.type });
      if (!model.available) {
        // The original frontend shows the reason from detail (embedding is switched off on this server).
        expectDetail(put, 409, `PUT /api/models/config ${model.type}`);
        continue;
      }
      const updated = expectOriginal(original.modelsConfigUpdate, put, `PUT /api/models/config ${model.type}`);
      expect(updated.ai_model).toBe(model.type);
    }
    // Its original name for the embedding model is read the same way.
    expectDetail(await call(base, 'PUT', '/api/models/config', { ai_model: 'dlib' }), 409, 'PUT /api/models/config dlib');
    expect(expectDetail(await call(base, 'PUT', '/api/models/config', { ai_model: 'magic' }), 400, 'magic')).toMatch(/lbph/);
    for (const method of available.detection_methods) {
      const put = await call(base, 'PUT', '/api/models/detection', { detection_method: method.type });
      if (!method.available) {
        expectDetail(put, 409, `PUT /api/models/detection ${method.type}`);
        continue;
      }
      expect(expectOriginal(original.detectionUpdate, put, `PUT /api/models/detection ${method.type}`).detection_method).toBe(method.type);
    }
  });

  it('objects: detect, classes and status in the original shapes', async () => {
    const detected = expectOriginal(
      original.objectDetect,
      await call(base, 'POST', '/api/objects/detect', { image: base64(await readTestImage('objects/coffee.png')) }),
      'POST /api/objects/detect',
    );
    expect(detected.count).toBe(detected.objects.length);
    const { body: ready } = await call(base, 'GET', '/api/ready');
    expect(ready.object_detection).toBe(true);
    const status = expectOriginal(original.objectStatus, await call(base, 'GET', '/api/objects/status'), 'GET /api/objects/status');
    expect(status).toMatchObject({ available: true, classes_count: 80 });
  });

  it('chat on: status names the model and endpoint, and a question with an image is answered in the original shape', async () => {
    await expect.poll(async () => (await call(base, 'GET', '/api/chat/status')).body.reachable, { timeout: 5000 }).toBe(true);
    const status = expectOriginal(original.chatStatus, await call(base, 'GET', '/api/chat/status'), 'GET /api/chat/status');
    expect(status).toMatchObject({ enabled: true, model_name: 'double-model', model_endpoint: llm.url });
    expect((await call(base, 'GET', '/api/ready')).body.chat_enabled).toBe(true);
    expect((await call(base, 'GET', '/api/models/config')).body.chat_enabled).toBe(true);
    const reply = expectOriginal(
      original.chat,
      await call(base, 'POST', '/api/chat', { message: 'Who is this?', image: base64(await photo('grace')) }),
      'POST /api/chat with an image',
    );
    expect(reply.analysis.faces.map((f: { label: string }) => f.label)).toEqual(['grace']);
    // The original's count and feature names (Grace Hopper wears glasses).
    expect(reply.analysis.count).toBe(1);
    expect(reply.analysis.faces[0].features).toMatchObject({ glasses_detected: true, eyes_detected: 2 });
    const plain = expectOriginal(original.chat, await call(base, 'POST', '/api/chat', { message: 'Hello?' }), 'POST /api/chat');
    expect(plain.analysis).toBeNull();
  });

  it('trained: deleting a label answers the original shape', async () => {
    expectOriginal(original.labelDelete, await call(base, 'DELETE', '/api/images/grace'), 'DELETE /api/images/grace');
  });
});

describe('remote detection (KServe V2 model server on 127.0.0.1)', () => {
  let modelServer: RunningModelServer;
  let server: TestServer;
  let base: string;

  beforeAll(async () => {
    modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
    server = await startTestServer({
      WORKERS: '1',
      EMBEDDING_ENABLED: 'false',
      OBJECT_DETECTION_ENABLED: 'false',
      CHAT_ENABLED: 'false',
      REMOTE_DETECTOR_URL: modelServer.url,
      REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200',
    });
    base = server.url;
    await until(async () => (await call(base, 'GET', '/api/ready')).body.remote_status === 'connected', 'the remote server connected');
  });
  afterAll(async () => {
    await server?.close();
    await modelServer?.close();
  });

  it('reports the remote server as the original did (ovms_enabled, ovms_status, ovms_info)', async () => {
    const { ready, config, available } = await expectStateful(base, 'remote');
    expect(ready).toMatchObject({ ovms_enabled: true, ovms_status: 'connected', object_detection: false, chat_enabled: false });
    // The original Model Config page: "OVMS Status: Connected" from `available`, the model and `rest_url`.
    expect(config.ovms_info).toMatchObject({ available: true, model_name: 'face-detection-retail-0005', rest_url: modelServer.url });
    expect(available.detection_methods.find((m: { type: string }) => m.type === 'remote')).toMatchObject({ available: true });
  });

  it('switches to remote with the original value, and recognize and train report it', async () => {
    const switched = expectOriginal(
      original.detectionUpdate,
      await call(base, 'PUT', '/api/models/detection', { detection_method: 'openvino' }),
      'PUT /api/models/detection openvino',
    );
    // The identifier stays the spec's: the original frontend shows "OpenCV" for anything but `openvino` (docs/migrating.md).
    expect(switched.detection_method).toBe('remote');
    expect(switched.ovms_info).toMatchObject({ available: true, status: 'connected', rest_url: modelServer.url });
    for (const capture of await trainingCaptures('eileen')) {
      expectOriginal(original.upload, await call(base, 'POST', '/api/images', uploadForm('eileen', capture)), 'POST /api/images');
    }
    const trained = expectOriginal(original.train, await call(base, 'POST', '/api/train', {}), 'remote: POST /api/train');
    expect(trained.detection_method).toBe('remote');
    const recognized = expectOriginal(
      original.recognize,
      await call(base, 'POST', '/api/recognize', { image: base64(await photo('eileen')) }),
      'remote: POST /api/recognize',
    );
    expect(recognized.detection_method).toBe('remote');
    expect(recognized.faces.map((f: { detection_method: string }) => f.detection_method)).toEqual(['remote']);
    expect((await call(base, 'GET', '/api/ready')).body).toMatchObject({ model_loaded: true, detection_method: 'remote' });
  });

  it('objects switched off: status and classes in the original shape, detect refused with detail', async () => {
    const status = expectOriginal(original.objectStatus, await call(base, 'GET', '/api/objects/status'), 'GET /api/objects/status');
    expect(status.available).toBe(false);
    const refused = await call(base, 'POST', '/api/objects/detect', { image: base64(await readTestImage('objects/coffee.png')) });
    expectDetail(refused, 503, 'POST /api/objects/detect, detector off');
  });

  it('the remote server gone: ovms_status follows, and a remote request is refused with detail', async () => {
    await modelServer.close();
    await expect.poll(async () => (await call(base, 'GET', '/api/ready')).body.ovms_status, { timeout: 15_000 }).toBe('unreachable');
    expectOriginal(original.ready, await call(base, 'GET', '/api/ready'), 'GET /api/ready, remote gone');
    // The original Model Config page says "OVMS Status: Unreachable" only now.
    expect((await call(base, 'GET', '/api/models/config')).body.ovms_info).toMatchObject({ available: false, status: 'unreachable' });
    const refused = await call(base, 'POST', '/api/recognize', { image: base64(await photo('eileen')) });
    expectDetail(refused, 503, 'POST /api/recognize, remote gone');
  });
});

describe('chat off', () => {
  let off: TestServer;
  let unconfigured: TestServer;

  beforeAll(async () => {
    const lean = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false' };
    [off, unconfigured] = await Promise.all([
      startTestServer({ ...lean, CHAT_ENABLED: 'false', CHAT_ENDPOINT: 'http://127.0.0.1:9/v1' }),
      startTestServer({ ...lean, CHAT_ENABLED: 'true', CHAT_ENDPOINT: '', CHAT_MODEL_PATH: '' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([off?.close(), unconfigured?.close()]);
  });

  it('switched off: not enabled, every endpoint keeps its original shape, and chat is refused with detail', async () => {
    const { ready, config } = await expectStateful(off.url, 'chat off');
    expect(ready.chat_enabled).toBe(false);
    expect(config.chat_enabled).toBe(false);
    const status = expectOriginal(original.chatStatus, await call(off.url, 'GET', '/api/chat/status'), 'GET /api/chat/status');
    expect(status.enabled).toBe(false);
    expect(expectDetail(await call(off.url, 'POST', '/api/chat', { message: 'Hello?' }), 503, 'POST /api/chat, off')).toMatch(
      /CHAT_ENABLED/,
    );
  });

  it('switched on with no endpoint and no model path: not enabled, with the reason, so no client offers a chat that fails', async () => {
    const status = expectOriginal(
      original.chatStatus,
      await call(unconfigured.url, 'GET', '/api/chat/status'),
      'GET /api/chat/status, unconfigured',
    );
    expect(status).toMatchObject({ enabled: false, switched_on: true, model_endpoint: null, model_name: null });
    expect(status.reason).toMatch(/CHAT_ENDPOINT or CHAT_MODEL_PATH/);
    expect((await call(unconfigured.url, 'GET', '/api/ready')).body.chat_enabled).toBe(false);
    expectDetail(await call(unconfigured.url, 'POST', '/api/chat', { message: 'Hello?' }), 503, 'POST /api/chat, unconfigured');
  });
});
