/**
 * The original's frontend reads the original's identifiers (issue #35): with remote detection active it showed
 * "OpenCV (Local)" everywhere, since it shows "OpenVINO" only for `openvino`, and preselects its Model Config radios
 * by `type` equal to `detection_method` / `ai_model`. Requests with Angular's default Accept (as every request of
 * that frontend carries) get `opencv`/`openvino` and `dlib` in the fields it reads; every other request keeps
 * Lookout's `local`/`remote` and `embedding`, field by field. Over real HTTP, remote detection on a real KServe V2
 * model server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ANGULAR = { accept: 'application/json, text/plain, */*' };

let modelServer: RunningModelServer;
let server: TestServer;
let off: TestServer;

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}
/** As the original's frontend asks (Angular's HttpClient). */
const asOriginal = (path: string, method = 'GET', body?: unknown) => call(server.url, method, path, body, ANGULAR);
/** As Lookout's own clients ask (fetch, curl, the web app). */
const asLookout = (path: string, method = 'GET', body?: unknown) => call(server.url, method, path, body);

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
  const env = {
    WORKERS: '1',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    REMOTE_DETECTOR_URL: modelServer.url,
    REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200',
  };
  [server, off] = await Promise.all([
    startTestServer({ ...env, EMBEDDING_ENABLED: 'true' }),
    startTestServer({ ...env, EMBEDDING_ENABLED: 'false', COMPAT_IDENTIFIERS: 'off' }),
  ]);
  for (const s of [server, off])
    await until(async () => (await call(s.url, 'GET', '/api/ready')).body.remote_status === 'connected', 'the remote server connected');
  // The original frontend's Apply on "OpenVINO (Remote)".
  const switched = await asOriginal('/api/models/detection', 'PUT', { detection_method: 'openvino' });
  expect(switched.status, JSON.stringify(switched.body)).toBe(200);
  for (const capture of await trainingCaptures('eileen')) {
    const form = new FormData();
    form.set('label', 'eileen');
    form.set('file', new Blob([capture], { type: 'image/jpeg' }), 'capture.jpg');
    expect((await call(server.url, 'POST', '/api/images', form, ANGULAR)).status).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await Promise.all([server?.close(), off?.close()]);
  await modelServer?.close();
});

describe('remote detection active: the original frontend reads openvino, Lookout reads remote', () => {
  it('PUT /api/models/detection detection_method', async () => {
    expect((await asOriginal('/api/models/detection', 'PUT', { detection_method: 'openvino' })).body.detection_method).toBe('openvino');
    expect((await asLookout('/api/models/detection', 'PUT', { detection_method: 'remote' })).body.detection_method).toBe('remote');
  });

  it('GET /api/models/config detection_method (the "Active:" chip)', async () => {
    expect((await asOriginal('/api/models/config')).body.detection_method).toBe('openvino');
    expect((await asLookout('/api/models/config')).body.detection_method).toBe('remote');
  });

  it('GET /api/models/available detection_methods[].type (the radios; the active one preselected)', async () => {
    const original = (await asOriginal('/api/models/available')).body;
    expect(original.detection_methods.map((m: any) => m.type).sort()).toEqual(['opencv', 'openvino']);
    const config = (await asOriginal('/api/models/config')).body;
    expect(original.detection_methods.some((m: any) => m.type === config.detection_method)).toBe(true);
    // Lookout's own `name` beside it stays.
    expect(original.detection_methods.map((m: any) => m.name).sort()).toEqual(['local', 'remote']);
    const lookout = (await asLookout('/api/models/available')).body;
    expect(lookout.detection_methods.map((m: any) => m.type).sort()).toEqual(['local', 'remote']);
  });

  it('GET /api/ready detection_method (the dashboard chip)', async () => {
    expect((await asOriginal('/api/ready')).body).toMatchObject({ detection_method: 'openvino', ai_model: 'lbph' });
    expect((await asLookout('/api/ready')).body.detection_method).toBe('remote');
  });

  it('POST /api/train detection_method (the Training page)', async () => {
    expect((await asOriginal('/api/train', 'POST', {})).body.detection_method).toBe('openvino');
    expect((await asLookout('/api/train', 'POST', {})).body.detection_method).toBe('remote');
  });

  it('POST /api/recognize detection_method, and each face`s', async () => {
    const image = base64(await photo('eileen'));
    const original = (await asOriginal('/api/recognize', 'POST', { image })).body;
    expect(original.detection_method).toBe('openvino');
    expect(original.faces.map((f: any) => [f.label, f.detection_method])).toEqual([['eileen', 'openvino']]);
    // Lookout's own recognizer name beside it stays.
    expect(original.recognition_model).toBe('lbph');
    const lookout = (await asLookout('/api/recognize', 'POST', { image })).body;
    expect(lookout.detection_method).toBe('remote');
    expect(lookout.faces.map((f: any) => f.detection_method)).toEqual(['remote']);
  });

  it('POST /api/analyze detection_method, and each face`s', async () => {
    const image = base64(await photo('eileen'));
    const original = (await asOriginal('/api/analyze', 'POST', { image })).body;
    expect([original.detection_method, ...original.faces.map((f: any) => f.detection_method)]).toEqual(['openvino', 'openvino']);
    const lookout = (await asLookout('/api/analyze', 'POST', { image })).body;
    expect([lookout.detection_method, ...lookout.faces.map((f: any) => f.detection_method)]).toEqual(['remote', 'remote']);
  });

  it('answers both vocabularies from one URL: Vary: Accept', async () => {
    expect((await asOriginal('/api/ready')).headers.get('vary')).toMatch(/accept/i);
    expect((await asLookout('/api/ready')).headers.get('vary')).toMatch(/accept/i);
  });
});

