/**
 * The `remote` engine end to end: Lookout on 127.0.0.1 talking KServe V2 to the project's own model server
 * (FaceBoxes) on 127.0.0.1. Switching at run time, status following the server up and down, and no request
 * lost while the method changes under load.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let modelServer: RunningModelServer;
let server: TestServer;

async function put(url: string, body: unknown) {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
  await waitFor(async () => (await fetch(`${modelServer.url}/v2/health/ready`)).status === 200, 'model server ready');
  server = await startTestServer({ REMOTE_DETECTOR_URL: modelServer.url, REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200' });
});

afterAll(async () => {
  await server?.close();
  await modelServer?.close();
});

describe('remote detection engine', () => {
  it('reports the remote server connected and both methods available', async () => {
    const ready = await getJson(`${server.url}/api/ready`);
    expect(ready.body.remote_status).toBe('connected');
    const available = await getJson(`${server.url}/api/models/available`);
    expect(available.body.detection_methods).toMatchObject([
      { name: 'local', type: 'local', available: true, active: true },
      { name: 'remote', type: 'remote', available: true, active: false, status: 'connected' },
    ]);
  });

  it('switches to remote (accepting the original alias) and recognize uses it', async () => {
    const res = await put(`${server.url}/api/models/detection`, { method: 'openvino' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', detection_method: 'remote' });
    const { status, body } = await postJson(`${server.url}/api/recognize`, { image: base64(await readTestImage('faces/sample5.jpg')) });
    expect(status).toBe(200);
    expect(body.detection_method).toBe('remote');
    expect(body.count).toBeGreaterThanOrEqual(5);
  });

  it('trains with the remote engine and recognises with it', async () => {
    for (const person of ['grace', 'eileen'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.status).toBe(200);
    expect(trained.body).toMatchObject({ detection_method: 'remote', total_faces: 8 });
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.8)) });
    expect(body.faces.map((f: { label: string }) => f.label)).toEqual(['eileen']);
  });

  it('rejects unknown methods with 400 and keeps the current one', async () => {
    const res = await put(`${server.url}/api/models/detection`, { detection_method: 'magic' });
    expect(res.status).toBe(400);
    expect((await getJson(`${server.url}/api/models/config`)).body.detection_method).toBe('remote');
  });

  it('switching while requests are in flight loses no request', async () => {
    const image = base64(await photo('grace'));
    const requests = Array.from({ length: 24 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 15)).then(() => postJson(`${server.url}/api/recognize`, { image })),
    );
    const switches = ['local', 'remote', 'local', 'remote'].map((method, i) =>
      new Promise((r) => setTimeout(r, 40 + i * 80)).then(() => put(`${server.url}/api/models/detection`, { detection_method: method })),
    );
    const [results, switched] = await Promise.all([Promise.all(requests), Promise.all(switches)]);
    expect(switched.every((s) => s.status === 200)).toBe(true);
    expect(results.every((r) => r.status === 200 && r.body.count === 1)).toBe(true);
    const methods = new Set(results.map((r) => r.body.detection_method));
    expect(methods).toEqual(new Set(['local', 'remote']));
  });

  it('a server that goes down: ready and available say so, recognize is a 503, local still works', async () => {
    // The switches above raced with requests on purpose; start this one from a known method.
    expect((await put(`${server.url}/api/models/detection`, { detection_method: 'remote' })).status).toBe(200);
    const { port } = modelServer;
    await modelServer.close();
    await waitFor(async () => (await getJson(`${server.url}/api/ready`)).body.remote_status === 'unreachable', 'unreachable');
    const available = await getJson(`${server.url}/api/models/available`);
    const remote = available.body.detection_methods.find((m: { name: string }) => m.name === 'remote');
    expect(remote.available).toBe(false);
    expect(remote.reason).toMatch(/cannot be reached/);

    const failed = await postJson(`${server.url}/api/recognize`, { image: base64(await photo('grace')) });
    expect(failed.status).toBe(503);
    expect(failed.body.error.code).toBe('remote_unavailable');

    const toLocal = await put(`${server.url}/api/models/detection`, { detection_method: 'local' });
    expect(toLocal.status).toBe(200);
    const toRemote = await put(`${server.url}/api/models/detection`, { detection_method: 'remote' });
    expect(toRemote.status).toBe(409);
    expect(toRemote.body.error.code).toBe('model_unavailable');
    expect((await postJson(`${server.url}/api/recognize`, { image: base64(await photo('grace')) })).status).toBe(200);

    // Back up on the same port: the background check notices and remote can be selected again.
    modelServer = await listenModelServer({ port, host: '127.0.0.1' });
    await waitFor(async () => (await getJson(`${server.url}/api/ready`)).body.remote_status === 'connected', 'connected again');
    expect((await put(`${server.url}/api/models/detection`, { detection_method: 'remote' })).status).toBe(200);
  });
});

describe('model configuration', () => {
  it('GET /api/models/config reports the active models and training state', async () => {
    const { status, body } = await getJson(`${server.url}/api/models/config`);
    expect(status).toBe(200);
    expect(body.recognition_model).toBe('lbph');
    expect(body.recognizers.lbph.trained).toBe(true);
  });

  it('PUT /api/models/config accepts lbph and refuses bad values', async () => {
    expect((await put(`${server.url}/api/models/config`, { recognition_model: 'lbph' })).status).toBe(200);
    const bad = await put(`${server.url}/api/models/config`, { ai_model: 'eigenfaces' });
    expect(bad.status).toBe(400);
    const missing = await put(`${server.url}/api/models/config`, {});
    expect(missing.status).toBe(400);
  });
});

describe('REMOTE_DETECTOR_DEFAULT_METHOD=remote', () => {
  it('starts on remote when the server answers, and on local (saying so) when it cannot be reached', async () => {
    const up = await startTestServer({
      REMOTE_DETECTOR_URL: modelServer.url,
      REMOTE_DETECTOR_DEFAULT_METHOD: 'remote',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    });
    try {
      expect((await getJson(`${up.url}/api/models/config`)).body.detection_method).toBe('remote');
    } finally {
      await up.close();
    }
    const down = await startTestServer({
      REMOTE_DETECTOR_URL: 'http://127.0.0.1:9',
      REMOTE_DETECTOR_DEFAULT_METHOD: 'remote',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    });
    try {
      const ready = await getJson(`${down.url}/api/ready`);
      expect(ready.body).toMatchObject({ detection_method: 'local', remote_status: 'unreachable' });
    } finally {
      await down.close();
    }
  });
});
