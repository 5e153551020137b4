/**
 * #27 §1: a training answers once its model is saved (training.lbph), not after writing the 100s of MB of
 * training.yml; the YAML is written after the answer, downloads of training.yml wait for it and get the new version
 * whole (its ETag the version the index names), a newer training gives an unfinished write up, and a stop before
 * training.yml was written (the files a kill -9 leaves) restarts with the new model and writes training.yml again.
 * Deleting a person does the same (#27 leftover): training.lbph rewritten without them before the answer, the old
 * training.yml (which still names them) removed at once, its replacement written after the answer.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeLbphFile } from '../../shared/recognition/model-files.js';
import { LBPH_SOURCE_FILE, type ModelStore, TRAINING_FILE, TRAINING_SOURCE_NOTE } from '../../server/storage/model-store.js';
import { base64, rescaled, trainingCaptures } from '../helpers/faces.js';
import { killAll, spawnServer } from '../helpers/server-process.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const ENV = { EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', WORKERS: '2' };
const servers: TestServer[] = [];
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await killAll(children);
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

async function upload(url: string, label: 'grace' | 'eileen'): Promise<void> {
  for (const capture of await trainingCaptures(label)) expect((await uploadImage(url, label, capture)).status).toBe(200);
}

async function train(url: string): Promise<any> {
  const { status, body } = await postJson(`${url}/api/train`, {});
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Holds every training.yml write of `models` until `open()`. */
function gate(models: ModelStore): { open(): void; restore(): void } {
  const original = models.writeYaml;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  models.writeYaml = async (...args) => {
    await opened;
    return original.apply(models, args);
  };
  return {
    open,
    restore() {
      models.writeYaml = original;
    },
  };
}

/** GET of training.yml: its bytes, ETag and content-length. */
async function download(url: string): Promise<{ bytes: Buffer; etag: string | null; length: string | null }> {
  const res = await fetch(`${url}/api/models/trained/lbph`);
  expect(res.status).toBe(200);
  return { bytes: Buffer.from(await res.arrayBuffer()), etag: res.headers.get('etag'), length: res.headers.get('content-length') };
}

