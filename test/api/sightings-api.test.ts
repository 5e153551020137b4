/**
 * Sightings through the API (#26): a recognition keeps a sighting with a crop of the face, the settings decide what
 * is kept (SIGHTINGS_ENABLED, SIGHTINGS_SOURCES, SIGHTINGS_INTERVAL_S for camera tracks), the purge removes old rows
 * and their crop files, and the list filters, pages and deletes.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

/** Noon yesterday (UTC): the filter tests' sightings, within the retention. */
const BASE = (Math.floor(Date.now() / 86_400_000) - 1) * 86_400_000 + 12 * 3_600_000;
const at = (minutes: number) => new Date(BASE + minutes * 60_000).toISOString();
const WINDOW = `&from=${at(-60)}&to=${at(60)}`;

/** Waits until the sightings handed over so far are stored (they are kept after the answer). */
const settled = (s: TestServer) => s.service.ctx.sightingRecorder.idle();

async function list(s: TestServer, query = ''): Promise<{ sightings: any[]; next_cursor: string | null; total_matched: number }> {
  await settled(s);
  const res = await getJson(`${s.url}/api/sightings${query}`);
  expect(res.status).toBe(200);
  return res.body;
}

async function recognize(s: TestServer, image: Buffer, extra: Record<string, unknown> = {}) {
  const res = await postJson(`${s.url}/api/recognize`, { image: base64(image), ...extra });
  expect(res.status).toBe(200);
  return res.body;
}

/** A browser's recognition result whose one face carries a crop. */
async function browserResult(capturedAt: Date, label: string, crop: Buffer) {
  return {
    id: randomUUID(),
    kind: 'recognition',
    captured_at: capturedAt.toISOString(),
    source: 'kiosk-1',
    engine: 'browser',
    recognition_model: 'embedding',
    model_version: 'v-kiosk-1',
    faces: [
      {
        x: 10,
        y: 20,
        w: 60,
        h: 60,
        label,
        confidence: label === 'unknown' ? 0 : 80,
        distance: 0.3,
        ...(label === 'unknown' ? { reason: 'no_match' } : { certainty: 'high' }),
        crop: crop.toString('base64'),
      },
    ],
  };
}

