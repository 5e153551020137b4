/**
 * #29 §5: a switch of the face detection method and the LBPH model. Against Lookout's own KServe V2 model server
 * on 127.0.0.1 (scripts/detector-switch-figures.ts measures it: trained with `local`, LBPH names 8 of 9 test faces
 * with `local` and 2 of 9 with `remote` boxes; retrained with `remote`, 9 of 9): the models say which method they
 * were trained with, the configuration says when the active one differs (`retrain_recommended`), a retraining
 * clears it and recognises again, and the record survives a restart and never speaks for another training.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedDetection, readTrainedDetection, recordTrainedDetection } from '../../server/engines/faces/trained-detection.js';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { IN_PROCESS_MODEL_SERVER_ENV } from '../helpers/model-server-env.js';
import { getJson, postJson, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

const ENV = IN_PROCESS_MODEL_SERVER_ENV;

async function putJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  return getJson(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('switching the detection method after a training', () => {
  let modelServer: RunningModelServer;
  let server: TestServer;
  let dataDir: string;

  const start = async () => {
    server = await startTestServer({ ...ENV, REMOTE_DETECTOR_URL: modelServer.url }, dataDir);
    // A plain wait: expect.poll only runs inside a test, and this also runs in beforeAll.
    const deadline = Date.now() + 30_000;
    while ((await getJson(`${server.url}/api/ready`)).body.remote_status !== 'connected') {
      if (Date.now() > deadline) throw new Error('the model server did not connect');
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const config = async () => (await getJson(`${server.url}/api/models/config`)).body;
  const recognizeGrace = async () => {
    const { status, body } = await postJson(`${server.url}/api/recognize`, {
      image: base64(await photo('grace')),
      recognition_model: 'lbph',
    });
    expect(status).toBe(200);
    return body.faces.map((f: { label: string }) => f.label);
  };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-detection-switch-'));
    modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
    await start();
    for (const person of ['grace', 'eileen', 'lionel'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await modelServer?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('untrained: no method to compare with, nothing to retrain', async () => {
    expect(await config()).toMatchObject({ trained_detection_method: null, retrain_recommended: false });
  });

  it('trained with local, then switched to remote: LBPH stops naming the person and the configuration says to retrain', async () => {
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.body).toMatchObject({ status: 'ok', detection_method: 'local' });
    expect(await config()).toMatchObject({ detection_method: 'local', trained_detection_method: 'local', retrain_recommended: false });
    expect(await recognizeGrace()).toEqual(['grace']);

    const switched = await putJson(`${server.url}/api/models/detection`, { detection_method: 'remote' });
    expect(switched.body).toMatchObject({ detection_method: 'remote', trained_detection_method: 'local', retrain_recommended: true });
    expect(await config()).toMatchObject({ detection_method: 'remote', trained_detection_method: 'local', retrain_recommended: true });
    // What the hint is for: the remote boxes crop her face differently from the cascade's she was trained on.
    expect(await recognizeGrace()).not.toContain('grace');

    // Back to the method of the training: nothing to do.
    expect((await putJson(`${server.url}/api/models/detection`, { detection_method: 'local' })).body.retrain_recommended).toBe(false);
    await putJson(`${server.url}/api/models/detection`, { detection_method: 'remote' });
  });

  let lastTrainedAt = '';
  it('a retraining with remote clears the hint and names her again', async () => {
    const retrained = (await postJson(`${server.url}/api/train`, {})).body;
    expect(retrained.detection_method).toBe('remote');
    lastTrainedAt = retrained.trained_at;
    expect(await config()).toMatchObject({ detection_method: 'remote', trained_detection_method: 'remote', retrain_recommended: false });
    expect(await recognizeGrace()).toEqual(['grace']);
  });

  it('the record survives a restart: switching back to local after it asks for a retraining again', async () => {
    await server.close();
    await start();
    // The reloaded LBPH model keeps its training's time exactly (training.lbph's mtime): the file system's clock
    // may stamp a file a few ms before the Date.now() taken just before writing it, which made the record look
    // older than the model and say nothing (a clean-clone CI run).
    expect((await config()).recognizers.lbph.trained_at).toBe(lastTrainedAt);
    expect(await config()).toMatchObject({ detection_method: 'remote', trained_detection_method: 'remote', retrain_recommended: false });
    expect((await putJson(`${server.url}/api/models/detection`, { detection_method: 'local' })).body).toMatchObject({
      trained_detection_method: 'remote',
      retrain_recommended: true,
    });
  });
});

describe('the trained-detection record', () => {
  it('speaks only for the training it was written by, and a damaged one says nothing', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-trained-detection-'));
    try {
      expect(await readTrainedDetection(dir)).toBeNull();
      await fs.mkdir(path.join(dir, 'settings'));
      await recordTrainedDetection(dir, { detection_method: 'remote', trained_at: '2026-01-02T03:04:05.000Z' });
      const record = await readTrainedDetection(dir);
      expect(record).toEqual({ detection_method: 'remote', trained_at: '2026-01-02T03:04:05.000Z' });
      expect(installedDetection(record, ['2026-01-02T03:04:05.000Z', null])).toBe('remote');
      // After a restart the LBPH model's time is training.lbph's, written moments after the training's time.
      expect(installedDetection(record, [null, '2026-01-02T03:04:06.250Z'])).toBe('remote');
      // Models of another training (trained before the record was kept, or long after): unknown.
      expect(installedDetection(record, ['2026-01-02T03:04:04.000Z', null])).toBeNull();
      expect(installedDetection(record, ['2026-02-01T00:00:00.000Z', null])).toBeNull();
      expect(installedDetection(record, [null, null])).toBeNull();
      for (const damaged of ['{', '{"format":"lookout-trained-detection","detection_method":"sideways","trained_at":"x"}', '[]']) {
        await fs.writeFile(path.join(dir, 'settings', 'trained-detection.json'), damaged);
        expect(await readTrainedDetection(dir), damaged).toBeNull();
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