describe('the embedding recognizer active: the original frontend reads dlib, Lookout reads embedding', () => {
  beforeAll(async () => {
    const applied = await asOriginal('/api/models/config', 'PUT', { ai_model: 'dlib' });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  });
  afterAll(async () => {
    await asLookout('/api/models/config', 'PUT', { recognition_model: 'lbph' });
  });

  it('PUT /api/models/config ai_model and model_info.type (the page replaces its config with the answer)', async () => {
    const original = (await asOriginal('/api/models/config', 'PUT', { ai_model: 'dlib' })).body;
    expect(original).toMatchObject({ ai_model: 'dlib', model_info: { type: 'dlib' }, detection_method: 'openvino' });
    expect(original.recognition_model).toBe('embedding');
    const lookout = (await asLookout('/api/models/config', 'PUT', { recognition_model: 'embedding' })).body;
    expect(lookout).toMatchObject({ ai_model: 'embedding', model_info: { type: 'embedding' }, detection_method: 'remote' });
  });

  it('GET /api/models/config ai_model', async () => {
    expect((await asOriginal('/api/models/config')).body.ai_model).toBe('dlib');
    expect((await asLookout('/api/models/config')).body.ai_model).toBe('embedding');
  });

  it('GET /api/models/available models[].type (the recognizer radios; the active one preselected)', async () => {
    const original = (await asOriginal('/api/models/available')).body;
    expect(original.models.map((m: any) => m.type).sort()).toEqual(['dlib', 'lbph']);
    expect((await asLookout('/api/models/available')).body.models.map((m: any) => m.type).sort()).toEqual(['embedding', 'lbph']);
  });

  it('GET /api/ready ai_model (the dashboard: "AI Model: DLIB")', async () => {
    expect((await asOriginal('/api/ready')).body.ai_model).toBe('dlib');
    expect((await asLookout('/api/ready')).body).toMatchObject({ ai_model: 'embedding', recognition_model: 'embedding' });
  });
});

describe('local detection: opencv', () => {
  it('PUT and GET detection_method', async () => {
    expect((await asOriginal('/api/models/detection', 'PUT', { detection_method: 'opencv' })).body.detection_method).toBe('opencv');
    expect((await asOriginal('/api/models/config')).body.detection_method).toBe('opencv');
    expect((await asLookout('/api/models/config')).body.detection_method).toBe('local');
  });
});

describe('COMPAT_IDENTIFIERS=off', () => {
  it("answers Lookout's words to Angular's Accept too", async () => {
    await call(off.url, 'PUT', '/api/models/detection', { detection_method: 'openvino' }, ANGULAR);
    expect((await call(off.url, 'GET', '/api/models/config', undefined, ANGULAR)).body.detection_method).toBe('remote');
  });
});
