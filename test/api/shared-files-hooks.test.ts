/**
 * #37: every change the file stores make to the shared state (images, features, models, settings, sighting crops,
 * corrections.version) goes through the SharedFiles seam (server/storage/shared-files.ts), so that another replica
 * replaying the hooks holds the same files. Over real HTTP on 127.0.0.1: a server whose seam is a recorder that
 * replays every hook into a second folder, driven through uploads, a training, settings changes, recognitions with
 * sightings, a correction, a merge, an image's and a person's deletion; after each step the second folder's shared
 * files are DATA_DIR's, byte for byte. And a hook that fails (the shared state away) answers 503
 * `storage_unavailable` and leaves nothing behind that was not shared.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileLockOptions } from '../../server/storage/file-lock.js';
import { type ClusterLock, LocalFiles, type SharedFiles, StateUnavailableError, sharedPath } from '../../server/storage/shared-files.js';
import { base64, type Person, photo, rescaled } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

/**
 * A test double (a recorder): the embedded seam's locks, and every hook replayed at once into `mirror`, as a replica
 * copying the changes into its own DATA_DIR would (a file copied, a file or folder removed, a rename made).
 * `failWrites` makes `wrote` throw as a database that is away would.
 */
class MirrorFiles implements SharedFiles {
  readonly kind = 'postgresql' as const;
  readonly dataDir: string;
  private readonly local: LocalFiles;
  failWrites = false;
  /** Every hook call, `wrote images/ada/1.jpg` ... (paths relative to DATA_DIR). */
  readonly calls: string[] = [];
  /** Hooks given a path outside DATA_DIR: a store telling of a file that is no part of the state. */
  readonly unshared: string[] = [];

  constructor(
    dataDir: string,
    readonly mirror: string,
  ) {
    this.dataDir = path.resolve(dataDir);
    this.local = new LocalFiles(dataDir);
  }

  lock(lockFile: string, opts?: FileLockOptions): ClusterLock {
    return this.local.lock(lockFile, opts);
  }

  private rel(file: string, hook: string): string | null {
    const rel = sharedPath(this.dataDir, file);
    this.calls.push(`${hook} ${rel ?? file}`);
    if (path.relative(this.dataDir, file).startsWith('..')) this.unshared.push(`${hook} ${file}`);
    return rel;
  }

  async wrote(file: string): Promise<void> {
    if (this.failWrites) throw new StateUnavailableError('the shared state is away (test double)');
    const rel = this.rel(file, 'wrote');
    if (rel === null) return;
    const target = path.join(this.mirror, rel);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.copyFile(file, target);
  }

  async removed(target: string): Promise<void> {
    const rel = this.rel(target, 'removed');
    if (rel !== null) await fs.rm(path.join(this.mirror, rel), { recursive: true, force: true });
  }

  async moved(from: string, to: string): Promise<void> {
    const a = this.rel(from, 'moved');
    const b = this.rel(to, 'moved-to');
    if (a === null || b === null) return;
    await fs.mkdir(path.dirname(path.join(this.mirror, b)), { recursive: true });
    await fs.rename(path.join(this.mirror, a), path.join(this.mirror, b));
  }
}

/** The shared files under `dir` (SHARED_ROOTS, no dot-names): relative path -> sha256. */
async function sharedFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (folder: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(folder, e.name);
      if (e.isDirectory()) await walk(full);
      else if (e.isFile() && sharedPath(dir, full) !== null) {
        out[path.relative(dir, full).split(path.sep).join('/')] = createHash('sha256')
          .update(await fs.readFile(full))
          .digest('hex');
      }
    }
  };
  await walk(dir);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** The mirror holds DATA_DIR's shared files (waiting a little for what is written after an answer: training.yml). */
