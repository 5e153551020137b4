/**
 * Enrollment checks beyond uploads (issue #26 §3), over real HTTP:
 * - faces assigned from the review (POST /api/review/assign) get the photo check an upload gets: answered per face,
 *   kept with the image (GET /api/images/{label}) and counted in the person's summary; the images are added whatever
 *   the verdict, as uploads are;
 * - the check uses the active detection engine: the project's own KServe model server (FaceBoxes) on 127.0.0.1 when
 *   `remote` is selected, the local cascade otherwise, and says which; with the remote server gone it checks with
 *   the local cascade and says why, still a 200.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { CROP_MARGIN, CROP_MAX_SIDE } from '../../server/sightings/sighting-recorder.js';
import { base64, photo } from '../helpers/faces.js';
import { getJson, postJson, readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';

type Box = { x: number; y: number; w: number; h: number };

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A face's crop as the sighting recorder keeps it: the box widened by CROP_MARGIN, at most CROP_MAX_SIDE a side. */
async function sightingCrop(bytes: Buffer, box: Box): Promise<Buffer> {
  const { width, height } = await sharp(bytes).metadata();
  const left = Math.max(0, Math.floor(box.x - box.w * CROP_MARGIN));
  const top = Math.max(0, Math.floor(box.y - box.h * CROP_MARGIN));
  const right = Math.min(width!, Math.ceil(box.x + box.w * (1 + CROP_MARGIN)));
  const bottom = Math.min(height!, Math.ceil(box.y + box.h * (1 + CROP_MARGIN)));
  return sharp(bytes)
    .extract({ left, top, width: right - left, height: bottom - top })
    .resize({ width: CROP_MAX_SIDE, height: CROP_MAX_SIDE, fit: 'inside' })
    .jpeg({ quality: 90 })
    .toBuffer();
}

let seq = 0;
/** A sighting as the sighting store keeps it: a row in the server's database, its crop in DATA_DIR/sightings/<day>/. */
async function addSighting(server: TestServer, crop: Buffer): Promise<string> {
  const id = `ec-${String(seq++).padStart(4, '0')}`;
  const at = new Date(Date.now() - 60_000);
  const rel = `${at.toISOString().slice(0, 10)}/${id}.jpg`;
  const file = path.join(server.dataDir, 'sightings', rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, crop);
  await server.service.ctx.db.query(
    `INSERT INTO sightings (id, seen_at, source, recognizer, box, crop, crop_bytes)
     VALUES ($1, $2, 'camera', 'lbph', $3, $4, $5)`,
    [id, at, JSON.stringify({ x: 0, y: 0, w: 80, h: 80 }), rel, crop.length],
  );
  return id;
}

describe('faces assigned from the review are checked like uploads', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers each face its check, keeps it with the image and counts it in the summary', async () => {
    const grace = await photo('grace');
    const found = await postJson(`${server.url}/api/images/check`, { image: base64(grace) });
    expect(found.body.check.verdict).toBe('ok');
    const good = await sightingCrop(grace, found.body.check.face);
    const blurred = await sharp(good).blur(3).jpeg({ quality: 90 }).toBuffer();
    const brick = await sharp(await readTestImage('negatives/brick.png'))
      .resize({ width: CROP_MAX_SIDE, height: CROP_MAX_SIDE, fit: 'inside' })
      .jpeg({ quality: 90 })
      .toBuffer();
    // Each crop's verdict as an upload of the same bytes gets it.
    const expected: string[] = [];
    for (const bytes of [good, blurred, brick]) {
      expected.push((await postJson(`${server.url}/api/images/check`, { image: base64(bytes) })).body.check.verdict);
    }
    expect(expected[0]).toBe('ok');
    expect(expected[1]).not.toBe('ok');
    expect(expected[2]).toBe('no_face');

    const ids = [await addSighting(server, good), await addSighting(server, blurred), await addSighting(server, brick)];
    const assign = await postJson(`${server.url}/api/review/assign`, { sighting_ids: ids, display_name: 'Grace Hopper' });
    expect(assign.status).toBe(200);
    expect(assign.body.added).toHaveLength(3);
    const checks = assign.body.checks as { sighting_id: string; filename: string; check: { verdict: string; message: string } }[];
    expect(checks.map((c) => c.sighting_id)).toEqual(ids);
    expect(checks.map((c) => c.filename)).toEqual(assign.body.added);
    expect(checks.map((c) => c.check.verdict)).toEqual(expected);
    expect(checks[2].check.message).toMatch(/no face/i);
    expect(checks[0].check).toMatchObject({ detection_method: 'local' });

    // Kept with the images, as an upload's check is, and counted in the person's summary.
    const listed = (await getJson(`${server.url}/api/images/grace-hopper`)).body;
    const byFile = new Map(listed.files.map((f: { filename: string; check: { verdict: string } | null }) => [f.filename, f]));
    for (const c of checks) expect(byFile.get(c.filename)).toMatchObject({ source: 'sighting', check: { verdict: c.check.verdict } });
    expect(listed.enrollment).toMatchObject({ photos: 3, good: 1, problems: 2, unchecked: 0, enough: false });
    const labels = (await getJson(`${server.url}/api/labels`)).body;
    expect(labels.details.find((d: { label: string }) => d.label === 'grace-hopper').enrollment).toMatchObject({ good: 1, problems: 2 });

    // An undo takes the images and their checks away.
    expect((await postJson(`${server.url}/api/review/actions/${assign.body.action_id}/undo`, {})).status).toBe(200);
    expect((await getJson(`${server.url}/api/images/grace-hopper`)).body).toMatchObject({ images: [], count: 0 });
  });
});

