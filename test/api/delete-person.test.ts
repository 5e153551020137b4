/**
 * Deleting a person everywhere (issue #26 section 4), through a real server: two people enrolled and trained,
 * one deleted. That one is no longer named by either recognizer, without a training (the saved models were
 * rewritten without their templates); the other still is; their sightings, corrections, results, display name
 * and image metadata are gone, and the answer counts what went. Devices learn of it from GET /api/deletions.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBEDDINGS_FILE, TRAINING_FILE } from '../../server/storage/model-store.js';
import { base64, rescaled, trainingCaptures, type Person } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let server: TestServer;

beforeAll(async () => {
  // Sightings are seeded (three of eileen, one of grace): none kept by this test's own recognitions, which store
  // theirs after answering (a count taken before the deletion could miss one).
  server = await startTestServer({ SIGHTINGS_ENABLED: 'false' });
  for (const person of ['grace', 'eileen'] as const) {
    for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
  }
  const trained = await postJson(`${server.url}/api/train`, {});
  expect(trained.status).toBe(200);
  expect(trained.body.recognizers_trained).toEqual(['lbph', 'embedding']);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

async function named(person: Person, recognizer: 'lbph' | 'embedding'): Promise<string | undefined> {
  const image = await rescaled(person, 0.7);
  const { status, body } = await postJson(`${server.url}/api/recognize`, { image: base64(image), recognition_model: recognizer });
  expect(status).toBe(200);
  expect(body.faces).toHaveLength(1);
  return body.faces[0].label;
}

function result(label: string, n: number) {
  return {
    id: `del-${randomUUID()}`,
    kind: 'recognition',
    captured_at: new Date(Date.now() - 60_000 + n).toISOString(),
    engine: 'browser',
    faces: [{ x: 1, y: 2, w: 3, h: 4, label, confidence: 80 }],
  };
}

/** Sightings of a person (the recognitions of this test keep some too, when sightings are on). */
async function sightingsOf(label: string): Promise<number> {
  const sql = 'SELECT count(*)::int AS n FROM sightings WHERE label = $1 OR candidate = $1 OR assigned_label = $1';
  return (await server.service.ctx.db.query<{ n: number }>(sql, [label]))[0].n;
}

/** Rows another part of the service would have stored of a person: sightings, a correction, a name, metadata. */
async function seedRows(label: string, sightings: number): Promise<void> {
  const db = server.service.ctx.db;
  for (let i = 0; i < sightings; i++) {
    const id = `s-${label}-${i}`;
    const crop = `2024-05-01/${id}.jpg`;
    await fs.mkdir(path.join(server.dataDir, 'sightings', '2024-05-01'), { recursive: true });
    await fs.writeFile(path.join(server.dataDir, 'sightings', crop), 'jpeg');
    await db.query(
      `INSERT INTO sightings (id, seen_at, source, label, recognizer, box, crop) VALUES ($1, now(), 'api', $2, 'lbph', '{"x":0,"y":0,"w":1,"h":1}', $3)`,
      [id, i === 0 ? label : null, crop],
    );
    if (i > 0) await db.query('UPDATE sightings SET candidate = $2 WHERE id = $1', [id, label]);
  }
  await db.query(`INSERT INTO corrections (id, label, created_at, recognizer, feature) VALUES ($1, $2, now(), 'lbph', '\\x00')`, [
    `c-${label}`,
    label,
  ]);
  // The upload may have stored these already.
  await db.query('INSERT INTO people (label, display_name) VALUES ($1, $2) ON CONFLICT DO NOTHING', [label, label.toUpperCase()]);
  await db.query(`INSERT INTO image_meta (label, filename, source) VALUES ($1, 'x.jpg', 'upload') ON CONFLICT DO NOTHING`, [label]);
}

