/**
 * #37: API replicas as real processes (`npm start`, the compiled dist/ build), each with its OWN DATA_DIR, sharing
 * only a real PostgreSQL (`DATABASE_URL`): no shared volume, no file locks. Photos uploaded on the first are trained
 * on the second and recognised on the third; two trainings at once give one 200 and one 409; concurrent uploads and
 * results sent to all are all kept; a person deleted on one is gone on all; a replica started later on an empty disk
 * answers correctly at once; a replica killed (-9) during a training does not hold the training lock; and a
 * PostgreSQL restart during traffic gives clear 503s, then the replicas reconnect by themselves with no acknowledged
 * upload lost. How soon things happen is printed ("replicas: ..." lines) and bounded loosely: this runs on 2 cores.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { base64, rescaled, trainingCaptures } from '../helpers/faces.js';
import { type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster.js';
import { killAll, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { getJson, postJson, uploadImage } from '../helpers/test-server.js';

const children: ChildProcess[] = [];
const dataDirs: string[] = [];

/** A replica on a new, empty DATA_DIR; resolves once it is ready (its copy of PostgreSQL's state is whole). */
async function startReplica(databaseUrl: string): Promise<ServerProcess> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-replica-'));
  dataDirs.push(dataDir);
  const server = await spawnServer(
    {
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      WORKERS: '1',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
      LOG_LEVEL: 'warn',
    },
    children,
  );
  await until(async () => (await fetch(`${server.url}/api/ready`)).status === 200, 30_000, `${server.url} ready`);
  return server;
}

