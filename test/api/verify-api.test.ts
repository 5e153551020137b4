/**
 * POST /api/verify (issue #25 section 4) over real HTTP with real photos: a face is compared only with the claimed
 * person's own samples, so a look-alike enrolled as someone else, or a stranger near them, never passes as them.
 * The people: the man of Human's face-match screenshot (19 different photos of him, test/fixtures/images), enrolled
 * from 3 of them and verified with others; the stranger of that screenshot nearest to him, enrolled as his
 * look-alike; and the three single-photo people of the other API tests.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACEMATCH, MAN, thumbKey } from '../../bench/identity-sets.js';
import { rgbToGray } from '../../shared/image/ops.js';
import type { Rect } from '../../shared/image/types.js';
import { detectMultiScale, parseHaarCascade } from '../../shared/vision/haar-cascade.js';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { postJson, readTestImage, REPO_ROOT, startTestServer, TESTDATA, uploadImage, type TestServer } from '../helpers/test-server.js';

/** The stranger of the screenshot nearest to the man by the embedding recognizer (0.62 from his samples). */
const LOOK_ALIKE = '1728,414';

const SCREENSHOT = path.join(TESTDATA, 'faces', FACEMATCH);

/** A thumbnail of the screenshot with a little room around it, at about webcam size. */
async function thumb(b: Rect, margin = 0.12): Promise<Buffer> {
  const side = Math.round(b.width * (1 + 2 * margin));
  const left = Math.max(0, Math.round(b.x + b.width / 2 - side / 2));
  const top = Math.max(0, Math.round(b.y + b.height / 2 - side / 2));
  return sharp(SCREENSHOT)
    .removeAlpha()
    .extract({ left, top, width: side, height: side })
    .resize(300, 300)
    .jpeg({ quality: 92 })
    .toBuffer();
}

let server: TestServer;
let man: Rect[];
let lookAlike: Rect;

const verify = (body: Record<string, unknown>) => postJson(`${server.url}/api/verify`, body);
const embedding = { recognition_model: 'embedding' };