describe('the photo check uses the active detection engine', () => {
  let modelServer: RunningModelServer;
  let server: TestServer;

  beforeAll(async () => {
    modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
    await waitFor(async () => (await fetch(`${modelServer.url}/v2/health/ready`)).status === 200, 'model server ready');
    server = await startTestServer({
      REMOTE_DETECTOR_URL: modelServer.url,
      REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200',
      // FaceBoxes runs in this test's process: on a loaded machine a call may pass the default 5 s, and the check
      // would (rightly) fall back to local; here each call must reach it.
      REMOTE_DETECTOR_TIMEOUT_MS: '60000',
      EMBEDDING_ENABLED: 'false',
      OBJECT_DETECTION_ENABLED: 'false',
      CHAT_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    await server?.close();
    await modelServer?.close();
  });

  const check = async (bytes: Uint8Array) => {
    const res = await postJson(`${server.url}/api/images/check`, { image: base64(bytes) });
    expect(res.status).toBe(200);
    return res.body;
  };
  const select = async (method: string) => {
    const res = await fetch(`${server.url}/api/models/detection`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method }),
    });
    expect(res.status).toBe(200);
  };

  it('checks with the local cascade while local is selected, and says so', async () => {
    const local = await check(await readTestImage('faces/sample4.jpg'));
    expect(local.check).toMatchObject({ detection_method: 'local', verdict: 'several_faces' });
    expect(local.check.detection_note).toBeUndefined();
  });

  it('checks with the remote model server when remote is selected: its boxes, as recognize finds them', async () => {
    const sample4 = await readTestImage('faces/sample4.jpg');
    const local = await check(sample4);
    await select('remote');
    const remote = await check(sample4);
    expect([remote.check.detection_method, remote.check.detection_note]).toEqual(['remote', undefined]);
    // The faces are the remote engine's: the boxes recognize (on remote) gives, not the cascade's.
    const recognized = await postJson(`${server.url}/api/recognize`, { image: base64(sample4) });
    expect(recognized.body.detection_method).toBe('remote');
    const boxesOf = (faces: Box[]) => faces.map(({ x, y, w, h }) => JSON.stringify({ x, y, w, h })).sort((a, b) => a.localeCompare(b));
    expect(boxesOf(remote.faces)).toEqual(boxesOf(recognized.body.faces));
    expect(boxesOf(remote.faces)).not.toEqual(boxesOf(local.faces));
    expect(remote.check.faces).toBe(remote.faces.length);
    // A good photo stays good by the remote detector's face.
    expect((await check(await photo('grace'))).check).toMatchObject({ detection_method: 'remote', verdict: 'ok' });

    // An upload picking one of the remote detector's faces: stored as that face, which remote detection finds
    // again as the largest in the stored image (training takes the largest).
    const pick = remote.faces[0] as Box;
    const form = new FormData();
    form.set('label', 'picked');
    form.set('face', JSON.stringify(pick));
    form.set('file', new Blob([sample4]), 'sample4.jpg');
    const upload = await getJson(`${server.url}/api/images`, { method: 'POST', body: form });
    expect([upload.status, upload.body.error?.message]).toEqual([200, undefined]);
    expect(upload.body.check).toMatchObject({ detection_method: 'remote', picked: true, face: pick });
    const stored = Buffer.from(await (await fetch(`${server.url}/api/images/picked/${upload.body.filename}`)).arrayBuffer());
    const again = await check(stored);
    expect([again.check.detection_method, again.check.detection_note]).toEqual(['remote', undefined]);
    expect(again.check.face.w).toBeGreaterThan(pick.w * 0.7);
    expect(again.check.face.w).toBeLessThan(pick.w * 1.3);
  });

  it('falls back to the local cascade with a note when the remote server is down, still a 200', async () => {
    await modelServer.close();
    // Whether the background check has noticed yet or the call itself fails, the check answers with local.
    const grace = await photo('grace');
    const first = await check(grace);
    expect(first.check).toMatchObject({ detection_method: 'local', verdict: 'ok' });
    expect(first.check.detection_note).toMatch(/remote detection .*local detector/);
    await waitFor(async () => (await getJson(`${server.url}/api/ready`)).body.remote_status !== 'connected', 'remote down');
    const later = await check(grace);
    expect(later.check).toMatchObject({ detection_method: 'local', verdict: 'ok' });
    expect(later.check.detection_note).toMatch(/^remote detection is selected but unavailable/);
  });
});