/** Polls `check` until it is true; the time it took (ms). Throws after `ms`. */
async function until(check: () => Promise<boolean>, ms: number, what: string, everyMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`replicas: not true after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Fails with the last words of any server that has stopped, rather than a bare "fetch failed" later. */
function expectAllRunning(servers: ServerProcess[]): void {
  const exited = servers.filter((r) => r.child.exitCode !== null || r.child.signalCode !== null);
  expect(exited.map((r) => `${r.url} exited ${r.child.exitCode ?? r.child.signalCode}: ${r.output().slice(-3000)}`)).toEqual([]);
}

async function recognizedLabel(url: string, image: Buffer): Promise<string | undefined> {
  const { status, body } = await postJson(`${url}/api/recognize`, { image: base64(image) });
  expect(status).toBe(200);
  return body.faces[0]?.label;
}

async function imagesOf(url: string, label: string): Promise<string[]> {
  const res = await fetch(`${url}/api/images/${label}`);
  if (res.status === 404) return [];
  expect(res.status).toBe(200);
  return ((await res.json()) as { images: string[] }).images;
}

function resultRecord(n: number) {
  return {
    id: `replica-${randomUUID()}`,
    kind: 'recognition',
    captured_at: new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString(),
    engine: 'browser',
    faces: [{ x: 1, y: 2, w: 3, h: 4, label: 'ada', confidence: 80 }],
  };
}

afterAll(async () => {
  await killAll(children);
  await Promise.all(dataDirs.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

describe('three API replicas with three DATA_DIRs on one PostgreSQL', () => {
  let databaseUrl: string;
  let replicas: ServerProcess[];
  let a: string;
  let b: string;
  let c: string;

  beforeAll(async () => {
    databaseUrl = await freshPostgresDatabase();
    // One first: it creates the schema; the other two then start side by side.
    replicas = [await startReplica(databaseUrl)];
    replicas.push(...(await Promise.all([startReplica(databaseUrl), startReplica(databaseUrl)])));
    [a, b, c] = replicas.map((r) => r.url);
  }, 120_000);

  it('photos uploaded on the first, trained on the second, are recognised on the third (named)', async () => {
    for (const person of ['grace', 'eileen'] as const) {
      for (const capture of await trainingCaptures(person)) {
        for (let copy = 0; copy < 3; copy++) expect((await uploadImage(a, person, capture)).status).toBe(200);
      }
    }
    const probe = await rescaled('eileen', 0.7);
    expect(await recognizedLabel(c, probe)).not.toBe('eileen');
    const trainedOnB = await postJson(`${b}/api/train`, {});
    expect(trainedOnB.status).toBe(200);
    // Every photo uploaded on A reached B's disk before B trained (B's lock brought its copy up to date).
    expect(trainedOnB.body.labels).toEqual(['eileen', 'grace']);
    // C (and A, where the photos came from) serve B's model without a restart, each once its copy has it.
    const [onC, onA] = await Promise.all(
      [c, a].map((url) => until(async () => (await recognizedLabel(url, probe)) === 'eileen', 20_000, `${url} names eileen`)),
    );
    console.info(`replicas: C named eileen with the model trained on B ${onC} ms after B's training answered (A: ${onA} ms)`);
  }, 90_000);

  it('two trainings at once on A and C: one 200, one 409, and the model loads on all three', async () => {
    const answers = await Promise.all([a, c].map((url) => postJson(`${url}/api/train`, {})));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(answers.find((r) => r.status === 409)!.body.error.code).toBe('training_in_progress');
    const probe = await rescaled('grace', 0.7);
    for (const url of [a, b, c]) expect(await recognizedLabel(url, probe)).toBe('grace');
    // Trainable again once the first ended, on the replica that was refused.
    const refused = answers[0].status === 409 ? a : c;
    const again = await postJson(`${refused}/api/train`, {});
    expect(again.status).toBe(200);
    // The same photos give byte-identical model files: the others keep their model but take the new training's time,
    // so all three say when (and with which detection method) their model was trained alike.
    const configOf = async (url: string) => (await getJson(`${url}/api/models/config`)).body;
    await until(
      async () => (await Promise.all([a, b, c].map(configOf))).every((cfg) => cfg.recognizers.lbph.trained_at === again.body.trained_at),
      10_000,
      "every replica reports the retraining's trained_at",
    );
    for (const url of [a, b, c]) expect((await configOf(url)).trained_detection_method).toBe('local');
  }, 90_000);

  it('keeps every one of 3 x 30 concurrent uploads of one label to the three replicas, and all list them', async () => {
    const [capture] = await trainingCaptures('grace');
    const answers = await Promise.all(Array.from({ length: 90 }, (_, i) => uploadImage([a, b, c][i % 3], 'ada', capture)));
    expect(answers.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const names = answers.map((r) => r.body.filename as string).sort();
    expect(new Set(names).size).toBe(90);
    const answered = Date.now();
    // Each lists its own copy, which follows PostgreSQL within moments.
    await Promise.all(
      [a, b, c].map((url) => until(async () => (await imagesOf(url, 'ada')).length === 90, 10_000, `${url} lists 90 photos of ada`)),
    );
    console.info(`replicas: all three listed the 90 concurrent uploads ${Date.now() - answered} ms after the last answer`);
    for (const url of [a, b, c]) expect((await imagesOf(url, 'ada')).sort()).toEqual(names);
  }, 90_000);

  it('keeps every result posted concurrently to the three replicas, and all list them', async () => {
    const batches = Array.from({ length: 40 }, (_, i) => [resultRecord(3 * i), resultRecord(3 * i + 1), resultRecord(3 * i + 2)]);
    const answers = await Promise.all(batches.map((batch, i) => postJson(`${[a, b, c][i % 3]}/api/results`, { results: batch })));
    expect(answers.every((r) => r.status === 200 && r.body.accepted === 3)).toBe(true);
    // A resend of one batch to another replica is recognised as duplicates.
    const resent = await postJson(`${a}/api/results`, { results: batches[1] });
    expect(resent.body).toMatchObject({ accepted: 0, duplicates: 3 });
    const ids = batches
      .flat()
      .map((r) => r.id)
      .sort();
    for (const url of [a, b, c]) {
      const { body } = await getJson(`${url}/api/results?limit=200`);
      expect(body.total).toBe(120);
      expect(body.results.map((r: { id: string }) => r.id).sort()).toEqual(ids);
    }
  }, 60_000);

  it('a replica started later with an empty DATA_DIR answers correctly at once', async () => {
    const started = Date.now();
    const late = await startReplica(databaseUrl);
    replicas.push(late);
    console.info(`replicas: a fourth replica on an empty DATA_DIR was ready ${Date.now() - started} ms after it was spawned`);
    // Its first answers, right after /api/ready said 200: the model and the photos are there.
    expect(await recognizedLabel(late.url, await rescaled('eileen', 0.7))).toBe('eileen');
    expect(await recognizedLabel(late.url, await rescaled('grace', 0.7))).toBe('grace');
    expect((await imagesOf(late.url, 'ada')).length).toBe(90);
    expect((await imagesOf(late.url, 'eileen')).sort()).toEqual((await imagesOf(a, 'eileen')).sort());
    expect((await getJson(`${late.url}/api/models/trained`)).body.labels).toEqual((await getJson(`${a}/api/models/trained`)).body.labels);
  }, 90_000);

  it('offers one model version (ETag) on every replica for the same model files', async () => {
    const etags = () => Promise.all(replicas.map(async (r) => (await fetch(`${r.url}/api/models/trained`)).headers.get('etag')));
    const started = Date.now();
    let seen = await etags();
    while (new Set(seen).size > 1 && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 200));
      seen = await etags();
    }
    console.info(`replicas: model versions offered by A, B, C and the late one: ${seen.join(', ')}`);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]).toBeTruthy();
  }, 30_000);

  it('a person deleted on the third is gone on all the others within moments, without a training', async () => {
    const probe = await rescaled('eileen', 0.7);
    const others = replicas.filter((r) => r.url !== c).map((r) => r.url);
    for (const url of others) expect(await recognizedLabel(url, probe)).toBe('eileen');
    const deleted = await getJson(`${c}/api/images/eileen`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.removed.templates).toBeGreaterThan(0);
    const answered = Date.now();
    // Each one's time to stop naming her (and to stop listing her photos).
    const times = await Promise.all(
      others.map((url) =>
        until(
          async () => (await recognizedLabel(url, probe)) !== 'eileen' && (await imagesOf(url, 'eileen')).length === 0,
          20_000,
          `${url} forgot eileen`,
        ),
      ),
    );
    const slowest = Date.now() - answered;
    console.info(
      `replicas: the person deleted on C was gone on all others ${slowest} ms after C's deletion answered (each: ${times.join(', ')} ms)`,
    );
    // The goal is a second; a loaded 2-core machine gets room.
    expect(slowest).toBeLessThan(5_000);
    for (const url of others) expect(await recognizedLabel(url, await rescaled('grace', 0.7))).toBe('grace');
    for (const url of replicas.map((r) => r.url))
      expect((await getJson(`${url}/api/deletions`)).body.deleted.map((d: { label: string }) => d.label)).toEqual(['eileen']);
  }, 60_000);

  it('kill -9 of a replica during a training lets another replica train at once', async () => {
    // Enough new photos that a training computes features for a few seconds.
    const captures = await trainingCaptures('lionel');
    for (let i = 0; i < 40; i++) expect((await uploadImage(a, 'lionel', captures[i % captures.length])).status).toBe(200);
    const victim = replicas[0];
    const training = postJson(`${victim.url}/api/train`, {}).catch(() => null);
    await until(
      async () => {
        const { body } = await getJson(`${victim.url}/api/train/status`);
        return body.state === 'running' && body.processed > 0;
      },
      30_000,
      'the training on A is under way',
      10,
    );
    const { body: before } = await getJson(`${victim.url}/api/train/status`);
    expect(before.state).toBe('running');
    victim.child.kill('SIGKILL');
    const killed = Date.now();
    await new Promise((r) => victim.child.once('exit', r));
    await training;
    // Not a 409 and no stale-lock wait: the advisory lock ended with A's connection. B's training starts at once
    // (its status counts images); the whole run takes longer (features of every new photo are computed).
    // PostgreSQL ends A's session (and its lock) once it reads the closed connection: a few ms to a few hundred
    // after the kill, so a 409 in that moment is asked again (the old lock file made it 60 s).
    let answered = false;
    const trainingOnB = (async () => {
      for (;;) {
        const res = await postJson(`${b}/api/train`, {});
        if (res.status !== 409 || Date.now() - killed > 5_000) return res;
        await new Promise((r) => setTimeout(r, 50));
      }
    })().finally(() => (answered = true));
    const startedMs = await until(
      async () => {
        const { body } = await getJson(`${b}/api/train/status`);
        return (body.state === 'running' && body.processed > 0) || answered;
      },
      30_000,
      "B's training started",
      20,
    );
    const trainedOnB = await trainingOnB;
    const ms = Date.now() - killed;
    console.info(
      `replicas: A killed at ${before.processed}/${before.total} of its training; B's training was under way ${startedMs} ms after the kill and answered ${trainedOnB.status} after ${ms} ms`,
    );
    expect(trainedOnB.status, JSON.stringify(trainedOnB.body)).toBe(200);
    expect(trainedOnB.body.labels).toContain('lionel');
    expect(startedMs).toBeLessThan(10_000);
    // The model B trained reaches C (its labels: the version string is another test's matter).
    const labelsOf = async (url: string) => (await getJson(`${url}/api/models/trained`)).body.labels as string[];
    await until(async () => (await labelsOf(c)).includes('lionel'), 20_000, "C offers B's new model (with lionel)");
  }, 120_000);
});

