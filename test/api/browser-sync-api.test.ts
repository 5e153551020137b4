/**
 * What a browser-first client (and an offline kiosk) needs from the server, over real HTTP on 127.0.0.1:
 * trained models to download by version, the results history it syncs into, idempotent training uploads,
 * and the headers that make the page cross-origin isolated and its files cacheable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEmbeddingFile } from '../../shared/embedding/model-file.js';
import { readLbphYaml } from '../../shared/lbph/opencv-yaml.js';
import { createService } from '../../server/app.js';
import { loadSettings } from '../../server/config/settings.js';
import { createLogger } from '../../server/logger.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, REPO_ROOT, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
};

function expectIsolated(res: Response) {
  for (const [name, value] of Object.entries(ISOLATION)) expect(res.headers.get(name), `${res.url} ${name}`).toBe(value);
}

function expectError(res: { status: number; body: any }, status: number, code: string, mentions?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  if (mentions) expect(res.body.error.message).toContain(mentions);
}

// ---------------------------------------------------------------------------------------------------------
// Trained models for download

describe('trained models for download', () => {
  let server: TestServer;
  let dataDir: string;
  const env = { OBJECT_DETECTION_ENABLED: 'false' };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-sync-models-'));
    server = await startTestServer(env, dataDir);
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const meta = () => fetch(`${server.url}/api/models/trained`);
  async function upload(person: 'grace' | 'eileen' | 'lionel') {
    for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
  }
  async function train() {
    const res = await postJson(`${server.url}/api/train`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  it('before any training: no version, and the files are a 404 not_trained', async () => {
    const res = await meta();
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBeNull();
    // Revalidated by this browser only: the models are biometric data (server/http/headers.ts).
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect((await res.json()) as any).toEqual({
      version: null,
      trained_at: null,
      labels: [],
      lbph: { available: false, url: '/api/models/trained/lbph', bytes: null },
      embedding: { available: false, url: '/api/models/trained/embedding', bytes: null },
    });
    expectError(await getJson(`${server.url}/api/models/trained/lbph`), 404, 'not_trained', 'POST /api/train');
    expectError(await getJson(`${server.url}/api/models/trained/embedding`), 404, 'not_trained');
  });

  let v1: string;
  it('after a training: a version, ETag, 304 on If-None-Match, and files that parse in the browser code', {
    timeout: 180_000,
  }, async () => {
    await upload('grace');
    await upload('eileen');
    const trained = await train();
    const res = await meta();
    const body = (await res.json()) as any;
    v1 = body.version;
    expect(v1).toMatch(/^[0-9a-f]{16}$/);
    expect(res.headers.get('etag')).toBe(`"${v1}"`);
    expect(body.labels).toEqual(['eileen', 'grace']);
    expect(body.trained_at).toBe(trained.trained_at);
    expect(body.lbph).toMatchObject({ available: true, url: '/api/models/trained/lbph' });
    expect(body.embedding).toMatchObject({ available: true, url: '/api/models/trained/embedding' });

    const again = await fetch(`${server.url}/api/models/trained`, { headers: { 'if-none-match': `"${v1}"` } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(`"${v1}"`);
    expectIsolated(again);

    const lbph = await fetch(`${server.url}/api/models/trained/lbph`);
    expect(lbph.status).toBe(200);
    expect(lbph.headers.get('content-type')).toMatch(/^text\/yaml/);
    expect(lbph.headers.get('etag')).toBe(`"${v1}"`);
    expect(lbph.headers.get('cache-control')).toBe('private, no-cache');
    const yaml = await lbph.text();
    expect(Buffer.byteLength(yaml)).toBe(body.lbph.bytes);
    expect(yaml).toBe(await fs.readFile(path.join(dataDir, 'models/training.yml'), 'utf8'));
    const model = readLbphYaml(yaml);
    const labels = (await getJson(`${server.url}/api/labels`)).body.labels;
    expect(model.labelsInfo!.map((l) => l.value).sort()).toEqual(labels);
    expect(new Set(model.labels).size).toBe(labels.length);

    const embedding = await fetch(`${server.url}/api/models/trained/embedding`);
    expect(embedding.headers.get('content-type')).toMatch(/^application\/json/);
    const file = decodeEmbeddingFile(await embedding.text());
    expect(file.labels.map((l) => l.name).sort()).toEqual(labels);

    for (const url of ['/api/models/trained/lbph', '/api/models/trained/embedding']) {
      const cached = await fetch(`${server.url}${url}`, { headers: { 'if-none-match': `W/"${v1}"` } });
      expect(cached.status, url).toBe(304);
    }
  });

  let v2: string;
  it('a training with a new label gives a new version; the old ETag no longer matches', { timeout: 180_000 }, async () => {
    await upload('lionel');
    await train();
    const res = await fetch(`${server.url}/api/models/trained`, { headers: { 'if-none-match': `"${v1}"` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    v2 = body.version;
    expect(v2).toMatch(/^[0-9a-f]{16}$/);
    expect(v2).not.toBe(v1);
    expect(body.labels).toEqual(['eileen', 'grace', 'lionel']);
    const lbph = await fetch(`${server.url}/api/models/trained/lbph`, { headers: { 'if-none-match': `"${v1}"` } });
    expect(lbph.status).toBe(200);
    expect(
      readLbphYaml(await lbph.text())
        .labelsInfo!.map((l) => l.value)
        .sort(),
    ).toEqual(['eileen', 'grace', 'lionel']);
  });

  it('a download during a retraining is the old set or the new one, never a mix', { timeout: 180_000 }, async () => {
    const before = await fetch(`${server.url}/api/models/trained/lbph`);
    const oldYaml = await before.text();
    expect(before.headers.get('etag')).toBe(`"${v2}"`);
    // New data, so the retraining writes different files.
    expect((await uploadImage(server.url, 'grace', await photo('grace'), 'again.jpg')).status).toBe(200);
    let done = false;
    const training = train().finally(() => (done = true));
    const seen: { etag: string; yaml: string; meta: { version: string; bytes: number } }[] = [];
    while (!done) {
      const [file, m] = await Promise.all([fetch(`${server.url}/api/models/trained/lbph`), meta().then((r) => r.json() as Promise<any>)]);
      seen.push({ etag: file.headers.get('etag')!, yaml: await file.text(), meta: { version: m.version, bytes: m.lbph.bytes } });
    }
    await training;
    const after = await fetch(`${server.url}/api/models/trained/lbph`);
    const newYaml = await after.text();
    const vNew = after.headers.get('etag')!.replaceAll('"', '');
    expect(vNew).not.toBe(v2);
    expect(seen.length).toBeGreaterThan(0);
    const yamlOf: Record<string, string> = { [v2]: oldYaml, [vNew]: newYaml };
    for (const s of seen) {
      const version = s.etag.replaceAll('"', '');
      expect([v2, vNew]).toContain(version);
      expect(s.yaml === yamlOf[version], `the body of ${version} is that version's file`).toBe(true);
      expect([v2, vNew]).toContain(s.meta.version);
      expect(s.meta.bytes).toBe(Buffer.byteLength(yamlOf[s.meta.version]));
    }
    // The polling started before the new files were saved.
    expect(seen.some((x) => x.etag === `"${v2}"`)).toBe(true);
    v2 = vNew;
  });

  it('the version survives a restart on the same data directory', { timeout: 180_000 }, async () => {
    const before = (await (await meta()).json()) as any;
    await server.close();
    server = await startTestServer(env, dataDir);
    const res = await meta();
    const after = (await res.json()) as any;
    expect(after.version).toBe(v2);
    expect(after.labels).toEqual(before.labels);
    expect(after.lbph.bytes).toBe(before.lbph.bytes);
    expect(after.embedding.bytes).toBe(before.embedding.bytes);
    expect((await fetch(`${server.url}/api/models/trained/lbph`, { headers: { 'if-none-match': `"${v2}"` } })).status).toBe(304);
  });
});

// ---------------------------------------------------------------------------------------------------------
// One server with a built web app (a fixture dist/client) for the results, uploads and static files

const FIXTURE_INDEX = '<!doctype html><html><head><title>Lookout fixture</title></head><body>app</body></html>';

/** An install directory: the real public/models (linked) plus fixture model types, and a fixture build. */
async function makeAppDir(): Promise<string> {
  const appDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-sync-app-'));
  const models = path.join(appDir, 'public/models');
  await fs.mkdir(models, { recursive: true });
  for (const name of await fs.readdir(path.join(REPO_ROOT, 'public/models'))) {
    await fs.symlink(path.join(REPO_ROOT, 'public/models', name), path.join(models, name));
  }
  await fs.writeFile(path.join(models, 'tiny.onnx'), new Uint8Array([8, 1, 18, 0]));
  await fs.writeFile(path.join(models, 'ort-wasm-simd-threaded.wasm'), new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  await fs.copyFile(path.join(REPO_ROOT, 'package.json'), path.join(appDir, 'package.json'));
  const client = path.join(appDir, 'dist/client');
  await fs.mkdir(path.join(client, 'assets'), { recursive: true });
  await fs.writeFile(path.join(client, 'index.html'), FIXTURE_INDEX);
  await fs.writeFile(path.join(client, 'assets/index-Bx7Kq2.js'), 'console.log("app")');
  await fs.writeFile(path.join(client, 'sw.js'), 'self.addEventListener("fetch", () => {})');
  await fs.writeFile(path.join(client, 'manifest.webmanifest'), '{"name":"Lookout"}');
  return appDir;
}

async function startApp(appDir: string, dataDir: string, env: Record<string, string>) {
  const settings = loadSettings({ DATA_DIR: dataDir, WORKERS: '1', LOG_LEVEL: 'silent', ...env }, appDir);
  const service = await createService(settings, createLogger(settings.logLevel));
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
    },
  };
}

