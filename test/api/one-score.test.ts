/**
 * #36 "One score", over real HTTP on 127.0.0.1: a face's `confidence` is its similarity (shared/recognition/
 * similarity.ts), fixed by the distance alone, so the same image reads the same figure before and after the limits
 * move (it read 85% at the defaults and 71% after a lower limit); the thresholds answer gives each limit in the same
 * units; and saving the recognition limit never moves the verification limit (it went 75 -> 45 unasked).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRule } from '../../shared/recognition/rules.js';
import { similarity } from '../../shared/recognition/similarity.js';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false', RECOGNITION_MODEL: 'lbph' };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(LIGHT);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const put = (body: unknown) =>
  getJson(`${server.url}/api/models/thresholds`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const recognize = async (bytes: Uint8Array) => {
  const { status, body } = await postJson(`${server.url}/api/recognize`, { image: base64(bytes) });
  expect(status).toBe(200);
  return body.faces as { label: string; confidence: number; distance?: number; candidate?: { confidence: number; distance: number } }[];
};

describe('one score', () => {
  it("the thresholds answer gives each limit's similarity, in the units of `confidence`", async () => {
    const { status, body } = await getJson(`${server.url}/api/models/thresholds`);
    expect(status).toBe(200);
    const lbph = defaultRule('lbph');
    expect(body.lbph.similarity).toEqual({
      max: similarity(lbph.max, 'lbph'),
      sure_max: similarity(lbph.sureMax, 'lbph'),
      verify_max: similarity(lbph.verifyMax, 'lbph'),
      near_max: similarity(lbph.nearMax, 'lbph'),
    });
    // The calibrated default limit is the 60% anchor.
    expect(body.lbph.similarity.max).toBe(60);
    expect(body.embedding.similarity.max).toBe(60);
  });

  it('the same image keeps its confidence (and its candidate its) when the limits move', async () => {
    const captures = await trainingCaptures('grace');
    for (const capture of captures) expect((await uploadImage(server.url, 'grace', capture)).status).toBe(200);
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);

    const known = await rescaled('grace', 0.8);
    const stranger = await photo('eileen');
    const [before] = await recognize(known);
    expect(before.label).toBe('grace');
    expect(before.confidence).toBe(similarity(before.distance as number, 'lbph'));

    // A lower limit that still names her, a looser sure bound: the figure stays.
    const limit = Math.ceil(before.distance as number) + 1;
    expect((await put({ recognizer: 'lbph', max: limit, sure_max: limit, verify_max: limit })).status).toBe(200);
    const [after] = await recognize(known);
    expect(after).toMatchObject({ label: 'grace', confidence: before.confidence, distance: before.distance });
    // An unknown face stays `confidence` 0 (the original's clients read it so); a candidate keeps its similarity.
    const [far] = await recognize(stranger);
    expect(far.label).toBe('unknown');
    expect(far.confidence).toBe(0);
    if (far.candidate) expect(far.candidate.confidence).toBe(similarity(far.candidate.distance, 'lbph'));

    expect((await put({ recognizer: 'lbph', max: null, sure_max: null, verify_max: null })).status).toBe(200);
  });
});

describe('saving the recognition limit leaves the verification limit alone', () => {
  it('a limit above the verification limit: verify_max stays as it was (75)', async () => {
    const saved = await put({ recognizer: 'lbph', max: 78 });
    expect(saved.status).toBe(200);
    expect(saved.body.lbph).toMatchObject({ max: 78, verify_max: 75, overridden: ['max'] });
    expect((await put({ recognizer: 'lbph', max: null })).status).toBe(200);
  });

  it('a limit under it leaves it as it was too (it went 75 -> 45 unasked), in the answer, the rule in force and the file', async () => {
    const saved = await put({ recognizer: 'lbph', max: 45 });
    expect(saved.status).toBe(200);
    expect(saved.body.lbph).toMatchObject({ max: 45, sure_max: 45, verify_max: 75, overridden: ['max'] });
    // The rule in force: /api/verify answers with the verification limit as it was.
    const now = (await getJson(`${server.url}/api/models/thresholds`)).body.lbph;
    expect(now).toMatchObject({ max: 45, verify_max: 75, overridden: ['max'] });
    // The preview proposes the same rule Save makes.
    const preview = await postJson(`${server.url}/api/models/thresholds/preview`, { recognizer: 'lbph', max: 40 });
    expect(preview.status).toBe(200);
    // A verification limit the caller sends is kept, and a later limit leaves it as it is.
    expect((await put({ recognizer: 'lbph', verify_max: 70 })).body.lbph).toMatchObject({ max: 45, verify_max: 70 });
    expect((await put({ recognizer: 'lbph', max: 60 })).body.lbph).toMatchObject({ max: 60, verify_max: 70 });
    // #35's bound still caps it.
    expect((await put({ recognizer: 'lbph', verify_max: 86 })).status).toBe(400);
    expect((await put({ recognizer: 'lbph', max: null, verify_max: null })).body.lbph).toMatchObject({
      max: 80,
      verify_max: 75,
      overridden: [],
    });
  });
});
