/**
 * #27 §1 incremental training over the real service: each image's training features are kept beside it
 * (DATA_DIR/features) and reused, so a training after adding or deleting a person decodes only that person's
 * images; a detector change recomputes them all; a torn file is recomputed; deletes take the features along;
 * concurrent uploads, deletes and trainings, and two replicas on one DATA_DIR, leave exactly one valid feature
 * file per image.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRAINING_FILE } from '../../server/storage/model-store.js';
import { decodeFeatures } from '../../server/storage/feature-store.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { freePort } from '../helpers/server-process.js';
import { base64, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, REPO_ROOT, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const ENV = { EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', WORKERS: '2' };

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function upload(url: string, label: string, captures: Buffer[]): Promise<string[]> {
  const names: string[] = [];
  for (const capture of captures) {
    const { status, body } = await uploadImage(url, label, capture);
    expect(status).toBe(200);
    names.push(body.filename);
  }
  return names;
}

async function train(url: string): Promise<any> {
  const { status, body } = await postJson(`${url}/api/train`, {});
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

/**
 * Every image with a valid feature file made from its bytes, and no feature file without its image: the
 * consistency a training leaves behind (label/filename keys of both).
 */
async function checkConsistent(dataDir: string): Promise<number> {
  // Hidden names in the image folders are not images; in the feature folders they would be left-over temporary files.
  const list = async (dir: string, hidden: boolean) => {
    const out: string[] = [];
    for (const label of await fs.readdir(dir).catch(() => [] as string[])) {
      if (label.startsWith('.') && !hidden) continue;
      for (const name of await fs.readdir(path.join(dir, label))) if (hidden || !name.startsWith('.')) out.push(`${label}/${name}`);
    }
    return out.sort();
  };
  const images = await list(path.join(dataDir, 'images'), false);
  const features = await list(path.join(dataDir, 'features'), true);
  expect(features).toEqual(images.map((i) => `${i}.feat`));
  for (const image of images) {
    const record = decodeFeatures(await fs.readFile(path.join(dataDir, 'features', `${image}.feat`)));
    expect(record.image, image).toBe(sha256(await fs.readFile(path.join(dataDir, 'images', image))));
  }
  return images.length;
}