describe('a PostgreSQL restart during traffic', () => {
  let cluster: PostgresCluster;
  let servers: ServerProcess[];
  let urls: string[];

  beforeAll(async () => {
    // A server of this test's own, to stop and start again.
    cluster = await startPostgresCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE lookout');
    await admin.end();
    const url = new URL(cluster.url);
    url.pathname = '/lookout';
    servers = [await startReplica(url.toString())];
    servers.push(...(await Promise.all([startReplica(url.toString()), startReplica(url.toString())])));
    urls = servers.map((r) => r.url);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('gives clear 503s while it is away, the replicas reconnect by themselves, and no acknowledged upload is lost', async () => {
    const [capture] = await trainingCaptures('grace');
    const acknowledged = new Set<string>();
    const refusals = new Map<string, number>();
    const unclear: string[] = [];
    let phase: 'before' | 'away' | 'back' = 'before';
    let stop = false;
    let i = 0;
    // Two clients uploading back to back, round-robin over the replicas.
    const client = async () => {
      while (!stop) {
        const url = urls[i++ % urls.length];
        const form = new FormData();
        form.set('label', 'traffic');
        form.set('file', new Blob([new Uint8Array(capture)]), 'capture.jpg');
        let res: Response;
        try {
          res = await fetch(`${url}/api/images`, { method: 'POST', body: form });
        } catch (err) {
          unclear.push(`${phase}: ${url} did not answer (${String(err)})`);
          continue;
        }
        const body = (await res.json().catch(() => null)) as { filename?: string; error?: { code: string } } | null;
        if (res.status === 200 && body?.filename) acknowledged.add(body.filename);
        else if (res.status === 503 && (body?.error?.code === 'storage_unavailable' || body?.error?.code === 'not_ready')) {
          const key = `${phase} ${body.error.code}`;
          refusals.set(key, (refusals.get(key) ?? 0) + 1);
        } else unclear.push(`${phase}: ${url} answered ${res.status} ${JSON.stringify(body)}`);
        if (res.status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
    };
    // Readiness of each replica, polled through the outage.
    const readiness = urls.map(() => new Set<number>());
    const probe = async () => {
      while (!stop) {
        await Promise.all(
          urls.map(async (url, n) => {
            const res = await fetch(`${url}/api/ready`).catch(() => null);
            if (phase === 'away' && res) readiness[n].add(res.status);
            await res?.arrayBuffer();
          }),
        );
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const traffic = Promise.all([client(), client(), probe()]);
    await until(async () => acknowledged.size >= 6, 30_000, 'uploads before the restart');
    const beforeCount = acknowledged.size;

    phase = 'away';
    const stoppedAt = Date.now();
    await cluster.pause();
    // Longer than the replicas' 5 s check, so each has noticed by itself.
    await new Promise((r) => setTimeout(r, 8_000));
    // None of them stopped while the database was away (a CI run once lost one: server/db/postgres-driver.test.ts).
    expectAllRunning(servers);
    // A read that needs the database is refused the same way (503 storage_unavailable), not a 500.
    const reads = await Promise.all(urls.map((url) => getJson(`${url}/api/sightings?limit=5`)));
    expect(reads.map((r) => `${r.status} ${r.body?.error?.code}`)).toEqual(urls.map(() => '503 storage_unavailable'));
    const duringCount = acknowledged.size - beforeCount;
    await cluster.resume();
    const resumedAt = Date.now();
    phase = 'back';
    expectAllRunning(servers);
    const readyMs = await Promise.all(
      urls.map((url) =>
        until(async () => (await fetch(`${url}/api/ready`).catch(() => null))?.status === 200, 30_000, `${url} ready again`, 100),
      ),
    );
    // Uploads work again on every replica.
    const workingMs = await Promise.all(
      urls.map((url) =>
        until(
          async () => (await uploadImage(url, 'traffic', capture).catch(() => ({ status: 0 }))).status === 200,
          30_000,
          `${url} uploads again`,
          100,
        ),
      ),
    );
    const acknowledgedAgainAt = acknowledged.size;
    await until(async () => acknowledged.size >= acknowledgedAgainAt + 6, 30_000, 'uploads after the restart');
    stop = true;
    await traffic;
    console.info(
      `replicas: PostgreSQL away ${resumedAt - stoppedAt} ms; answers while away: ${JSON.stringify(Object.fromEntries(refusals))}, ${duringCount} acknowledged; ready again after ${readyMs.join(', ')} ms, uploading after ${workingMs.join(', ')} ms; ${acknowledged.size} uploads acknowledged in all`,
    );
    expect(unclear).toEqual([]);
    expect([...refusals.keys()].some((k) => k.startsWith('away'))).toBe(true);
    // Each replica said it was not ready while the database was away (readiness follows the database).
    for (const statuses of readiness) expect(statuses.has(503)).toBe(true);

    // Every acknowledged upload is listed on every replica (its own copy), the ones made on the others included.
    const all = [...acknowledged];
    await Promise.all(
      urls.map((url) =>
        until(
          async () => {
            const listed = new Set(await imagesOf(url, 'traffic'));
            return all.every((f) => listed.has(f));
          },
          20_000,
          `${url} lists every acknowledged upload`,
          200,
        ),
      ),
    );
    for (const url of urls) {
      const listed = new Set(await imagesOf(url, 'traffic'));
      expect(all.filter((f) => !listed.has(f))).toEqual([]);
    }
  }, 180_000);
});
