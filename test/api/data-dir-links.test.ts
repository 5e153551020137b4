/**
 * Symbolic links inside DATA_DIR are not followed (issue #16 item 5), over real HTTP: a link planted in a label
 * folder, in place of a label folder, of the trained model, of the results log or of the PPE history is never read,
 * served, trained on, written through or deleted through; the files it points at stay as they were.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let dataDir: string;
let outside: string;
const hashes: Record<string, string> = {};

async function sha(file: string): Promise<string> {
  return crypto
    .createHash('sha256')
    .update(await fs.readFile(file))
    .digest('hex');
}

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-links-'));
  outside = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-outside-'));
  // Outside DATA_DIR: a face photo (trainable, if it were read), a folder of them, model and history files.
  const grace = await photo('grace');
  await fs.writeFile(path.join(outside, 'face.jpg'), grace);
  await fs.mkdir(path.join(outside, 'folder'));
  await fs.writeFile(path.join(outside, 'folder', 'face.jpg'), grace);
  await fs.writeFile(path.join(outside, 'training.yml'), '%YAML:1.0\nsecret: not a model\n');
  const header = JSON.stringify({ format: 'lookout-results-log', version: 2, forgotten_ids: [] });
  await fs.writeFile(path.join(outside, 'results.jsonl'), `${header}\n`);
  await fs.writeFile(path.join(outside, 'history.json'), JSON.stringify({ format: 'x', version: 1, records: [] }));
  for (const name of ['face.jpg', 'folder/face.jpg', 'training.yml', 'results.jsonl', 'history.json']) {
    hashes[name] = await sha(path.join(outside, name));
  }

  await fs.mkdir(path.join(dataDir, 'images', 'ada'), { recursive: true });
  await fs.writeFile(path.join(dataDir, 'images', 'ada', '1000-aaaaaaaa.jpg'), grace);
  await fs.symlink(path.join(outside, 'face.jpg'), path.join(dataDir, 'images', 'ada', '1001-link.jpg'));
  await fs.symlink(path.join(outside, 'folder'), path.join(dataDir, 'images', 'eve'));
  await fs.mkdir(path.join(dataDir, 'models'), { recursive: true });
  await fs.symlink(path.join(outside, 'training.yml'), path.join(dataDir, 'models', 'training.yml'));
  await fs.mkdir(path.join(dataDir, 'results'), { recursive: true });
  await fs.symlink(path.join(outside, 'results.jsonl'), path.join(dataDir, 'results', 'results.jsonl'));
  await fs.mkdir(path.join(dataDir, 'ppe'), { recursive: true });
  await fs.symlink(path.join(outside, 'history.json'), path.join(dataDir, 'ppe', 'history.json'));

  server = await startTestServer(
    { EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', REMOTE_DETECTOR_ENABLED: 'false' },
    dataDir,
  );
});

afterAll(async () => {
  await server?.close();
  for (const [name, hash] of Object.entries(hashes)) expect(await sha(path.join(outside, name)), name).toBe(hash);
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

describe('symbolic links inside DATA_DIR', () => {
  it('lists only real images in real label folders', async () => {
    expect((await getJson(`${server.url}/api/labels`)).body.details).toEqual([
      expect.objectContaining({ label: 'ada', images: 1, trained: false }),
    ]);
    expect((await getJson(`${server.url}/api/images/ada`)).body.files.map((i: { filename: string }) => i.filename)).toEqual([
      '1000-aaaaaaaa.jpg',
    ]);
    // A linked folder is not a label: it lists nothing.
    expect((await getJson(`${server.url}/api/images/eve`)).body).toMatchObject({ label: 'eve', images: [], count: 0 });
  });

  it('does not serve an image through a link', async () => {
    expect((await fetch(`${server.url}/api/images/ada/1000-aaaaaaaa.jpg`)).status).toBe(200);
    expect((await getJson(`${server.url}/api/images/ada/1001-link.jpg`)).status).toBe(404);
    expect((await getJson(`${server.url}/api/images/eve/face.jpg`)).status).toBe(404);
  });

  it('does not load or serve a linked model file', async () => {
    expect((await getJson(`${server.url}/api/models/trained/lbph`)).body.error.code).toBe('not_trained');
  });

  it('trains on the real images only', async () => {
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.status).toBe(200);
    expect(trained.body).toMatchObject({ images_total: 1, labels: ['ada'] });
    // The training replaced the link with its own file; the linked one is unchanged (checked after all).
    // training.yml is written after the training answers (#27): the index waits for it.
    await getJson(`${server.url}/api/models/trained`);
    expect((await fs.lstat(path.join(dataDir, 'models', 'training.yml'))).isFile()).toBe(true);
  });

  it('does not write an upload through a linked label folder', async () => {
    const res = await postJson(`${server.url}/api/images`, { label: 'eve', image: base64(await photo('grace')) });
    expect(res.status).toBe(500);
    expect(await fs.readdir(path.join(outside, 'folder'))).toEqual(['face.jpg']);
  });

  it('deletes a label with the link in its folder, not the file it points at; a linked folder is no label', async () => {
    expect((await getJson(`${server.url}/api/images/eve`, { method: 'DELETE' })).status).toBe(404);
    expect((await fs.lstat(path.join(dataDir, 'images', 'eve'))).isSymbolicLink()).toBe(true);
    const deleted = await getJson(`${server.url}/api/images/ada`, { method: 'DELETE' });
    expect(deleted.body).toMatchObject({ deleted: 1 });
    expect(await fs.readdir(path.join(outside, 'folder'))).toEqual(['face.jpg']);
  });

  it('sets a linked results log and PPE history aside instead of reading or appending to them', async () => {
    const stored = await postJson(`${server.url}/api/results`, {
      results: [{ id: 'rec-000001', kind: 'recognition', captured_at: '2024-01-01T00:00:00Z', engine: 'browser', faces: [] }],
    });
    expect(stored.body).toMatchObject({ accepted: 1, total: 1 });
    const results = await fs.readdir(path.join(dataDir, 'results'));
    expect(results.some((n) => n.startsWith('results.jsonl.corrupt-'))).toBe(true);
    // The history is in the database now: the link was set aside unread, nothing written in its place.
    expect(results).not.toContain('results.jsonl');
    expect((await fs.readdir(path.join(dataDir, 'ppe'))).some((n) => n.startsWith('history.json.corrupt-'))).toBe(true);
  });
});