describe('DELETE /api/images/{label}: the person everywhere', () => {
  it('forgets eileen at once in both recognizers, grace still named, and says what went', async () => {
    for (const recognizer of ['lbph', 'embedding'] as const) {
      expect(await named('eileen', recognizer)).toBe('eileen');
      expect(await named('grace', recognizer)).toBe('grace');
    }
    await seedRows('eileen', 3);
    await seedRows('grace', 1);
    const sent = await postJson(`${server.url}/api/results`, { results: [result('eileen', 1), result('eileen', 2), result('grace', 3)] });
    expect(sent.body).toMatchObject({ accepted: 3 });
    const lastTraining = (await getJson(`${server.url}/api/train/status`)).body.last.trained_at;
    const sightings = await sightingsOf('eileen');
    expect(sightings).toBe(3);

    const deletedFrom = Date.now();
    const { status, body } = await getJson(`${server.url}/api/images/eileen`, { method: 'DELETE' });
    expect(status).toBe(200);
    // 4 images; 4 templates in each model (one face per capture); sightings, correction, results as seeded.
    expect(body).toEqual({
      status: 'ok',
      label: 'eileen',
      deleted: 4,
      retrain_needed: false,
      removed: { images: 4, templates: 8, sightings, corrections: 1, results: 2 },
    });

    // No training ran: the models were rewritten without eileen, and keep their training time.
    expect((await getJson(`${server.url}/api/train/status`)).body.last.trained_at).toBe(lastTraining);
    const config = await getJson(`${server.url}/api/models/config`);
    for (const recognizer of ['lbph', 'embedding'] as const) {
      expect(config.body.recognizers[recognizer]).toMatchObject({ trained: true, labels: 1 });
      expect(Date.parse(config.body.recognizers[recognizer].trained_at)).toBeLessThan(deletedFrom);
    }
    for (const recognizer of ['lbph', 'embedding'] as const) {
      expect(await named('eileen', recognizer)).toBe('unknown');
      expect(await named('grace', recognizer)).toBe('grace');
    }
    const labels = await getJson(`${server.url}/api/labels`);
    expect(labels.body.labels).toEqual(['grace']);
    expect(JSON.stringify(labels.body)).not.toContain('eileen');
    const downloaded = await getJson(`${server.url}/api/models/trained`);
    expect(JSON.stringify(downloaded.body)).not.toContain('eileen');
    for (const file of [TRAINING_FILE, EMBEDDINGS_FILE]) {
      expect(await fs.readFile(path.join(server.dataDir, 'models', file), 'utf8')).not.toContain('eileen');
    }

    // Rows: eileen's gone, grace's kept; crops removed with their sightings.
    const db = server.service.ctx.db;
    const count = async (sql: string, label: string) => (await db.query<{ n: number }>(sql, [label]))[0].n;
    for (const [label, expected] of [
      ['eileen', 0],
      ['grace', 1],
    ] as const) {
      expect((await sightingsOf(label)) > 0).toBe(expected > 0);
      expect(await count('SELECT count(*)::int AS n FROM corrections WHERE label = $1', label)).toBe(expected);
      expect(await count('SELECT count(*)::int AS n FROM people WHERE label = $1', label)).toBe(expected);
      // One per stored image when the uploads keep their metadata, the seeded one else.
      expect((await count('SELECT count(*)::int AS n FROM image_meta WHERE label = $1', label)) > 0).toBe(expected > 0);
    }
    expect(await fs.readdir(path.join(server.dataDir, 'sightings', '2024-05-01'))).toEqual(['s-grace-0.jpg']);
    const history = await getJson(`${server.url}/api/results?label=eileen`);
    expect(history.body).toMatchObject({ matched: 0, total: 1 });

    // Devices hear of it, and a result captured before the deletion that a device still sends is not stored.
    const deletions = await getJson(`${server.url}/api/deletions`);
    expect(deletions.status).toBe(200);
    expect(deletions.body.deleted).toEqual([{ label: 'eileen', deleted_at: expect.any(String) }]);
    const late = await postJson(`${server.url}/api/results`, { results: [result('eileen', 4)] });
    expect(late.body).toMatchObject({ accepted: 0, duplicates: 1 });
    const since = await getJson(`${server.url}/api/deletions?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(since.body.deleted).toEqual([]);
  }, 120_000);

  it('a second deletion finds nothing: 404', async () => {
    const { status, body } = await getJson(`${server.url}/api/images/eileen`, { method: 'DELETE' });
    expect(status).toBe(404);
    expect(body.error.code).toBe('label_not_found');
  });

  it('deleting the last person leaves no trained model rather than one that knows nobody', async () => {
    const sightings = await sightingsOf('grace');
    const { body } = await getJson(`${server.url}/api/images/grace`, { method: 'DELETE' });
    expect(body.removed).toEqual({ images: 4, templates: 8, sightings, corrections: 1, results: 1 });
    const config = await getJson(`${server.url}/api/models/config`);
    expect(config.body.recognizers.lbph).toMatchObject({ trained: false, labels: 0 });
    expect(config.body.recognizers.embedding).toMatchObject({ trained: false, labels: 0 });
    const { body: recognized } = await postJson(`${server.url}/api/recognize`, { image: base64(await rescaled('grace', 0.7)) });
    expect(recognized.trained).toBe(false);
    expect(await fs.readdir(path.join(server.dataDir, 'models'))).not.toContain(TRAINING_FILE);
  });

  it('answers 409 while a training holds the lock, and removes nothing', async () => {
    expect((await uploadImage(server.url, 'lionel', (await trainingCaptures('lionel'))[0])).status).toBe(200);
    const lock = await server.service.ctx.models.trainingLock.acquire();
    try {
      const { status, body } = await getJson(`${server.url}/api/images/lionel`, { method: 'DELETE' });
      expect(status).toBe(409);
      expect(body.error.code).toBe('training_in_progress');
    } finally {
      await lock.release();
    }
    expect((await getJson(`${server.url}/api/images/lionel`)).body.count).toBe(1);
  });
});