const APP_ENV = { EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', RESULTS_MAX: '50' };
let app: Awaited<ReturnType<typeof startApp>>;
let appDir: string;
let appData: string;

beforeAll(async () => {
  appDir = await makeAppDir();
  appData = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-sync-data-'));
  app = await startApp(appDir, appData, APP_ENV);
});
afterAll(async () => {
  await app?.close();
  await fs.rm(appDir, { recursive: true, force: true });
  await fs.rm(appData, { recursive: true, force: true });
});

let serial = 0;
/** A valid record with a fresh id. */
function record(extra: Record<string, unknown> = {}): Record<string, any> {
  serial++;
  return {
    id: `00000000-0000-4000-8000-${String(serial).padStart(12, '0')}`,
    kind: 'recognition',
    captured_at: new Date(Date.UTC(2024, 4, 1, 12, 0, 0, serial)).toISOString(),
    source: 'kiosk-lobby',
    engine: 'browser',
    backend: 'wasm',
    detection_method: 'local',
    recognition_model: 'lbph',
    image_width: 640,
    image_height: 480,
    faces: [{ x: 10, y: 20, w: 100, h: 100, label: 'grace-hopper', confidence: 87.5, distance: 31.2 }],
    ...extra,
  };
}
const objectsRecord = (extra: Record<string, unknown> = {}) =>
  record({
    kind: 'objects',
    faces: undefined,
    objects: [{ class_id: 15, class_name: 'cat', confidence: 0.91, x: 5, y: 6, w: 70, h: 80 }],
    ...extra,
  });

const postResults = (results: unknown) => postJson(`${app.url}/api/results`, { results });
const listResults = async (query = '') => (await getJson(`${app.url}/api/results${query}`)).body;

describe('results history', () => {
  it('is empty at first and reports its bound', async () => {
    expect(await listResults()).toEqual({ results: [], count: 0, matched: 0, total: 0, max: 50 });
  });

  it('stores a batch and returns it newest first with received_at', async () => {
    const batch = [record(), objectsRecord(), record({ faces: [] })];
    const res = await postResults(batch);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', accepted: 3, duplicates: 0, total: 3 });
    const body = await listResults();
    expect(body.count).toBe(3);
    expect(body.results.map((r: { id: string }) => r.id)).toEqual(batch.map((r) => r.id).reverse());
    expect(body.results[2]).toMatchObject({ ...batch[0], received_at: expect.any(String) });
    expect(Date.parse(body.results[0].received_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('counts the same id twice in one batch, and again in a later batch, as duplicates', async () => {
    const a = record();
    const b = record();
    expect((await postResults([a, a, b])).body).toEqual({ status: 'ok', accepted: 2, duplicates: 1, total: 5 });
    expect((await postResults([b, record()])).body).toEqual({ status: 'ok', accepted: 1, duplicates: 1, total: 6 });
    expect((await postResults([a, b])).body).toEqual({ status: 'ok', accepted: 0, duplicates: 2, total: 6 });
    const ids = (await listResults()).results.map((r: { id: string }) => r.id);
    expect(ids.filter((id: string) => id === a.id)).toHaveLength(1);
  });

  it('refuses bad input with a 400 naming the field, and stores nothing of that batch', async () => {
    const good = record();
    const cases: [unknown, string][] = [
      [[good, record({ kind: 'people' })], 'results.1.kind'],
      [[good, record({ captured_at: 'yesterday' })], 'results.1.captured_at'],
      [[good, record({ id: 'x' })], 'results.1.id'],
      [[good, record({ source: 'k'.repeat(65) })], 'results.1.source'],
      [[good, record({ engine: 'gpu' })], 'results.1.engine'],
      [[record({ faces: [{ x: 1, y: 2, w: 3, h: 4, label: 'ada', confidence: 140 }] }), good], 'results.0.faces.0.confidence'],
      [
        [good, objectsRecord({ objects: [{ class_id: 15, class_name: 'dog', confidence: 0.5, x: 0, y: 0, w: 1, h: 1 }] })],
        'results.1.objects.0.class_name',
      ],
      [[good, objectsRecord({ faces: [] })], 'results.1.faces'],
      [[good, record({ image_width: 0 })], 'results.1.image_width'],
      [[], 'results'],
      [Array.from({ length: 101 }, () => record()), 'results'],
    ];
    for (const [results, field] of cases) expectError(await postResults(results), 400, 'bad_request', `"${field}"`);
    expectError(await postJson(`${app.url}/api/results`, {}), 400, 'bad_request', '"results"');
    expectError(await postJson(`${app.url}/api/results`, '{"results": ['), 400, 'invalid_json');
    expect((await listResults()).total).toBe(6);
    // The valid record of a refused batch was not stored: sending it alone is accepted, not a duplicate.
    expect((await postResults([good])).body).toMatchObject({ accepted: 1, duplicates: 0, total: 7 });
  });

  it('filters by kind and label, with a limit', async () => {
    expect((await listResults('?kind=objects')).results.map((r: { kind: string }) => r.kind)).toEqual(['objects']);
    const byLabel = await listResults('?label=grace-hopper&limit=2');
    expect(byLabel.count).toBe(2);
    expect(byLabel.matched).toBe(5);
    expect(byLabel.total).toBe(7);
    for (const r of byLabel.results) expect(r.faces.some((f: { label: string }) => f.label === 'grace-hopper')).toBe(true);
    expect((await listResults('?label=cat')).count).toBe(1);
    expect((await listResults('?label=nobody')).count).toBe(0);
    expectError(await getJson(`${app.url}/api/results?limit=0`), 400, 'bad_request', '"limit"');
    expectError(await getJson(`${app.url}/api/results?limit=1001`), 400, 'bad_request', '"limit"');
    expectError(await getJson(`${app.url}/api/results?limit=ten`), 400, 'bad_request', '"limit"');
    expectError(await getJson(`${app.url}/api/results?kind=faces`), 400, 'bad_request', '"kind"');
  });

  it('keeps every record of 20 parallel posts', async () => {
    const batches = Array.from({ length: 20 }, () => [record(), objectsRecord()]);
    const answers = await Promise.all(batches.map((b) => postResults(b)));
    for (const a of answers) expect(a.body).toMatchObject({ status: 'ok', accepted: 2, duplicates: 0 });
    const body = await listResults('?limit=1000');
    expect(body.total).toBe(47);
    const ids = new Set(body.results.map((r: { id: string }) => r.id));
    for (const b of batches) for (const r of b) expect(ids.has(r.id)).toBe(true);
  });

  it('survives a restart, duplicates included', async () => {
    const before = await listResults('?limit=1000');
    await app.close();
    app = await startApp(appDir, appData, APP_ENV);
    const after = await listResults('?limit=1000');
    expect(after).toEqual(before);
    expect((await postResults([before.results[3]])).body).toMatchObject({ accepted: 0, duplicates: 1 });
  });

  it('is bounded by RESULTS_MAX: the oldest are dropped first, and stay known as duplicates', async () => {
    const oldest = (await listResults('?limit=1000')).results.at(-1);
    const fresh = Array.from({ length: 10 }, () => record());
    expect((await postResults(fresh)).body).toEqual({ status: 'ok', accepted: 10, duplicates: 0, total: 50 });
    const body = await listResults('?limit=1000');
    expect(body).toMatchObject({ count: 50, total: 50, max: 50 });
    expect(body.results.slice(0, 10).map((r: { id: string }) => r.id)).toEqual(fresh.map((r) => r.id).reverse());
    expect(body.results.some((r: { id: string }) => r.id === oldest.id)).toBe(false);
    const { received_at: _, ...resent } = oldest;
    expect((await postResults([resent])).body).toEqual({ status: 'ok', accepted: 0, duplicates: 1, total: 50 });
  });

  it('sets a corrupt history file of an earlier version aside at start and keeps working', async () => {
    await app.close();
    await fs.mkdir(path.join(appData, 'results'), { recursive: true });
    await fs.writeFile(path.join(appData, 'results/results.jsonl'), '{"format":"lookout-results-log","version":2,"forgotten_ids":["tr\n');
    app = await startApp(appDir, appData, APP_ENV);
    // The history in the database is untouched; the file is set aside, not imported.
    expect((await listResults()).total).toBe(50);
    expect((await fs.readdir(path.join(appData, 'results'))).some((n) => n.startsWith('results.jsonl.corrupt-'))).toBe(true);
    expect((await postResults([record()])).body).toMatchObject({ accepted: 1, total: 50 });
  });
});

describe('idempotent training uploads (capture_id)', () => {
  const multipart = async (label: string, bytes: Uint8Array, captureId?: string) => {
    const form = new FormData();
    form.set('label', label);
    if (captureId !== undefined) form.set('capture_id', captureId);
    form.set('file', new Blob([bytes]), 'capture.jpg');
    const res = await fetch(`${app.url}/api/images`, { method: 'POST', body: form });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('stores the image as <capture_id>.<ext>; a repeat stores nothing and says duplicate', async () => {
    const jpeg = await photo('grace');
    const first = await multipart('Ada', jpeg, 'cap_0001-abcd');
    expect(first.status).toBe(200);
    // (With the photo check, display name and original name of #26 beside these.)
    expect(first.body).toMatchObject({
      status: 'ok',
      label: 'ada',
      filename: 'cap_0001-abcd.jpg',
      path: 'images/ada/cap_0001-abcd.jpg',
      duplicate: false,
    });
    const again = await multipart('ada', jpeg, 'cap_0001-abcd');
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      status: 'ok',
      label: 'ada',
      filename: 'cap_0001-abcd.jpg',
      path: 'images/ada/cap_0001-abcd.jpg',
      duplicate: true,
    });
    expect(await fs.readdir(path.join(appData, 'images/ada'))).toEqual(['cap_0001-abcd.jpg']);
    expect((await getJson(`${app.url}/api/images/ada`)).body.count).toBe(1);
  });

  it('accepts capture_id in a JSON upload too', async () => {
    const body = { label: 'ada', image: base64(await photo('grace')), capture_id: 'json-capture-1' };
    expect((await postJson(`${app.url}/api/images`, body)).body).toMatchObject({ filename: 'json-capture-1.jpg', duplicate: false });
    expect((await postJson(`${app.url}/api/images`, body)).body).toMatchObject({ filename: 'json-capture-1.jpg', duplicate: true });
  });

  it('an upload without capture_id keeps the original answer', async () => {
    const res = await multipart('ada', await photo('grace'));
    // The original service's fields (its `path` relative to DATA_DIR), and no `duplicate` (#26 adds the photo check,
    // display name and original name).
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['filename', 'label', 'path', 'status']));
    expect(res.body).toMatchObject({ status: 'ok', label: 'ada', path: `images/ada/${res.body.filename}` });
    expect(res.body).not.toHaveProperty('duplicate');
  });

  it('stores concurrent uploads of one capture once', async () => {
    const jpeg = await photo('grace');
    const answers = await Promise.all(Array.from({ length: 6 }, () => multipart('bob', jpeg, 'parallel-capture-42')));
    for (const a of answers) expect(a.body).toMatchObject({ status: 'ok', filename: 'parallel-capture-42.jpg' });
    expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    expect(await fs.readdir(path.join(appData, 'images/bob'))).toEqual(['parallel-capture-42.jpg']);
  });

  it('refuses a bad capture_id with a 400 and stores nothing', async () => {
    const jpeg = await photo('grace');
    for (const bad of ['short', 'has spaces in it', 'dots.are.out', 'x'.repeat(65), '../../etc']) {
      expectError(await multipart('carol', jpeg, bad), 400, 'bad_request', 'capture_id');
      expectError(
        await postJson(`${app.url}/api/images`, { label: 'carol', image: base64(jpeg), capture_id: bad }),
        400,
        'bad_request',
        'capture_id',
      );
    }
    await expect(fs.readdir(path.join(appData, 'images/carol'))).rejects.toThrow();
  });
});

describe('headers and static files', () => {
  const get = (p: string, init?: RequestInit) => fetch(`${app.url}${p}`, init);

  it('every response is cross-origin isolated: API, errors, 304s, pages and files', async () => {
    const responses = [
      await get('/api/health'),
      await get('/api/nothing-here'),
      await get('/api/results?limit=0'),
      await get('/api/models/trained'),
      await get('/'),
      await get('/training'),
      await get('/models/nanodet.json'),
      await get('/models/missing.bin'),
      await get('/assets/index-Bx7Kq2.js'),
      await get('/sw.js'),
    ];
    const etag = responses[6].headers.get('etag')!;
    responses.push(await get('/models/nanodet.json', { headers: { 'if-none-match': etag } }));
    for (const res of responses) {
      expectIsolated(res);
      await res.arrayBuffer();
    }
  });

  it('model files: content types, a day of caching with revalidation, ETag and 304', async () => {
    const types: [string, RegExp][] = [
      ['/models/nanodet.json', /^application\/json$/],
      ['/models/nanodet.bin', /^application\/octet-stream$/],
      ['/models/haarcascade_frontalface_alt2.xml', /^application\/xml/],
      ['/models/tiny.onnx', /^application\/octet-stream$/],
      ['/models/ort-wasm-simd-threaded.wasm', /^application\/wasm$/],
      ['/models/MODELS.md', /^text\/markdown/],
      ['/models/face-api/face_recognition_model-weights_manifest.json', /^application\/json$/],
    ];
    for (const [p, type] of types) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type'), p).toMatch(type);
      expect(res.headers.get('cache-control'), p).toBe('public, max-age=86400, stale-while-revalidate=604800');
      expect(res.headers.get('etag'), p).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
      await res.arrayBuffer();
    }
    const first = await get('/models/nanodet.bin');
    const bytes = new Uint8Array(await first.arrayBuffer());
    expect(bytes.length).toBe((await fs.stat(path.join(REPO_ROOT, 'public/models/nanodet.bin'))).size);
    expect(Number(first.headers.get('content-length'))).toBe(bytes.length);
    const cached = await get('/models/nanodet.bin', { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(cached.headers.get('cache-control')).toBe('public, max-age=86400, stale-while-revalidate=604800');
    expect((await cached.arrayBuffer()).byteLength).toBe(0);
    expect((await get('/models/nanodet.bin', { headers: { 'if-none-match': '"0-0"' } })).status).toBe(200);
    const head = await get('/models/nanodet.json', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
  });

  it('a missing model file is a JSON 404, not the app page; no path leaves the models folder', async () => {
    for (const p of ['/models/missing.bin', '/models/.hidden', '/models/%2e%2e/package.json', '/models/face-api/../../../package.json']) {
      const res = await get(p);
      expect(res.status, p).toBe(404);
      expect(res.headers.get('content-type'), p).toMatch(/^application\/json/);
      await res.arrayBuffer();
    }
  });

  it('hashed assets are immutable; index.html and app routes are no-cache', async () => {
    const asset = await get('/assets/index-Bx7Kq2.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    await asset.arrayBuffer();
    expect((await get('/assets/index-gone.js')).status).toBe(404);
    for (const p of ['/', '/index.html', '/training', '/recognize']) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type'), p).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control'), p).toBe('no-cache');
      expect(await res.text()).toBe(FIXTURE_INDEX);
    }
    const page = await get('/');
    await page.arrayBuffer();
    expect((await get('/', { headers: { 'if-none-match': page.headers.get('etag')! } })).status).toBe(304);
    // A missing file is a 404, not the app's page under a script's name.
    const missing = await get('/favicon-missing.png');
    expect(missing.status).toBe(404);
    await missing.arrayBuffer();
    const api = await getJson(`${app.url}/api/nothing-here`);
    expectError(api, 404, 'not_found');
  });

  it('the service worker is no-cache with Service-Worker-Allowed: /, the manifest has its type', async () => {
    const sw = await get('/sw.js');
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(sw.headers.get('service-worker-allowed')).toBe('/');
    await sw.arrayBuffer();
    const manifest = await get('/manifest.webmanifest');
    expect(manifest.headers.get('content-type')).toBe('application/manifest+json');
    expect(manifest.headers.get('cache-control')).toBe('no-cache');
    await manifest.arrayBuffer();
  });
});

// ---------------------------------------------------------------------------------------------------------
// PERSISTENCE_ENABLED=false: the history lives in the temporary data directory, removed at exit

describe('without persistence', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('keeps the results history in the temporary directory and removes it at exit', { timeout: 120_000 }, async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'server/main.ts')], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: String(port),
        WORKERS: '1',
        PERSISTENCE_ENABLED: 'false',
        EMBEDDING_ENABLED: 'false',
        OBJECT_DETECTION_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr!.on('data', (d) => (out += d));
    child.stdout!.on('data', (d) => (out += d));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 90_000;
    while (!/listening on/.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const tempDir = /data lives in (\S+) until exit/.exec(out)![1];
    const res = await postJson(`${url}/api/results`, { results: [record()] });
    expect(res.body).toMatchObject({ accepted: 1, total: 1 });
    // In the embedded database, inside the temporary directory.
    expect((await fs.readdir(path.join(tempDir, 'db'))).length).toBeGreaterThan(0);
    const exited = new Promise((r) => child!.on('exit', r));
    child.kill('SIGTERM');
    await exited;
    await expect(fs.stat(tempDir)).rejects.toThrow();
  });
});