describe('incremental training: features kept per image', () => {
  let server: TestServer;
  let dataDir: string;
  const grace: string[] = [];

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-features-api-'));
    server = await startTestServer(ENV, dataDir);
    grace.push(...(await upload(server.url, 'grace', await trainingCaptures('grace'))));
    await upload(server.url, 'eileen', await trainingCaptures('eileen'));
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('computes every image once, then reuses them all: the same model, nothing decoded', async () => {
    const first = await train(server.url);
    expect(first.features).toEqual({ reused: 0, computed: 8, detections: 8, histograms: 8, descriptors: 0, removed: 0 });
    // training.yml as downloaded: written after the training answers, and waited for by its download (#27).
    const trainingYml = async () => Buffer.from(await (await fetch(`${server.url}/api/models/trained/lbph`)).arrayBuffer());
    const model = await trainingYml();
    expect(model.equals(await fs.readFile(path.join(dataDir, 'models', TRAINING_FILE)))).toBe(true);
    expect(await checkConsistent(dataDir)).toBe(8);

    const second = await train(server.url);
    expect(second.features).toEqual({ reused: 8, computed: 0, detections: 0, histograms: 0, descriptors: 0, removed: 0 });
    expect(second.faces_per_label).toEqual(first.faces_per_label);
    // The model from stored features is the model from the images, byte for byte.
    expect(sha256(await trainingYml())).toBe(sha256(model));
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('grace', 0.7)) });
    expect(body.faces[0].label).toBe('grace');
  }, 120_000);

  it('a new person costs that person’s images; the status says what was reused', async () => {
    await upload(server.url, 'lionel', await trainingCaptures('lionel'));
    const body = await train(server.url);
    expect(body.features).toMatchObject({ reused: 8, computed: 4, detections: 4, removed: 0 });
    expect(body.total_labels).toBe(3);
    const status = await getJson(`${server.url}/api/train/status`);
    expect(status.body.last.features).toEqual(body.features);
    expect(await checkConsistent(dataDir)).toBe(12);
  }, 120_000);

  it('deleting an image or a person removes their features; the next training decodes nothing', async () => {
    const one = await getJson(`${server.url}/api/images/grace/${grace[0]}`, { method: 'DELETE' });
    expect(one.status).toBe(200);
    await expect(fs.stat(path.join(dataDir, 'features', 'grace', `${grace[0]}.feat`))).rejects.toThrow();
    const person = await getJson(`${server.url}/api/images/eileen`, { method: 'DELETE' });
    expect(person.status).toBe(200);
    await expect(fs.stat(path.join(dataDir, 'features', 'eileen'))).rejects.toThrow();
    const body = await train(server.url);
    expect(body.features).toEqual({ reused: 7, computed: 0, detections: 0, histograms: 0, descriptors: 0, removed: 0 });
    expect(body.labels).toEqual(['grace', 'lionel']);
    expect(await checkConsistent(dataDir)).toBe(7);
  }, 120_000);

  it('a torn or corrupt feature file is recomputed, not trusted, and written whole again', async () => {
    const torn = path.join(dataDir, 'features', 'grace', `${grace[1]}.feat`);
    const bytes = await fs.readFile(torn);
    await fs.writeFile(torn, bytes.subarray(0, bytes.length >> 1));
    const flipped = path.join(dataDir, 'features', 'grace', `${grace[2]}.feat`);
    const other = Buffer.from(await fs.readFile(flipped));
    other[other.length >> 1] ^= 0x40;
    await fs.writeFile(flipped, other);
    const body = await train(server.url);
    expect(body.features).toMatchObject({ reused: 5, computed: 2, detections: 2 });
    expect(await checkConsistent(dataDir)).toBe(7);
  }, 120_000);

  it('another detector (CASCADE_MIN_NEIGHBORS) recomputes every image; its own features are reused after', async () => {
    await server.close();
    server = await startTestServer({ ...ENV, CASCADE_MIN_NEIGHBORS: '4' }, dataDir);
    const changed = await train(server.url);
    expect(changed.features).toMatchObject({ reused: 0, computed: 7, detections: 7 });
    const again = await train(server.url);
    expect(again.features).toMatchObject({ reused: 7, computed: 0 });
    expect(await checkConsistent(dataDir)).toBe(7);
  }, 120_000);

  it('concurrent uploads, deletes and trainings leave exactly one valid feature file per image', async () => {
    const captures = [...(await trainingCaptures('eileen')), ...(await trainingCaptures('grace'))];
    const uploaded = await upload(server.url, 'ada', captures.slice(0, 4));
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 3; round++) {
      work.push(postJson(`${server.url}/api/train`, {}).then((r) => expect([200, 409]).toContain(r.status)));
      work.push(upload(server.url, 'ada', [captures[4 + round]]));
      work.push(getJson(`${server.url}/api/images/ada/${uploaded[round]}`, { method: 'DELETE' }).then((r) => expect(r.status).toBe(200)));
      work.push(upload(server.url, `temp-${round}`, [captures[round]]));
    }
    await Promise.all(work);
    await getJson(`${server.url}/api/images/temp-0`, { method: 'DELETE' });
    // A training after the dust settles: every image has its features, nothing else is left.
    for (;;) {
      const { status } = await postJson(`${server.url}/api/train`, {});
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await checkConsistent(dataDir)).toBe(7 + 1 + 3 + 2);
  }, 180_000);
});

describe('two replicas on one DATA_DIR', () => {
  let a: TestServer;
  let b: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-features-replicas-'));
    const env = { ...ENV, WORKERS: '1', DATABASE_URL: await freshPostgresDatabase() };
    a = await startTestServer(env, dataDir);
    b = await startTestServer(env, dataDir);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('reuse each other’s features; a delete on one and a training on the other stay consistent', async () => {
    await upload(a.url, 'grace', await trainingCaptures('grace'));
    await upload(b.url, 'lionel', await trainingCaptures('lionel'));
    expect((await train(a.url)).features).toMatchObject({ reused: 0, computed: 8 });
    expect((await train(b.url)).features).toMatchObject({ reused: 8, computed: 0 });

    // Deletes on B while A trains and uploads: every answer as documented, then one valid file per image.
    const eileen = await trainingCaptures('eileen');
    const [trained] = await Promise.all([
      postJson(`${a.url}/api/train`, {}),
      upload(a.url, 'eileen', eileen.slice(0, 2)),
      (async () => {
        const images = (await getJson(`${b.url}/api/images/grace`)).body;
        const filename = images.files[0].filename;
        return getJson(`${b.url}/api/images/grace/${filename}`, { method: 'DELETE' });
      })(),
    ]);
    expect(trained.status).toBe(200);
    const last = await train(b.url);
    expect(last.features.computed).toBeLessThanOrEqual(2);
    expect(await checkConsistent(dataDir)).toBe(3 + 4 + 2);
    expect((await train(a.url)).features).toMatchObject({ reused: 9, computed: 0 });
  }, 180_000);
});