describe('training.yml written after the training answers', { timeout: 240_000 }, () => {
  it('answers before training.yml is written; a download waits and gets the new version whole', async () => {
    const server = await startTestServer(ENV);
    servers.push(server);
    const models = server.service.ctx.models;
    await upload(server.url, 'grace');
    await train(server.url);
    await download(server.url); // waits for the first training's training.yml
    const yml = path.join(server.dataDir, 'models', TRAINING_FILE);
    const before = await fs.readFile(yml);

    const held = gate(models);
    try {
      await upload(server.url, 'eileen');
      const answer = await train(server.url); // answers with the write held
      expect(answer.labels).toEqual(['eileen', 'grace']);
      expect((await fs.readFile(yml)).equals(before)).toBe(true); // training.yml not written yet
      await fs.access(path.join(server.dataDir, 'models', LBPH_SOURCE_FILE));
      // The new model is the one in use at once.
      const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.7)) });
      expect(body.faces[0].label).toBe('eileen');

      const pending = download(server.url);
      const early = await Promise.race([pending.then(() => 'answered'), new Promise((r) => setTimeout(() => r('waiting'), 500))]);
      expect(early).toBe('waiting'); // neither the old file nor a missing one: it waits for the new one
      held.open();
      const got = await pending;
      expect(Number(got.length)).toBe(got.bytes.length);
      expect(got.bytes.equals(await fs.readFile(yml))).toBe(true);
      expect(decodeLbphFile(got.bytes.toString('utf8')).labelIds).toEqual({ eileen: 0, grace: 1 });
      const index = await fetch(`${server.url}/api/models/trained`);
      expect(got.etag).toBe(index.headers.get('etag'));
    } finally {
      held.restore();
    }
  });

  it('a training while a write is still held gives it up; the download is the newest', async () => {
    const server = await startTestServer(ENV);
    servers.push(server);
    await upload(server.url, 'grace');
    const held = gate(server.service.ctx.models);
    try {
      await train(server.url);
      await upload(server.url, 'eileen');
      await train(server.url); // while the first training's training.yml is still held
      held.open();
      const got = await download(server.url);
      expect(decodeLbphFile(got.bytes.toString('utf8')).labelIds).toEqual({ eileen: 0, grace: 1 });
      expect(got.bytes.equals(await fs.readFile(path.join(server.dataDir, 'models', TRAINING_FILE)))).toBe(true);
      expect((await fs.readdir(path.join(server.dataDir, 'models'))).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    } finally {
      held.restore();
    }
  });

  it('a stop before training.yml was written restarts with the new model and writes training.yml again', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-model-write-'));
    dirs.push(dataDir);
    const modelsDir = path.join(dataDir, 'models');
    let server = await startTestServer(ENV, dataDir);
    await upload(server.url, 'grace');
    await train(server.url);
    await download(server.url);
    const oldYaml = await fs.readFile(path.join(modelsDir, TRAINING_FILE));
    const oldNote = await fs.readFile(path.join(modelsDir, TRAINING_SOURCE_NOTE));
    await upload(server.url, 'eileen');
    await train(server.url);
    const version = (await getJson(`${server.url}/api/models/trained`)).body.version;
    await server.close();
    // The files a kill -9 leaves between saving the model and putting its training.yml in place.
    await fs.writeFile(path.join(modelsDir, TRAINING_FILE), oldYaml);
    await fs.writeFile(path.join(modelsDir, TRAINING_SOURCE_NOTE), oldNote);

    server = await startTestServer(ENV, dataDir);
    servers.push(server);
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.7)) });
    expect(body.faces[0].label).toBe('eileen');
    expect((await getJson(`${server.url}/api/models/trained`)).body.version).toBe(version);
    const got = await download(server.url);
    expect(decodeLbphFile(got.bytes.toString('utf8')).labelIds).toEqual({ eileen: 0, grace: 1 });
    expect(got.bytes.equals(await fs.readFile(path.join(modelsDir, TRAINING_FILE)))).toBe(true);
  });

  it('a real SIGKILL right after the training answered: the restart serves the new model and its training.yml', async () => {
    // The compiled server (npm start), killed whether or not training.yml was written yet: either way consistent.
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-model-kill-'));
    dirs.push(dataDir);
    const env = { ...ENV, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    let server = await spawnServer(env, children);
    await upload(server.url, 'grace');
    await train(server.url);
    await upload(server.url, 'eileen');
    await train(server.url);
    server.child.kill('SIGKILL');
    await new Promise((resolve) => server.child.once('exit', resolve));
    server = await spawnServer(env, children);
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.7)) });
    expect(body.faces[0].label).toBe('eileen');
    const got = await download(server.url);
    expect(decodeLbphFile(got.bytes.toString('utf8')).labelIds).toEqual({ eileen: 0, grace: 1 });
    expect(got.bytes.equals(await fs.readFile(path.join(dataDir, 'models', TRAINING_FILE)))).toBe(true);
    expect((await fs.readdir(path.join(dataDir, 'models'))).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });

  it('a deletion answers before training.yml is written, which no longer names the person; a download waits for it', async () => {
    const server = await startTestServer(ENV);
    servers.push(server);
    await upload(server.url, 'grace');
    await upload(server.url, 'eileen');
    await train(server.url);
    await download(server.url); // the training's own training.yml, written
    const yml = path.join(server.dataDir, 'models', TRAINING_FILE);
    const held = gate(server.service.ctx.models);
    try {
      const deleting = getJson(`${server.url}/api/images/eileen`, { method: 'DELETE' });
      // Before #27's leftover the deletion wrote training.yml itself, so it waited on the held write.
      const answered = await Promise.race([deleting.then(() => 'answered'), new Promise((r) => setTimeout(() => r('waiting'), 15_000))]);
      expect(answered).toBe('answered');
      const { status, body } = await deleting;
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.removed.templates).toBe(4);
      // The model without her is in use and saved; the file that still named her is gone until its replacement.
      await expect(fs.access(yml)).rejects.toThrow();
      await fs.access(path.join(server.dataDir, 'models', LBPH_SOURCE_FILE));
      const { body: seen } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.7)) });
      expect(seen.faces[0].label).not.toBe('eileen');

      const pending = download(server.url);
      const early = await Promise.race([pending.then(() => 'answered'), new Promise((r) => setTimeout(() => r('waiting'), 500))]);
      expect(early).toBe('waiting');
      held.open();
      const got = await pending;
      expect(Object.keys(decodeLbphFile(got.bytes.toString('utf8')).labelIds)).toEqual(['grace']);
      expect(got.bytes.equals(await fs.readFile(yml))).toBe(true);
    } finally {
      held.open();
      held.restore();
    }
  });

  it('a stop after a deletion answered, before training.yml was written: the restart writes it without the person', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-model-delete-'));
    dirs.push(dataDir);
    const modelsDir = path.join(dataDir, 'models');
    let server = await startTestServer(ENV, dataDir);
    await upload(server.url, 'grace');
    await upload(server.url, 'eileen');
    await train(server.url);
    await download(server.url);
    const held = gate(server.service.ctx.models);
    try {
      expect((await getJson(`${server.url}/api/images/eileen`, { method: 'DELETE' })).status).toBe(200);
      await server.close(); // training.yml never written: the files a kill -9 right after the answer leaves
    } finally {
      held.restore();
    }
    expect(await fs.readdir(modelsDir)).not.toContain(TRAINING_FILE);

    server = await startTestServer(ENV, dataDir);
    servers.push(server);
    const { body } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('grace', 0.7)) });
    expect(body.faces[0].label).toBe('grace');
    const got = await download(server.url);
    const yaml = got.bytes.toString('utf8');
    expect(Object.keys(decodeLbphFile(yaml).labelIds)).toEqual(['grace']);
    expect(yaml).not.toContain('eileen');
    expect(got.bytes.equals(await fs.readFile(path.join(modelsDir, TRAINING_FILE)))).toBe(true);
  });
});