async function expectMirrored(server: TestServer, shared: MirrorFiles, step: string): Promise<Record<string, string>> {
  const until = Date.now() + 15_000;
  for (;;) {
    await server.service.ctx.sightingRecorder.idle();
    const [here, there] = await Promise.all([sharedFiles(server.dataDir), sharedFiles(shared.mirror)]);
    if (JSON.stringify(here) === JSON.stringify(there) || Date.now() > until) {
      expect(there, `after ${step}`).toEqual(here);
      expect(shared.unshared, `after ${step}`).toEqual([]);
      return here;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ENV = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false', SIGHTINGS_ENABLED: 'true' };

async function upload(server: TestServer, label: string, who: Person, scale: number): Promise<string> {
  const res = await uploadImage(server.url, label, new Uint8Array(await rescaled(who, scale)), `${who}.jpg`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.filename;
}

async function call(server: TestServer, method: string, p: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api${p}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: res.status, body: await res.json() };
}

describe('every change of the shared files goes through the SharedFiles seam', () => {
  let server: TestServer;
  let shared: MirrorFiles;
  let root: string;

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-shared-hooks-'));
    const dataDir = path.join(root, 'data');
    await fs.mkdir(dataDir);
    shared = new MirrorFiles(dataDir, path.join(root, 'mirror'));
    server = await startTestServer(ENV, dataDir, { shared });
  });
  afterAll(async () => {
    await server?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('a replica replaying the hooks holds the same shared files after each step', async () => {
    // Uploads for three people.
    const grace: string[] = [];
    for (const scale of [1, 0.9, 0.8]) grace.push(await upload(server, 'grace', 'grace', scale));
    for (const scale of [1, 0.9]) await upload(server, 'eileen', 'eileen', scale);
    const lionel: string[] = [];
    for (const scale of [1, 0.9]) lionel.push(await upload(server, 'lionel', 'lionel', scale));
    const dup = await upload(server, 'grace-2', 'grace', 0.7);
    let files = await expectMirrored(server, shared, 'uploads');
    expect(Object.keys(files).filter((f) => f.startsWith('images/'))).toHaveLength(8);

    // A training: features, the models, the trained detection method. training.yml is each replica's own, written
    // from training.lbph (server/storage/shared-files.ts, DERIVED): never shared.
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.status, JSON.stringify(trained.body)).toBe(200);
    files = await expectMirrored(server, shared, 'training');
    expect(Object.keys(files)).toEqual(
      expect.arrayContaining(['models/training.lbph', 'models/model.pickle', 'settings/trained-detection.json']),
    );
    expect(Object.keys(files)).not.toContain('models/training.yml');
    expect(Object.keys(files).some((f) => f.startsWith('features/grace/'))).toBe(true);

    // Settings: a threshold, the recognizer.
    const thresholds = await call(server, 'PUT', '/models/thresholds', { recognizer: 'lbph', max: 60 });
    expect(thresholds.status, JSON.stringify(thresholds.body)).toBe(200);
    const recognizer = await call(server, 'PUT', '/models/config', { recognition_model: 'embedding' });
    expect(recognizer.status, JSON.stringify(recognizer.body)).toBe(200);
    files = await expectMirrored(server, shared, 'settings');
    expect(Object.keys(files)).toContain('settings/runtime.json');

    // Recognitions kept as sightings with their crops.
    for (const who of ['grace', 'lionel'] as const) {
      const res = await postJson(`${server.url}/api/recognize`, { image: base64(await photo(who)) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    files = await expectMirrored(server, shared, 'recognitions');
    expect(Object.keys(files).some((f) => f.startsWith('sightings/'))).toBe(true);

    // A correction ("not this person") on a sighting.
    const sightings = (await getJson(`${server.url}/api/sightings`)).body.sightings as { id: string; label: string | null }[];
    const named = sightings.find((s) => s.label !== null) ?? sightings[0];
    const correction = await postJson(`${server.url}/api/corrections`, { sighting_id: named.id, label: named.label ?? 'grace' });
    expect(correction.status, JSON.stringify(correction.body)).toBe(200);
    files = await expectMirrored(server, shared, 'a correction');
    expect(Object.keys(files)).toContain('corrections.version');

    // A merge: the second enrolment's photo (and its features) go to the person who stays.
    const merge = await call(server, 'POST', '/people/grace-2/merge', { into: 'grace' });
    expect(merge.status, JSON.stringify(merge.body)).toBe(200);
    files = await expectMirrored(server, shared, 'a merge');
    expect(Object.keys(files).some((f) => f.startsWith('images/grace-2/'))).toBe(false);
    expect(Object.keys(files)).toContain(`images/grace/${merge.body.files[dup]}`);

    // One image deleted.
    const gone = await call(server, 'DELETE', `/images/grace/${grace[0]}`);
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    files = await expectMirrored(server, shared, "an image's deletion");
    expect(Object.keys(files)).not.toContain(`images/grace/${grace[0]}`);

    // A person deleted everywhere: images, features, templates, sightings.
    const person = await call(server, 'DELETE', '/images/lionel');
    expect(person.status, JSON.stringify(person.body)).toBe(200);
    files = await expectMirrored(server, shared, "a person's deletion");
    expect(Object.keys(files).some((f) => f.startsWith('images/lionel/') || f.startsWith('features/lionel/'))).toBe(false);
    expect(lionel.length).toBe(2);
  }, 240_000);

  it('an upload whose change cannot be shared answers 503 storage_unavailable and leaves no image behind', async () => {
    shared.failWrites = true;
    try {
      const res = await uploadImage(server.url, 'ada', new Uint8Array(await rescaled('eileen', 0.85)), 'ada.jpg');
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('storage_unavailable');
    } finally {
      shared.failWrites = false;
    }
    const left = await fs.readdir(path.join(server.dataDir, 'images', 'ada')).catch(() => []);
    expect(left.filter((n) => !n.startsWith('.'))).toEqual([]);
    expect((await getJson(`${server.url}/api/images/ada`)).body.images).toEqual([]);
    await expectMirrored(server, shared, 'a failed upload');
  }, 60_000);

  it('a settings change that cannot be shared answers 503 storage_unavailable and is undone', async () => {
    const file = path.join(server.dataDir, 'settings', 'runtime.json');
    expect((await call(server, 'PUT', '/models/thresholds', { recognizer: 'lbph', max: 60 })).status).toBe(200);
    const before = await fs.readFile(file, 'utf8');
    const thresholdsBefore = (await getJson(`${server.url}/api/models/thresholds`)).body;
    shared.failWrites = true;
    try {
      const res = await call(server, 'PUT', '/models/thresholds', { recognizer: 'lbph', max: 55 });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('storage_unavailable');
    } finally {
      shared.failWrites = false;
    }
    expect(await fs.readFile(file, 'utf8')).toBe(before);
    expect((await getJson(`${server.url}/api/models/thresholds`)).body).toEqual(thresholdsBefore);
    await expectMirrored(server, shared, 'a failed settings change');
  }, 60_000);
});