describe('the embedding recognizer: descriptors kept and recomputed only for another descriptor model', () => {
  let dataDir: string;
  let server: TestServer | undefined;
  const EMBEDDING = { ...ENV, EMBEDDING_ENABLED: 'true' };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-features-embedding-'));
  });

  afterAll(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function restart(env: Record<string, string>): Promise<string> {
    await server?.close();
    server = await startTestServer(env, dataDir);
    return server.url;
  }

  it('describes each face once; a switch of descriptor model redescribes without detecting; the recognizer off reuses', async () => {
    let url = await restart(EMBEDDING);
    await upload(url, 'grace', (await trainingCaptures('grace')).slice(0, 2));
    await upload(url, 'eileen', (await trainingCaptures('eileen')).slice(0, 2));
    const first = await train(url);
    expect(first.recognizers_trained).toEqual(['lbph', 'embedding']);
    expect(first.features).toMatchObject({ computed: 4, detections: 4, descriptors: 4 });
    expect((await train(url)).features).toMatchObject({ reused: 4, computed: 0, descriptors: 0 });

    url = await restart({ ...EMBEDDING, EMBEDDING_DESCRIPTOR: 'faceres-1024' });
    const switched = await train(url);
    expect(switched.recognizers_trained).toEqual(['lbph', 'embedding']);
    expect(switched.features).toEqual({ reused: 0, computed: 4, detections: 0, histograms: 0, descriptors: 4, removed: 0 });
    const { body } = await postJson(`${url}/api/recognize`, {
      image: base64(await rescaled('grace', 0.7)),
      recognition_model: 'embedding',
    });
    expect(body.faces[0].label).toBe('grace');

    // Off: the stored descriptors are kept as they are (not dropped), LBPH trains from stored features.
    url = await restart(ENV);
    const off = await train(url);
    expect(off.recognizers_trained).toEqual(['lbph']);
    expect(off.features).toMatchObject({ reused: 4, computed: 0 });
    url = await restart({ ...EMBEDDING, EMBEDDING_DESCRIPTOR: 'faceres-1024' });
    expect((await train(url)).features).toMatchObject({ reused: 4, computed: 0, descriptors: 0 });
  }, 300_000);
});

describe('kill -9 in the middle of a training', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  /** The server from its sources as its own process (tsx), so it can be killed while it writes features. */
  async function spawnSources(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...ENV },
      stdio: 'ignore',
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (const deadline = Date.now() + 60_000; ; ) {
      if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}`);
      if (
        await fetch(`${url}/api/health`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return { child, url };
      if (Date.now() > deadline) throw new Error('server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('leaves only whole feature files: the next training reuses them, recomputes the rest, and is consistent', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-features-kill-'));
    try {
      let server = await spawnSources(dataDir);
      for (const person of ['grace', 'eileen', 'lionel'] as const) {
        const captures = await trainingCaptures(person);
        for (let copy = 0; copy < 2; copy++) await upload(server.url, `${person}-${copy}`, captures);
      }
      for (const delayMs of [400, 1500]) {
        await fs.rm(path.join(dataDir, 'features'), { recursive: true, force: true });
        void fetch(`${server.url}/api/train`, { method: 'POST' }).catch(() => {});
        await new Promise((r) => setTimeout(r, delayMs));
        server.child.kill('SIGKILL');
        await new Promise((r) => server.child.once('exit', r));
        server = await spawnSources(dataDir);
        const body = await train(server.url);
        expect(body.features.reused + body.features.computed).toBe(24);
        expect(await checkConsistent(dataDir)).toBe(24);
      }
      server.child.kill('SIGKILL');
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
