/**
 * #38 2: the vision workers are sized to the work. Over real HTTP: the server starts one (ready at once), starts
 * the second when two recognitions come together (both answered right, the new worker with the trained model),
 * stops it after ENGINE_IDLE_RELEASE_S without a job, and starts one again for the next burst; /metrics says how
 * many run and /api/ready how many it may run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ ENGINE_IDLE_RELEASE_S: '3', EMBEDDING_ENABLED: 'false', SIGHTINGS_ENABLED: 'false' });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** `lookout_worker_threads{pool="vision"}` from /metrics. */
async function visionThreads(): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('lookout_worker_threads{pool="vision"}'));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

async function waitForThreads(count: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while ((await visionThreads()) !== count) {
    if (Date.now() > deadline) throw new Error(`the vision pool kept ${await visionThreads()} workers, not ${count}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const recognizeGrace = async () => {
  const res = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('grace', 0.7)) });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ recognition_model: 'lbph', trained: true });
  expect(res.body.faces[0]).toMatchObject({ label: 'grace' });
  return res.body.faces[0];
};

describe('vision workers sized to the work', () => {
  it('starts one worker, ready at once, and says it may run up to WORKERS', async () => {
    const ready = await getJson(`${server.url}/api/ready`);
    expect(ready.body).toMatchObject({ status: 'ready', local_detector: 'ok', workers: 2 });
    expect(await visionThreads()).toBe(1);
  });

  it('starts the second for concurrent recognitions, with the trained model, and stops it after the idle time', async () => {
    for (const person of ['grace', 'eileen'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    await waitForThreads(1);
    const [a, b] = await Promise.all([recognizeGrace(), recognizeGrace()]);
    expect(a).toEqual(b);
    expect(await visionThreads()).toBe(2);
    await waitForThreads(1);
    // The one left answers alone, and a worker started again for the next burst has the model.
    expect(await recognizeGrace()).toEqual(a);
    const burst = await Promise.all([0, 1, 2].map(() => recognizeGrace()));
    for (const face of burst) expect(face).toEqual(a);
    expect(await visionThreads()).toBe(2);
  }, 60_000);
});