beforeAll(async () => {
  const cascade = parseHaarCascade(readFileSync(path.join(REPO_ROOT, 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
  const shot = await sharp(SCREENSHOT).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const gray = rgbToGray({ width: shot.info.width, height: shot.info.height, channels: 3, data: new Uint8Array(shot.data) });
  const thumbs = detectMultiScale(cascade, gray, { scaleFactor: 1.1, minNeighbors: 3, minSize: { width: 30, height: 30 } });
  man = MAN.map((k) => thumbs.find((b) => thumbKey(b) === k)).filter((b): b is Rect => b !== undefined);
  lookAlike = thumbs.find((b) => thumbKey(b) === LOOK_ALIKE)!;
  expect(man).toHaveLength(MAN.length);
  expect(lookAlike).toBeDefined();
  server = await startTestServer();
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('POST /api/verify', () => {
  it('before training: no match, not_trained, for either recognizer', async () => {
    for (const recognition_model of ['embedding', 'lbph']) {
      const { status, body } = await verify({ label: 'grace', image: base64(await photo('grace')), recognition_model });
      expect(status).toBe(200);
      expect(body).toMatchObject({ match: false, reason: 'not_trained', label: 'grace', distance: null, recognition_model });
      expect(body.threshold).toBeGreaterThan(0);
    }
  });

  it('after training: the man matches himself in photos he was not enrolled from, frame by frame', async () => {
    for (const i of [0, 4, 8]) expect((await uploadImage(server.url, 'the-man', await thumb(man[i]))).status).toBe(200);
    const alike = await thumb(lookAlike);
    for (const image of [alike, await sharp(alike).flop().jpeg().toBuffer()])
      expect((await uploadImage(server.url, 'look-alike', image)).status).toBe(200);
    for (const person of ['grace', 'eileen', 'lionel'] as const)
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);

    const frames = await Promise.all([1, 5, 9].map(async (i) => base64(await thumb(man[i]))));
    const { status, body } = await verify({ label: 'The Man', frames, ...embedding });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      match: true,
      reason: 'match',
      label: 'the-man',
      recognition_model: 'embedding',
      detection_method: 'local',
    });
    expect(body.frames).toHaveLength(3);
    for (const f of body.frames) {
      expect(f).toMatchObject({ match: true, reason: 'match', faces: 1 });
      expect(f.face.w).toBeGreaterThan(100);
    }
    // The burst's distance is its least sure frame's, within the threshold.
    expect(body.distance).toBe(Math.max(...body.frames.map((f: { distance: number }) => f.distance)));
    expect(body.distance).toBeLessThanOrEqual(body.threshold);
    expect(body).not.toHaveProperty('face');

    const one = await verify({ label: 'grace', image: base64(await rescaled('grace', 0.8)), ...embedding });
    expect(one.body).toMatchObject({ match: true, reason: 'match', face: expect.objectContaining({ w: expect.any(Number) }) });
    expect(one.body).not.toHaveProperty('frames');
  });

  it('a look-alike enrolled as someone else passes neither as the man nor lets the man pass as them', async () => {
    const alike = await verify({ label: 'the-man', image: base64(await thumb(lookAlike, 0.15)), ...embedding });
    expect(alike.body).toMatchObject({ match: false, reason: 'below_threshold' });
    expect(alike.body.distance).toBeGreaterThan(alike.body.threshold);
    // Yet the look-alike is himself.
    expect((await verify({ label: 'look-alike', image: base64(await thumb(lookAlike, 0.15)), ...embedding })).body.match).toBe(true);
    const theMan = await verify({ label: 'look-alike', image: base64(await thumb(man[5])), ...embedding });
    expect(theMan.body).toMatchObject({ match: false, reason: 'below_threshold' });
    // Another enrolled person's own photo, claimed as someone else.
    const grace = await verify({ label: 'lionel', image: base64(await photo('grace')), ...embedding });
    expect(grace.body).toMatchObject({ match: false, reason: 'below_threshold' });
  });

  it('needs exactly one face in every frame', async () => {
    const none = await verify({ label: 'grace', image: base64(await readTestImage('negatives/brick.png')), ...embedding });
    expect(none.body).toMatchObject({ match: false, reason: 'no_face', distance: null });
    expect(none.body).not.toHaveProperty('face');
    const group = await verify({ label: 'grace', image: base64(await readTestImage('faces/sample5.jpg')), ...embedding });
    expect(group.body).toMatchObject({ match: false, reason: 'several_faces', distance: null });
    // One frame without a face spoils a burst of good ones.
    const frames = [base64(await rescaled('grace', 0.8)), base64(await readTestImage('negatives/coins.png'))];
    const burst = await verify({ label: 'grace', frames, ...embedding });
    expect(burst.body).toMatchObject({ match: false, reason: 'no_face', distance: null });
    expect(burst.body.frames.map((f: { reason: string }) => f.reason)).toEqual(['match', 'no_face']);
  });

  it('a label nobody enrolled is an answer, not an error', async () => {
    const { status, body } = await verify({ label: 'nobody-here', image: base64(await photo('grace')), ...embedding });
    expect(status).toBe(200);
    expect(body).toMatchObject({ match: false, reason: 'not_enrolled', label: 'nobody-here', distance: null });
  });

  it('LBPH: refuses the bytes of a training photo as a copy, and answers with its own threshold', async () => {
    const [capture] = await trainingCaptures('grace');
    const copy = await verify({ label: 'grace', image: base64(capture), recognition_model: 'lbph' });
    expect(copy.body).toMatchObject({ match: false, reason: 'copy_of_training_image', recognition_model: 'lbph' });
    expect(copy.body.distance).toBeLessThan(4);
    const other = await verify({ label: 'grace', image: base64(await photo('eileen')), recognition_model: 'lbph' });
    expect(other.body).toMatchObject({ match: false, reason: 'below_threshold' });
    expect(other.body.threshold).toBeGreaterThan(4);
  });

  it('bad input is a 400 that says what is wrong', async () => {
    const image = base64(await photo('grace'));
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ image }, 'bad_request', /label/],
      [{ label: 'grace' }, 'bad_request', /either "image" or "frames"/],
      [{ label: 'grace', image, frames: [image] }, 'bad_request', /either "image" or "frames"/],
      [{ label: 'grace', frames: [] }, 'bad_request', /at least one/],
      [{ label: 'grace', frames: Array.from({ length: 6 }, () => image) }, 'bad_request', /at most 5/],
      [{ label: 'grace', image: 'not base64!' }, 'invalid_image', /base64/],
      [{ label: 'grace', frames: [image, 'bm90IGFuIGltYWdl'] }, 'invalid_image', /./],
      [{ label: 'unknown', image }, 'invalid_label', /reserved/],
      [{ label: 'grace', image, recognition_model: 'eigenfaces' }, 'bad_request', /recognition_model/],
    ];
    for (const [body, code, message] of cases) {
      const res = await verify(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toMatch(message);
    }
  });
});

describe('POST /api/verify without the embedding recognizer', () => {
  it('asking for it is a 409 model_unavailable', async () => {
    const off = await startTestServer({ EMBEDDING_ENABLED: 'false' });
    try {
      const res = await postJson(`${off.url}/api/verify`, {
        label: 'grace',
        image: base64(await photo('grace')),
        recognition_model: 'embedding',
      });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('model_unavailable');
    } finally {
      await off.close();
    }
  });
});
