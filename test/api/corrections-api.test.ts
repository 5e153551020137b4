/**
 * Corrections ("not this person", issue #26) over real HTTP, for both recognizers, on both databases: a stranger's
 * face that the recognizer names as an enrolled person (under a lenient rule) is corrected through its sighting; from
 * then on the same stranger in other captures is `unknown` with the reason `corrected` and never verifies as that
 * person, while another photo of the person is still named; deleting the correction gives the name back.
 *
 * The sighting is written as the sightings store keeps one (a row, and a JPEG crop of the face widened by 40% on each
 * side, at most 160 px, in DATA_DIR/sightings/<day>/<id>.jpg), so this test does not depend on what is recorded when.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

// #35: the lenient limits that name a stranger lie past the calibrated bounds: THRESHOLD_BOUNDS=off.
const LIGHT = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false', THRESHOLD_BOUNDS: 'off' };
const RECOGNIZERS = ['lbph', 'embedding'] as const;
type Recognizer = (typeof RECOGNIZERS)[number];
/** Lenient enough that the stranger (astronaut Eileen Collins) is named as Grace Hopper by both recognizers. */
// Lenient enough that the stranger is named: no per-person limit or cohort margin (#34) either.
const LENIENT = { lbph: { max: 300, verify_max: 300 }, embedding: { max: 0.9, verify_max: 0.9, cohort_ratio: 1.5, ratio_max: 1 } };

const send = (url: string, method: string, body?: unknown) =>
  getJson(url, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });

interface Face {
  x: number;
  y: number;
  w: number;
  h: number;
  label: string;
  reason?: string;
  candidate?: { label: string };
}

/** A sighting of `face` in `image`, stored as the sightings store keeps one; its id. */
async function storeSighting(server: TestServer, image: Uint8Array, face: Face, recognizer: Recognizer): Promise<string> {
  const meta = await sharp(image).metadata();
  const margin = 0.4;
  const left = Math.max(0, Math.round(face.x - face.w * margin));
  const top = Math.max(0, Math.round(face.y - face.h * margin));
  const width = Math.min(meta.width! - left, Math.round(face.w * (1 + 2 * margin)));
  const height = Math.min(meta.height! - top, Math.round(face.h * (1 + 2 * margin)));
  const crop = await sharp(image)
    .extract({ left, top, width, height })
    .resize(160, 160, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 85 })
    .toBuffer();
  const id = randomUUID();
  const day = new Date().toISOString().slice(0, 10);
  await fs.mkdir(path.join(server.dataDir, 'sightings', day), { recursive: true });
  await fs.writeFile(path.join(server.dataDir, 'sightings', day, `${id}.jpg`), crop);
  await server.service.ctx.db.query(
    `INSERT INTO sightings (id, seen_at, source, label, recognizer, box, crop, crop_bytes) VALUES ($1, now(), 'api', $2, $3, $4::jsonb, $5, $6)`,
    [id, face.label, recognizer, JSON.stringify({ x: face.x, y: face.y, w: face.w, h: face.h }), `${day}/${id}.jpg`, crop.length],
  );
  return id;
}