describe('sightings with the defaults (an interval of 5 s for camera tracks)', () => {
  let server: TestServer;
  let grace: Buffer;
  let faceCrop: Buffer;
  beforeAll(async () => {
    server = await startTestServer({ SIGHTINGS_INTERVAL_S: '5', SIGHTINGS_RETENTION_DAYS: '30' });
    grace = await photo('grace');
    faceCrop = await sharp(grace).resize(120).jpeg({ quality: 80 }).toBuffer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('keeps a sighting of a recognised face with a JPEG crop of that face', async () => {
    const answer = await recognize(server, grace);
    expect(answer.faces).toHaveLength(1);
    const page = await list(server, '?source=api');
    expect(page.total_matched).toBe(1);
    const [s] = page.sightings;
    const face = answer.faces[0];
    expect(s).toMatchObject({
      source: 'api',
      client: null,
      camera: null,
      label: null,
      reason: face.reason,
      recognizer: answer.recognition_model,
      box: { x: face.x, y: face.y, w: face.w, h: face.h },
      dismissed: false,
      crop_url: `/api/sightings/${s.id}/crop`,
    });
    expect(Date.now() - Date.parse(s.seen_at)).toBeLessThan(60_000);
    expect((await getJson(`${server.url}/api/sightings/${s.id}`)).body).toEqual(s);
    // The embedding worker runs: the face's descriptor is kept for grouping by likeness.
    expect(server.service.ctx.faces.embeddingAvailability.available).toBe(true);
    const groupable = await server.service.ctx.sightings.unknownWithDescriptors();
    expect(groupable.find((g) => g.id === s.id)?.descriptor?.length).toBeGreaterThanOrEqual(128);

    const res = await fetch(`${server.url}${s.crop_url}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const crop = Buffer.from(await res.arrayBuffer());
    const meta = await sharp(crop).metadata();
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(160);
    // The face box widened by 40% each side: the same pixels as that region of the photo.
    const { width, height } = await sharp(grace).metadata();
    const left = Math.max(0, Math.floor(face.x - face.w * 0.4));
    const top = Math.max(0, Math.floor(face.y - face.h * 0.4));
    const region = {
      left,
      top,
      width: Math.min(width!, Math.ceil(face.x + face.w * 1.4)) - left,
      height: Math.min(height!, Math.ceil(face.y + face.h * 1.4)) - top,
    };
    const expected = await sharp(grace).extract(region).resize(meta.width, meta.height, { fit: 'fill' }).raw().toBuffer();
    const got = await sharp(crop).raw().toBuffer();
    let diff = 0;
    for (let i = 0; i < got.length; i++) diff += Math.abs(got[i] - expected[i]);
    expect(diff / got.length).toBeLessThan(8);
    // And a detector finds the face in it.
    const again = await recognize(server, crop, { source: 'page' });
    expect(again.faces).toHaveLength(1);
    expect((await list(server, '?source=page')).total_matched).toBe(1);
  });

  it('keeps the face of a verification (source verify)', async () => {
    const res = await postJson(`${server.url}/api/verify`, { label: 'grace', image: base64(grace) });
    expect(res.status).toBe(200);
    const page = await list(server, '?source=verify');
    expect(page.sightings).toHaveLength(1);
    expect(page.sightings[0]).toMatchObject({ label: null, candidate: 'grace', reason: res.body.reason, box: res.body.face });
  });

  it('keeps one sighting per face track per interval for camera frames', async () => {
    const frame = { source: 'camera', camera: 'door' };
    // Sent together, answered within the interval (5 s) even on a busy machine.
    await Promise.all([1, 2, 3, 4].map(() => recognize(server, grace, frame)));
    expect((await list(server, '?source=camera')).total_matched).toBe(1);
    // Another camera is another track.
    await recognize(server, grace, { source: 'camera', camera: 'gate' });
    expect((await list(server, '?source=camera')).total_matched).toBe(2);
    // After the interval, the same track keeps one more.
    await new Promise((r) => setTimeout(r, 5100));
    await Promise.all([recognize(server, grace, frame), recognize(server, grace, frame)]);
    const page = await list(server, '?source=camera');
    expect(page.total_matched).toBe(3);
    expect(page.sightings.map((s) => s.camera).sort()).toEqual(['door', 'door', 'gate']);
  });

  it("keeps a browser result's face crops (source browser), never in the stored result, and refuses a crop that is not a JPEG", async () => {
    const record = await browserResult(new Date(), 'ada', faceCrop);
    const res = await postJson(`${server.url}/api/results`, { results: [record] });
    expect(res.status).toBe(200);
    // Sent again: no second sighting.
    await postJson(`${server.url}/api/results`, { results: [record] });
    const page = await list(server, '?source=browser');
    expect(page.sightings).toHaveLength(1);
    expect(page.sightings[0]).toMatchObject({
      id: `${record.id}-0`,
      label: 'ada',
      camera: 'kiosk-1',
      recognizer: 'embedding',
      model_version: 'v-kiosk-1',
    });
    const crop = await fetch(`${server.url}${page.sightings[0].crop_url}`);
    expect((await sharp(Buffer.from(await crop.arrayBuffer())).metadata()).format).toBe('jpeg');
    const stored = await getJson(`${server.url}/api/results?limit=1`);
    expect(stored.body.results[0].faces[0].crop).toBeUndefined();

    const png = await sharp(grace).resize(40).png().toBuffer();
    const bad = await postJson(`${server.url}/api/results`, { results: [await browserResult(new Date(), 'ada', png)] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/crop.*JPEG/);
  });

  it('filters by person, unknown, time and source, and pages with a cursor', async () => {
    const records = [];
    for (let i = 0; i < 5; i++) records.push(await browserResult(new Date(at(i)), i % 2 ? 'bob' : 'unknown', faceCrop));
    expect((await postJson(`${server.url}/api/results`, { results: records })).status).toBe(200);
    const window = WINDOW;
    expect((await list(server, `?label=bob${window}`)).sightings.map((s) => s.seen_at)).toEqual([at(3), at(1)]);
    expect((await list(server, `?unknown=true${window}`)).total_matched).toBe(3);
    expect((await list(server, `?from=${at(2)}&to=${at(4)}`)).total_matched).toBe(2);

    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const page = await list(server, `?limit=2${window}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.total_matched).toBe(5);
      seen.push(...page.sightings.map((s) => s.seen_at));
      cursor = page.next_cursor;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...seen].sort().reverse());
    expect(new Set(seen).size).toBe(5);

    for (const query of ['?limit=201', '?unknown=yes', '?from=yesterday', '?source=fax', '?cursor=nonsense']) {
      expect((await getJson(`${server.url}/api/sightings${query}`)).status).toBe(400);
    }
  });

  it('deletes one sighting with its crop, and those before a time', async () => {
    const [s] = (await list(server, '?source=verify')).sightings;
    const file = path.join(server.dataDir, 'sightings', s.seen_at.slice(0, 10), `${s.id}.jpg`);
    expect(await exists(file)).toBe(true);
    const res = await fetch(`${server.url}/api/sightings/${s.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', id: s.id, deleted: 1 });
    expect(await exists(file)).toBe(false);
    expect((await getJson(`${server.url}/api/sightings/${s.id}`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/sightings/${s.id}/crop`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/sightings/${s.id}`, { method: 'DELETE' })).status).toBe(404);

    // Before 12:02:30 yesterday: the three filter sightings of 12:00 to 12:02 (everything else is newer).
    const purge = await getJson(`${server.url}/api/sightings?before=${at(2.5)}`, { method: 'DELETE' });
    expect(purge.body).toEqual({ status: 'ok', deleted: 3 });
    expect((await list(server, `?include_dismissed=true${WINDOW}`)).total_matched).toBe(2);
    expect((await getJson(`${server.url}/api/sightings`, { method: 'DELETE' })).status).toBe(400);
  });

  it('purges sightings past SIGHTINGS_RETENTION_DAYS with their crop files', async () => {
    const old = await browserResult(new Date(Date.now() - 40 * 86_400_000), 'carol', faceCrop);
    await postJson(`${server.url}/api/results`, { results: [old] });
    const [s] = (await list(server, '?label=carol')).sightings;
    const file = path.join(server.dataDir, 'sightings', s.seen_at.slice(0, 10), `${s.id}.jpg`);
    expect(await exists(file)).toBe(true);
    const before = (await list(server)).total_matched;
    // What the hourly timer runs.
    expect(await server.service.ctx.sightingRecorder.purgeNow()).toBe(1);
    expect((await list(server, '?label=carol')).total_matched).toBe(0);
    expect((await list(server)).total_matched).toBe(before - 1);
    expect(await exists(file)).toBe(false);
  });
});

describe('camera face tracks by descriptor (the embedding worker runs)', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Nobody trained: every face is unknown, so only the tracks decide what is kept. An interval no test outlasts.
    server = await startTestServer({ SIGHTINGS_INTERVAL_S: '600' });
    const deadline = Date.now() + 120_000;
    while (!server.service.ctx.faces.embeddingAvailability.available) {
      if (Date.now() > deadline) throw new Error('the embedding worker did not load within 2 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  type Box = { x: number; y: number; w: number; h: number };
  const FACE_SIDE = 140;
  /** A person's photo scaled so that their face is about FACE_SIDE wide, and where the face is in it. */
  async function portrait(person: 'grace' | 'eileen'): Promise<{ image: Buffer; face: Box }> {
    const [found] = (await recognize(server, await photo(person))).faces as Box[];
    const image = await sharp(await photo(person))
      .resize({ width: Math.round((512 * FACE_SIDE) / found.w) })
      .png()
      .toBuffer();
    const [face] = (await recognize(server, image)).faces as Box[];
    return { image, face };
  }
  /** A 1400 x 900 camera frame with the portrait placed so that its face's top left corner is at (x, y). */
  async function frameWith(p: { image: Buffer; face: Box }, x: number, y: number): Promise<Box> {
    const frame = await sharp({ create: { width: 1400, height: 900, channels: 3, background: { r: 90, g: 90, b: 90 } } })
      .composite([{ input: p.image, left: x - p.face.x, top: y - p.face.y }])
      .jpeg({ quality: 92 })
      .toBuffer();
    const answer = await recognize(server, frame, { source: 'camera', camera: 'hall' });
    expect(answer.faces.map((f: { label: string }) => f.label)).toEqual(['unknown']);
    // One frame at a time, as a live page sends them: each decided before the next.
    await settled(server);
    return answer.faces[0];
  }
  const iou = (a: Box, b: Box) => {
    const w = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x));
    const h = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));
    return (w * h) / (a.w * a.h + b.w * b.h - w * h);
  };

  it('keeps one sighting of a stranger who moves farther than the overlap gate, and a second stranger where the first stood is another', async () => {
    const [grace, eileen] = [await portrait('grace'), await portrait('eileen')];
    const kept = async () => (await list(server, '?source=camera')).total_matched;
    const left = await frameWith(grace, 250, 300);
    expect(await kept()).toBe(1);
    // Across the room between two frames: no overlap with where she was, still her track.
    const right = await frameWith(grace, 1000, 300);
    expect(iou(left, right)).toBe(0);
    expect(await kept()).toBe(1);
    // Someone else where she stood a frame ago (the boxes overlap past the gate): a new track, kept.
    const other = await frameWith(eileen, 1000, 300);
    expect(iou(right, other)).toBeGreaterThanOrEqual(0.3);
    expect(await kept()).toBe(2);
    // She comes back to the left: her own track still, nothing new within the interval.
    await frameWith(grace, 250, 300);
    expect(await kept()).toBe(2);
    const { sightings } = await list(server, '?source=camera');
    expect(sightings.map((s) => s.box.x < 700)).toEqual([false, true]);
  });
});

describe('what is not kept', () => {
  it('keeps nothing with SIGHTINGS_ENABLED=false', async () => {
    const server = await startTestServer({ SIGHTINGS_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
    try {
      const grace = await photo('grace');
      expect((await recognize(server, grace)).faces).toHaveLength(1);
      await recognize(server, grace, { source: 'camera', camera: 'door' });
      expect((await list(server)).total_matched).toBe(0);
      expect(await exists(path.join(server.dataDir, 'sightings'))).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('keeps nothing from a source not in SIGHTINGS_SOURCES', async () => {
    const server = await startTestServer({ SIGHTINGS_SOURCES: 'page', EMBEDDING_ENABLED: 'false' });
    try {
      const grace = await photo('grace');
      await recognize(server, grace);
      await recognize(server, grace, { source: 'camera' });
      expect((await postJson(`${server.url}/api/verify`, { label: 'grace', image: base64(grace) })).status).toBe(200);
      expect((await list(server)).total_matched).toBe(0);
      await recognize(server, grace, { source: 'page' });
      const page = await list(server);
      expect(page.sightings.map((s) => s.source)).toEqual(['page']);
    } finally {
      await server.close();
    }
  });
});
