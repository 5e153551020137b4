/**
 * Biometric files are private (#35 item 12): photos, templates, features, models, crops and results under DATA_DIR
 * are readable by the service's user only (files 0600, folders 0700), whatever the umask; files and folders an
 * older version left readable by everyone are made private at start.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isDatabaseFile } from '../helpers/data-dir-files.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

const ENV = { EMBEDDING_ENABLED: 'false', SIGHTINGS_INTERVAL_S: '0', SIGHTINGS_SOURCES: 'api,page,camera,browser,verify' };

/** Every entry under `dir` whose permission bits are not the private ones (files 0600, folders 0700). */
async function notPrivate(dir: string): Promise<string[]> {
  const wrong: string[] = [];
  const root = await fs.stat(dir);
  if ((root.mode & 0o777) !== 0o700) wrong.push(`. ${(root.mode & 0o777).toString(8)}`);
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dir, file);
    // The embedded database's own files are PostgreSQL's: its folder is private, which keeps them so.
    if (isDatabaseFile(rel) && rel !== 'db') continue;
    if (entry.isSymbolicLink()) continue;
    const mode = (await fs.lstat(file)).mode & 0o777;
    const want = entry.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) wrong.push(`${rel} ${mode.toString(8)}`);
  }
  return wrong;
}

describe('file modes under DATA_DIR', () => {
  let server: TestServer | undefined;
  let dataDir: string | undefined;
  const previousUmask = process.umask(0o022);
  afterAll(async () => {
    await server?.close();
    process.umask(previousUmask);
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('keeps photos, features, models, crops and results private (files 0600, folders 0700) under a umask of 022', async () => {
    server = await startTestServer(ENV);
    const grace = await photo('grace');
    expect((await postJson(`${server.url}/api/images`, { label: 'grace', image: base64(grace) })).status).toBe(200);
    expect(
      (await postJson(`${server.url}/api/images`, { label: 'grace', image: base64((await trainingCaptures('grace'))[1]) })).status,
    ).toBe(200);
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    const seen = await postJson(`${server.url}/api/recognize`, { image: base64(grace), source: 'camera', camera: 'door' });
    expect(seen.status).toBe(200);
    await server.service.ctx.sightingRecorder.idle();
    expect((await getJson(`${server.url}/api/sightings`)).body.total_matched).toBeGreaterThan(0);
    const result = {
      id: '00000000-0000-4000-8000-000000000035',
      kind: 'recognition',
      captured_at: new Date().toISOString(),
      engine: 'browser',
      faces: [],
    };
    expect((await postJson(`${server.url}/api/results`, { results: [result] })).status).toBe(200);
    const files = await fs.readdir(server.dataDir, { recursive: true });
    // What this test is about was written: a photo, a model, a crop.
    expect(files.some((f) => f.startsWith(`images${path.sep}grace${path.sep}`))).toBe(true);
    expect(files.some((f) => f.startsWith(`models${path.sep}`))).toBe(true);
    expect(files.some((f) => f.startsWith(`sightings${path.sep}`) && f.endsWith('.jpg'))).toBe(true);
    expect(await notPrivate(server.dataDir)).toEqual([]);
    await server.close();
    server = undefined;
  });

  it('makes the files and folders an older version left readable by everyone private at start', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-old-modes-'));
    await fs.chmod(dataDir, 0o755);
    await fs.mkdir(path.join(dataDir, 'images', 'ada'), { recursive: true, mode: 0o755 });
    await fs.writeFile(path.join(dataDir, 'images', 'ada', '1.jpg'), await photo('grace'), { mode: 0o644 });
    await fs.mkdir(path.join(dataDir, 'sightings', '2024-05-01'), { recursive: true, mode: 0o755 });
    await fs.writeFile(path.join(dataDir, 'sightings', '2024-05-01', 'a.jpg'), 'crop', { mode: 0o644 });
    await fs.chmod(path.join(dataDir, 'images'), 0o775);
    server = await startTestServer(ENV, dataDir);
    expect(await notPrivate(dataDir)).toEqual([]);
    // The image is still there and listed.
    expect((await getJson(`${server.url}/api/images/ada`)).body.count).toBe(1);
  });
});