describe.each(['embedded', 'postgresql'] as const)('corrections (%s database)', (database) => {
  let server: TestServer;
  const recognize = async (bytes: Uint8Array, recognizer: Recognizer): Promise<Face[]> => {
    const { status, body } = await postJson(`${server.url}/api/recognize`, { image: base64(bytes), recognition_model: recognizer });
    expect(status).toBe(200);
    return body.faces;
  };
  const verify = async (bytes: Uint8Array, recognizer: Recognizer) => {
    const { status, body } = await postJson(`${server.url}/api/verify`, {
      label: 'grace',
      image: base64(bytes),
      recognition_model: recognizer,
    });
    expect(status).toBe(200);
    return body;
  };

  const sighting = (image: Uint8Array, face: Face, recognizer: Recognizer) => storeSighting(server, image, face, recognizer);

  let stranger: Buffer;
  let strangerAgain: Buffer[];
  let graceAgain: Buffer;

  beforeAll(async () => {
    const env: Record<string, string> = { ...LIGHT, ...(database === 'postgresql' ? { DATABASE_URL: await freshPostgresDatabase() } : {}) };
    server = await startTestServer(env);
    for (const capture of await trainingCaptures('grace')) expect((await uploadImage(server.url, 'grace', capture)).status).toBe(200);
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.status).toBe(200);
    expect(trained.body.recognizers_trained).toEqual(['lbph', 'embedding']);
    for (const recognizer of RECOGNIZERS) {
      expect((await send(`${server.url}/api/models/thresholds`, 'PUT', { recognizer, ...LENIENT[recognizer] })).status).toBe(200);
    }
    stranger = await photo('eileen');
    const original = await photo('eileen');
    // The same stranger in other captures: smaller, and brighter.
    strangerAgain = [await rescaled('eileen', 0.8), await sharp(original).modulate({ brightness: 1.1 }).jpeg({ quality: 90 }).toBuffer()];
    graceAgain = await rescaled('grace', 0.8);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  for (const recognizer of RECOGNIZERS) {
    it(`${recognizer}: the stranger named grace before, unknown (corrected) after, grace still grace; deleting it names again`, async () => {
      // Before: the lenient rule names the stranger as grace, in every capture, and verifies them as grace.
      const [before] = await recognize(stranger, recognizer);
      expect(before).toMatchObject({ label: 'grace' });
      for (const again of strangerAgain) {
        const [face] = await recognize(again, recognizer);
        expect(face, JSON.stringify(face)).toMatchObject({ label: 'grace' });
      }
      expect(await verify(strangerAgain[0], recognizer)).toMatchObject({ match: true });

      const sightingId = await sighting(stranger, before, recognizer);
      const made = await postJson(`${server.url}/api/corrections`, { sighting_id: sightingId });
      expect(made.status).toBe(200);
      expect(made.body).toMatchObject({ label: 'grace', sighting_id: sightingId, created: true });
      expect(made.body.recognizers).toEqual(['lbph', 'embedding']);

      // After: the same stranger in other captures is not given the name again, and does not verify as grace ...
      for (const again of strangerAgain) {
        const [face] = await recognize(again, recognizer);
        expect(face).toMatchObject({ label: 'unknown', reason: 'corrected', candidate: { label: 'grace' } });
      }
      expect(await verify(strangerAgain[0], recognizer)).toMatchObject({ match: false, reason: 'corrected' });
      // ... while another photo of grace is still grace, and verifies.
      expect((await recognize(graceAgain, recognizer))[0]).toMatchObject({ label: 'grace' });
      expect(await verify(graceAgain, recognizer)).toMatchObject({ match: true, reason: 'match' });

      // Listed, with its review action (kind `correct`, for undo); the same correction again is the same one.
      const listed = await getJson(`${server.url}/api/corrections?label=Grace`);
      expect(listed.status).toBe(200);
      expect(listed.body.corrections).toEqual([
        expect.objectContaining({ id: made.body.id, label: 'grace', sighting_id: sightingId, action_id: made.body.action_id }),
      ]);
      const action = await server.service.ctx.db.query<{ kind: string; label: string; sighting_ids: string[] }>(
        'SELECT kind, label, sighting_ids FROM review_actions WHERE id = $1',
        [made.body.action_id],
      );
      expect(action).toEqual([{ kind: 'correct', label: 'grace', sighting_ids: [sightingId] }]);
      const again = await postJson(`${server.url}/api/corrections`, { sighting_id: sightingId, label: 'grace' });
      expect(again.body).toMatchObject({ id: made.body.id, created: false });

      // Deleted: named again.
      const deleted = await send(`${server.url}/api/corrections/${made.body.id}`, 'DELETE');
      expect(deleted).toEqual({ status: 200, body: { deleted: made.body.id, label: 'grace' } });
      expect((await recognize(strangerAgain[0], recognizer))[0]).toMatchObject({ label: 'grace' });
      expect((await send(`${server.url}/api/corrections/${made.body.id}`, 'DELETE')).status).toBe(404);
      expect((await getJson(`${server.url}/api/corrections`)).body).toEqual({ corrections: [], total: 0 });
    });
  }

  it('answers clear errors: no such sighting, nobody enrolled under the label, a sighting that was not named', async () => {
    const missing = await postJson(`${server.url}/api/corrections`, { sighting_id: 'no-such-sighting' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');

    const [face] = await recognize(stranger, 'lbph');
    const named = await sighting(stranger, face, 'lbph');
    const nobody = await postJson(`${server.url}/api/corrections`, { sighting_id: named, label: 'nobody-here' });
    expect(nobody.status).toBe(404);
    expect(nobody.body.error.code).toBe('label_not_found');

    const unnamed = await sighting(stranger, { ...face, label: 'unknown' }, 'lbph');
    const noLabel = await postJson(`${server.url}/api/corrections`, { sighting_id: unnamed });
    expect(noLabel.status).toBe(400);
    expect(noLabel.body.error).toMatchObject({ code: 'invalid_label', message: expect.stringContaining('was not given a name') });

    const bad = await postJson(`${server.url}/api/corrections`, { sighting_id: '../etc' });
    expect(bad.status).toBe(400);
    expect((await send(`${server.url}/api/corrections/x.y`, 'DELETE')).status).toBe(400);
  });
});

describe('corrections reach another API replica (one DATA_DIR, one PostgreSQL database)', () => {
  let dataDir: string;
  let one: TestServer;
  let two: TestServer;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-corrections-replicas-'));
    const env = { ...LIGHT, DATABASE_URL: await freshPostgresDatabase() };
    one = await startTestServer(env, dataDir);
    two = await startTestServer(env, dataDir);
  }, 180_000);
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('a correction made on one replica is applied by the other within seconds, and so is its removal', async () => {
    for (const capture of await trainingCaptures('grace')) expect((await uploadImage(one.url, 'grace', capture)).status).toBe(200);
    expect((await postJson(`${one.url}/api/train`, {})).status).toBe(200);
    expect((await send(`${one.url}/api/models/thresholds`, 'PUT', { recognizer: 'lbph', ...LENIENT.lbph })).status).toBe(200);
    const stranger = await photo('eileen');
    const again = await rescaled('eileen', 0.8);
    const labelOn = async (server: TestServer) =>
      (await postJson(`${server.url}/api/recognize`, { image: base64(again), recognition_model: 'lbph' })).body.faces[0];
    // The other replica follows the training and the rule (its model and runtime watches).
    await expect.poll(async () => (await labelOn(two)).label, { timeout: 10_000, interval: 200 }).toBe('grace');

    const [face] = (await postJson(`${one.url}/api/recognize`, { image: base64(stranger), recognition_model: 'lbph' })).body.faces;
    const id = await storeSighting(one, stranger, face, 'lbph');
    const made = await postJson(`${two.url}/api/corrections`, { sighting_id: id });
    expect(made.status).toBe(200);
    expect(await labelOn(two)).toMatchObject({ label: 'unknown', reason: 'corrected' });
    await expect.poll(async () => (await labelOn(one)).reason, { timeout: 10_000, interval: 200 }).toBe('corrected');

    expect((await send(`${one.url}/api/corrections/${made.body.id}`, 'DELETE')).status).toBe(200);
    expect((await labelOn(one)).label).toBe('grace');
    await expect.poll(async () => (await labelOn(two)).label, { timeout: 10_000, interval: 200 }).toBe('grace');
  });
});
