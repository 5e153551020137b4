/**
 * The `embedding` recognizer through the API: trained by the same POST /api/train as LBPH, selected at run
 * time (with the original's `ai_model: "dlib"` spelling), persisted beside the LBPH files.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let dataDir: string;

async function put(url: string, body: unknown) {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-embedding-'));
  server = await startTestServer({}, dataDir);
  for (const person of ['grace', 'eileen', 'lionel'] as const) {
    for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
  }
});

afterAll(async () => {
  await server?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('embedding recognizer', () => {
  it('is available, and untrained before the first training', async () => {
    const { body } = await getJson(`${server.url}/api/models/available`);
    const embedding = body.recognition_models.find((m: { name: string }) => m.name === 'embedding');
    expect(embedding).toMatchObject({ available: true, trained: false, active: false });
  });

  it('one training trains both recognizers and saves embeddings.json beside the LBPH files', async () => {
    const { status, body } = await postJson(`${server.url}/api/train`, {});
    expect(status).toBe(200);
    expect(body.recognizers_trained).toEqual(['lbph', 'embedding']);
    // training.yml is written after the training answers (#27): the index waits for it.
    await getJson(`${server.url}/api/models/trained`);
    expect((await fs.readdir(path.join(dataDir, 'models'))).sort()).toEqual([
      'embeddings.json',
      'model.pickle',
      'training.lbph',
      'training.yml',
      'training.yml.source',
    ]);
    const config = await getJson(`${server.url}/api/models/config`);
    expect(config.body.recognizers.embedding).toMatchObject({ trained: true, labels: 3 });
  });

  it('one request may name its recognizer, and the active one stays as it was', async () => {
    const image = base64(await rescaled('grace', 0.7));
    const asked = await postJson(`${server.url}/api/recognize`, { image, recognition_model: 'embedding' });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ recognition_model: 'embedding', trained: true });
    expect(asked.body.faces[0]).toMatchObject({ label: 'grace' });
    expect(asked.body.faces[0].distance).toBeLessThanOrEqual(0.6);
    expect((await postJson(`${server.url}/api/recognize`, { image, recognition_model: 'dlib' })).body.recognition_model).toBe('embedding');
    expect((await postJson(`${server.url}/api/recognize`, { image })).body.recognition_model).toBe('lbph');
    const bad = await postJson(`${server.url}/api/recognize`, { image, recognition_model: 'eigen' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/recognition_model/);
  });

  it('is selected with the original ai_model/dlib spelling and takes effect at once', async () => {
    const res = await put(`${server.url}/api/models/config`, { ai_model: 'dlib' });
    expect(res.status).toBe(200);
    expect(res.body.recognition_model).toBe('embedding');
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('grace', 0.7)) });
    expect(body.recognition_model).toBe('embedding');
    expect(body.faces[0]).toMatchObject({ label: 'grace' });
    expect(body.faces[0].distance).toBeLessThanOrEqual(0.6);
    expect(body.faces[0].confidence).toBeGreaterThanOrEqual(60);
  });

  it('recognises each person in another photo, and calls a stranger unknown', async () => {
    for (const [person, scale] of [
      ['eileen', 1.3],
      ['lionel', 1.3],
      ['grace', 1.4],
    ] as const) {
      const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled(person, scale)) });
      expect(
        body.faces.map((f: { label: string }) => f.label),
        `${person}: ${JSON.stringify(body.faces)}`,
      ).toEqual([person]);
    }
    // Someone never enrolled: the largest face of a group photo.
    const group = await readTestImage('faces/sample2.jpg');
    const stranger = await sharp(group).resize(960).jpeg().toBuffer();
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(stranger) });
    expect(body.count).toBeGreaterThan(0);
    for (const face of body.faces) expect(face).toMatchObject({ label: 'unknown', confidence: 0 });
  });

  it('switching the recognizer while requests are in flight loses no request', async () => {
    const image = base64(await photo('eileen'));
    const requests = Array.from({ length: 16 }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 20)).then(() => postJson(`${server.url}/api/recognize`, { image })),
    );
    const switches = ['lbph', 'embedding', 'lbph'].map((model, i) =>
      new Promise((r) => setTimeout(r, 50 + i * 90)).then(() => put(`${server.url}/api/models/config`, { recognition_model: model })),
    );
    const [results, switched] = await Promise.all([Promise.all(requests), Promise.all(switches)]);
    expect(switched.every((s) => s.status === 200)).toBe(true);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body.count).toBe(1);
    }
    expect(new Set(results.map((r) => r.body.recognition_model))).toEqual(new Set(['lbph', 'embedding']));
  });

  it('the embedding model is reloaded after a restart', async () => {
    // The recognizer chosen through the API is kept in DATA_DIR and wins over RECOGNITION_MODEL at the next start.
    expect((await put(`${server.url}/api/models/config`, { recognition_model: 'embedding' })).status).toBe(200);
    await server.close();
    server = await startTestServer({ RECOGNITION_MODEL: 'lbph' }, dataDir);
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.8)) });
    expect(body).toMatchObject({ recognition_model: 'embedding', trained: true });
    expect(body.faces[0].label).toBe('eileen');
  });
});

describe('embedding switched off', () => {
  it('is reported unavailable with the reason, and selecting it is a 409 that changes nothing', async () => {
    const off = await startTestServer({ EMBEDDING_ENABLED: 'false' });
    try {
      const { body } = await getJson(`${off.url}/api/models/available`);
      const embedding = body.recognition_models.find((m: { name: string }) => m.name === 'embedding');
      expect(embedding.available).toBe(false);
      expect(embedding.reason).toMatch(/EMBEDDING_ENABLED=false/);
      const res = await put(`${off.url}/api/models/config`, { recognition_model: 'embedding' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('model_unavailable');
      expect((await getJson(`${off.url}/api/models/config`)).body.recognition_model).toBe('lbph');
      const one = await postJson(`${off.url}/api/recognize`, { image: base64(await photo('grace')), recognition_model: 'embedding' });
      expect(one.status).toBe(409);
      expect(one.body.error.code).toBe('model_unavailable');
    } finally {
      await off.close();
    }
  });
});
