/**
 * Enrollment checks through the API (issue #26 §3), on the embedded database and on PostgreSQL: each verdict from a
 * real photo, the check before saving (nothing stored), original file names and display names kept and listed, a
 * face picked among several stored (and trained) as that face, bad picks refused with nothing stored, and uploads
 * still idempotent with capture_id.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { getJson, postJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

type Box = { x: number; y: number; w: number; h: number };

async function uploadWith(
  base: string,
  parts: Record<string, string>,
  file: { bytes: Uint8Array; name: string },
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(parts)) form.set(k, v);
  form.set('file', new Blob([file.bytes]), file.name);
  return getJson(`${base}/api/images`, { method: 'POST', body: form });
}

const center = (b: Box) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 });
const inside = (p: { x: number; y: number }, b: Box) => p.x >= b.x && p.x <= b.x + b.w && p.y >= b.y && p.y <= b.y + b.h;

describe.each([
  ['embedded (PGlite)', async () => ''],
  ['PostgreSQL', freshPostgresDatabase],
])('enrollment API on %s', (_name, databaseUrl) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ DATABASE_URL: await databaseUrl(), EMBEDDING_ENABLED: 'false' });
  });
  afterAll(async () => {
    await server?.close();
  });

  const labels = async () => (await getJson(`${server.url}/api/labels`)).body;

  it('a brick photo is stored with the verdict no_face and its original name (the original clients still get 200)', async () => {
    const { status, body } = await uploadImage(server.url, 'Brick Wall', await readTestImage('negatives/brick.png'), 'brick.png');
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'ok', label: 'brick-wall', original_name: 'brick.png', display_name: 'Brick Wall' });
    expect(body.check).toMatchObject({ verdict: 'no_face', faces: 0, face: null });
    expect(body.check.message).toMatch(/no face/i);
    const listed = (await getJson(`${server.url}/api/images/brick-wall`)).body;
    expect(listed.display_name).toBe('Brick Wall');
    expect(listed.files).toHaveLength(1);
    expect(listed.files[0]).toMatchObject({ filename: body.filename, original_name: 'brick.png', source: 'upload' });
    expect(listed.files[0].check.verdict).toBe('no_face');
    expect(listed.enrollment).toMatchObject({ photos: 1, good: 0, problems: 1, enough: false });
    expect(listed.enrollment.advice).toBe('1 photo, 1 with a problem: add 3 more from other angles');
  });

  it('POST /api/images/check gives each verdict and stores nothing', async () => {
    const before = await labels();
    const check = async (bytes: Uint8Array, face?: Box) => {
      const { status, body } = await postJson(
        `${server.url}/api/images/check`,
        face ? { image: base64(bytes), face } : { image: base64(bytes) },
      );
      expect(status).toBe(200);
      return body;
    };
    const grace = await photo('grace');
    expect((await check(grace)).check.verdict).toBe('ok');
    expect((await check(await readTestImage('negatives/brick.png'))).check.verdict).toBe('no_face');
    const two = await check(await readTestImage('faces/sample4.jpg'));
    expect(two.check.verdict).toBe('several_faces');
    expect(two.check.message).toMatch(/^Two faces: pick one/);
    expect(two.faces).toHaveLength(2);
    for (const f of two.faces) for (const k of ['x', 'y', 'w', 'h']) expect(Number.isInteger(f[k])).toBe(true);
    expect(two).toMatchObject({ width: 1920, height: 1448 });
    // Picking one of the two: checked as that face, not as "several".
    const picked = await check(await readTestImage('faces/sample4.jpg'), two.faces[1]);
    expect(picked.check).toMatchObject({ picked: true, face: two.faces[1] });
    expect(picked.check.problems).not.toContain('several_faces');
    expect((await check(await sharp(grace).blur(4).jpeg({ quality: 92 }).toBuffer())).check.verdict).toBe('blurred');
    expect((await check(await readTestImage('faces/messi5.jpg'))).check.verdict).toBe('too_small');
    // A face too small for the detector at the photo's size is found at twice it: too small, not "no face" (#36).
    const { width: graceWidth } = await sharp(grace).metadata();
    const tiny = await check(
      await sharp(grace)
        .resize({ width: Math.round(graceWidth! / 8) })
        .jpeg({ quality: 92 })
        .toBuffer(),
    );
    expect(tiny.check).toMatchObject({ verdict: 'too_small', faces: 1 });
    expect(tiny.check.message).toMatch(/^Too small: the face is \d+ px wide/);
    expect((await check(await sharp(grace).modulate({ brightness: 0.3 }).jpeg().toBuffer())).check.verdict).toBe('too_dark');
    expect((await check(await sharp(grace).modulate({ brightness: 1.6 }).jpeg().toBuffer())).check.verdict).toBe('too_bright');
    expect(await labels()).toEqual(before);
  });

  it('keeps the typed display name beside the label, renames with display_name, and summarises the photos', async () => {
    const first = await uploadWith(server.url, { label: 'Marie  Curie' }, { bytes: await photo('grace'), name: 'IMG_0001.jpg' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ label: 'marie-curie', display_name: 'Marie Curie', original_name: 'IMG_0001.jpg' });
    expect(first.body.check.verdict).toBe('ok');
    let detail = (await labels()).details.find((d: any) => d.label === 'marie-curie');
    expect(detail).toMatchObject({ display_name: 'Marie Curie', images: 1, trained: false });
    expect(detail.enrollment).toEqual({
      photos: 1,
      good: 1,
      problems: 0,
      unchecked: 0,
      enough: false,
      advice: '1 photo: add 2 more from other angles',
    });
    // A JSON upload with its own file name and a new display name.
    const second = await postJson(`${server.url}/api/images`, {
      label: 'marie-curie',
      image: base64(
        await sharp(await photo('grace'))
          .flop()
          .jpeg()
          .toBuffer(),
      ),
      filename: 'C:\\Users\\m\\Pictures\\mirror.jpg',
      display_name: 'Marie Skłodowska-Curie',
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ original_name: 'mirror.jpg', display_name: 'Marie Skłodowska-Curie' });
    // A later upload without display_name keeps the name.
    const third = await uploadImage(
      server.url,
      'marie-curie',
      await sharp(await photo('grace'))
        .modulate({ brightness: 1.1 })
        .jpeg()
        .toBuffer(),
    );
    expect(third.body.display_name).toBe('Marie Skłodowska-Curie');
    detail = (await labels()).details.find((d: any) => d.label === 'marie-curie');
    expect(detail.display_name).toBe('Marie Skłodowska-Curie');
    expect(detail.enrollment).toMatchObject({ photos: 3, good: 3, enough: true, advice: '3 photos: enough to train' });
    const listed = (await getJson(`${server.url}/api/images/marie-curie`)).body;
    expect(listed.files.map((f: any) => f.original_name)).toEqual(['IMG_0001.jpg', 'mirror.jpg', 'capture.jpg']);
    // One image deleted: its record goes with it.
    await fetch(`${server.url}/api/images/marie-curie/${listed.files[2].filename}`, { method: 'DELETE' });
    expect((await labels()).details.find((d: any) => d.label === 'marie-curie').enrollment.photos).toBe(2);
  });

  it('bad input is a clear 400 and stores nothing', async () => {
    const sample4 = await readTestImage('faces/sample4.jpg');
    const cases: [Record<string, string>, RegExp][] = [
      [
        { label: 'bad-pick', face: JSON.stringify({ x: 1900, y: 1400, w: 100, h: 100 }) },
        /"face": the box .* lies outside the 1920x1448 image/,
      ],
      [
        { label: 'bad-pick', face: JSON.stringify({ x: 10, y: 10, w: 100, h: 100 }) },
        /"face": the box .* matches none of the 2 faces found/,
      ],
      [{ label: 'bad-pick', face: 'left one' }, /"face": must be JSON/],
      [{ label: 'bad-pick', face: JSON.stringify({ x: -1, y: 0, w: 10, h: 10 }) }, /"face.x": must be 0 or more/],
      [{ label: 'bad-pick', face: JSON.stringify({ x: 0, y: 0, w: 10 }) }, /"face.h"/],
      [{ label: 'bad-pick', display_name: '   ' }, /"display_name": must not be empty/],
    ];
    for (const [parts, message] of cases) {
      const { status, body } = await uploadWith(server.url, parts, { bytes: sample4, name: 'group.jpg' });
      expect(status, JSON.stringify(parts)).toBe(400);
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message).toMatch(message);
    }
    const json = await postJson(`${server.url}/api/images`, {
      label: 'bad-pick',
      image: base64(sample4),
      face: { x: 0, y: 0, w: 0, h: 5 },
    });
    expect(json.status).toBe(400);
    expect(json.body.error.message).toMatch(/face\.w/);
    const check = await postJson(`${server.url}/api/images/check`, { image: base64(sample4), face: { x: 5000, y: 0, w: 10, h: 10 } });
    expect(check.status).toBe(400);
    expect((await labels()).labels).not.toContain('bad-pick');
    expect((await getJson(`${server.url}/api/images/bad-pick`)).body).toMatchObject({ images: [], count: 0 });
  });

  it('a picked face is stored as that face, idempotently with capture_id, and training takes it', async () => {
    const sample4 = await readTestImage('faces/sample4.jpg');
    const { body: found } = await postJson(`${server.url}/api/images/check`, { image: base64(sample4) });
    // The smaller face: the one training would not take from the whole photo.
    const smaller: Box = found.faces.reduce((a: Box, b: Box) => (a.w * a.h <= b.w * b.h ? a : b));
    const parts = { label: 'Picked Person', face: JSON.stringify(smaller), capture_id: 'pick-0001-abcd' };
    const first = await uploadWith(server.url, parts, { bytes: sample4, name: 'group.jpg' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ label: 'picked-person', duplicate: false, original_name: 'group.jpg' });
    expect(first.body.check).toMatchObject({ picked: true, faces: 2, face: smaller });
    expect(first.body.check.problems).not.toContain('several_faces');
    const again = await uploadWith(server.url, parts, { bytes: sample4, name: 'group.jpg' });
    expect(again.body).toMatchObject({ filename: first.body.filename, duplicate: true });
    const listed = (await getJson(`${server.url}/api/images/picked-person`)).body;
    expect(listed.count).toBe(1);
    expect(listed.files[0]).toMatchObject({ original_name: 'group.jpg' });
    expect(listed.files[0].check.face).toEqual(smaller);
    // The stored image is that face's region: one face there, of the picked face's size, the largest.
    const stored = new Uint8Array(await (await fetch(`${server.url}/api/images/picked-person/${first.body.filename}`)).arrayBuffer());
    const meta = await sharp(stored).metadata();
    expect(meta.width!).toBeLessThan(smaller.w * 2.2);
    const { body: inStored } = await postJson(`${server.url}/api/images/check`, { image: base64(stored) });
    expect(inStored.check.face.w).toBeGreaterThan(smaller.w * 0.8);
    expect(inStored.check.face.w).toBeLessThan(smaller.w * 1.25);
    // Trained (with another person beside it): in the group photo, the picked face is named, the other one is not
    // closer to them.
    expect((await uploadImage(server.url, 'grace', await photo('grace'))).status).toBe(200);
    const trained = await postJson(`${server.url}/api/train`, {});
    expect(trained.status).toBe(200);
    const { body: rec } = await postJson(`${server.url}/api/recognize`, { image: base64(sample4) });
    const pickedFace = rec.faces.find((f: any) => inside(center({ x: f.x, y: f.y, w: f.w, h: f.h }), smaller));
    const otherFace = rec.faces.find((f: any) => f !== pickedFace);
    expect(pickedFace.label).toBe('picked-person');
    expect(otherFace.label).not.toBe('picked-person');
  });
});
