/**
 * #36 2 over real HTTP: a merge reaches the trained models at once, with no training. After A is merged into B, the
 * server's recognition (LBPH and embedding) names B for A's face, the margin rule no longer weighs A's photos and
 * B's as two people, the compact model the browsers sync holds A's samples under B; the undo names A again. A
 * training after the merge, or after its undo, gives the same answers. A stored sighting whose nearest person was A
 * has B as its candidate after the merge (and A again after the undo), also one that arrives after the merge.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompactModelManifest } from '../../shared/api/compact-models.js';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };
const RECOGNIZERS = ['lbph', 'embedding'] as const;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(LIGHT);
  for (const person of ['grace', 'eileen', 'lionel'] as const) {
    const label = person === 'lionel' ? 'leo' : person;
    for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, label, capture)).status).toBe(200);
  }
  // Lionel enrolled a second time, with other photos: the same person under two labels.
  for (const scale of [1.5, 1.15]) expect((await uploadImage(server.url, 'lionel', await rescaled('lionel', scale))).status).toBe(200);
  const trained = await postJson(`${server.url}/api/train`, {});
  expect(trained.status, JSON.stringify(trained.body)).toBe(200);
}, 240_000);
afterAll(async () => {
  await server?.close();
});

type Answer = { label: string; reason?: string; candidate?: string; distance?: number };

/** The one face of a photo as each recognizer answers it. */
async function answers(image: Buffer): Promise<Record<(typeof RECOGNIZERS)[number], Answer>> {
  const out: Partial<Record<(typeof RECOGNIZERS)[number], Answer>> = {};
  for (const recognizer of RECOGNIZERS) {
    const res = await postJson(`${server.url}/api/recognize`, { image: base64(image), recognition_model: recognizer });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.faces).toHaveLength(1);
    const [face] = res.body.faces;
    out[recognizer] = {
      label: face.label,
      ...(face.reason ? { reason: face.reason } : {}),
      ...(face.candidate ? { candidate: face.candidate.label } : {}),
      distance: face.distance ?? face.candidate?.distance,
    };
  }
  return out as Record<(typeof RECOGNIZERS)[number], Answer>;
}

const labelsOf = (a: Record<string, Answer>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.label]));

async function manifestPeople(): Promise<Record<string, Record<string, number>>> {
  const res = await fetch(`${server.url}/api/models/trained/compact`);
  expect(res.status).toBe(200);
  const m = (await res.json()) as CompactModelManifest;
  const of = (part: { people: { label: string; samples: number }[] } | null | undefined) =>
    Object.fromEntries((part?.people ?? []).map((p) => [p.label, p.samples]));
  return { lbph: of(m.lbph), embedding: of(m.embedding) };
}

async function merge(label: string, into: string) {
  const res = await postJson(`${server.url}/api/people/${label}/merge`, { into });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
async function undo(actionId: string) {
  const res = await postJson(`${server.url}/api/person-actions/${actionId}/undo`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('a merge in the trained models, without a training', () => {
  it('names the one who stays for the merged face, and the merged person again after the undo', async () => {
    const eileen = await rescaled('eileen', 1.3);
    expect(labelsOf(await answers(eileen))).toEqual({ lbph: 'eileen', embedding: 'eileen' });
    const before = await manifestPeople();
    expect(before.lbph).toMatchObject({ eileen: 4, grace: 4 });

    const merged = await merge('eileen', 'grace');
    expect(labelsOf(await answers(eileen))).toEqual({ lbph: 'grace', embedding: 'grace' });
    expect(merged.retrain_needed).toBe(false);
    // What browsers sync: her samples under the one who stays, her own name gone.
    const after = await manifestPeople();
    for (const kind of RECOGNIZERS) {
      expect(after[kind].eileen, kind).toBeUndefined();
      expect(after[kind].grace, kind).toBe(before[kind].grace + before[kind].eileen);
    }
    const labels = (await getJson(`${server.url}/api/models/config`)).body;
    expect(labels.recognizers.lbph.labels).toBe(3);

    const undone = await undo(merged.action_id);
    expect(undone.retrain_needed).toBe(false);
    expect(labelsOf(await answers(eileen))).toEqual({ lbph: 'eileen', embedding: 'eileen' });
    expect(await manifestPeople()).toEqual(before);
  });

  it('no longer weighs one person enrolled twice as two people (the margin rule), and undo gives the answers of before', async () => {
    const lionel = await rescaled('lionel', 1.3);
    const before = await answers(lionel);
    // Their photos under two labels, about equally near: the embedding recognizer cannot tell which one.
    expect(before.embedding).toMatchObject({ label: 'unknown', reason: 'ambiguous' });
    const merged = await merge('leo', 'lionel');
    const after = await answers(lionel);
    for (const kind of RECOGNIZERS) {
      expect(after[kind], kind).toMatchObject({ label: 'lionel' });
      expect(after[kind].reason, kind).toBeUndefined();
    }
    await undo(merged.action_id);
    expect(await answers(lionel)).toEqual(before);
  });

  it('answers as a training after the merge would, and as one after its undo would', async () => {
    const eileen = await rescaled('eileen', 1.3);
    const original = await answers(eileen);
    const merged = await merge('eileen', 'grace');
    const relabelled = await answers(eileen);
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    const retrained = await answers(eileen);
    for (const kind of RECOGNIZERS) {
      expect(retrained[kind].label, kind).toBe(relabelled[kind].label);
      expect(retrained[kind].distance, kind).toBeCloseTo(relabelled[kind].distance as number, 6);
    }
    // The undo after that training: it made the same samples of her photos, which go back to her.
    expect((await undo(merged.action_id)).retrain_needed).toBe(false);
    const back = await answers(eileen);
    expect(labelsOf(back)).toEqual(labelsOf(original));
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    const retrainedBack = await answers(eileen);
    for (const kind of RECOGNIZERS) {
      expect(retrainedBack[kind].label, kind).toBe(back[kind].label);
      expect(retrainedBack[kind].distance, kind).toBeCloseTo(back[kind].distance as number, 6);
    }
  });
});

describe("a sighting's nearest person follows the merge", () => {
  const crop = async () =>
    `data:image/jpeg;base64,${(
      await sharp(await photo('grace'))
        .resize({ height: 96 })
        .jpeg({ quality: 70 })
        .toBuffer()
    ).toString('base64')}`;
  const unknownNear = async (id: string, candidate: string) => ({
    id,
    kind: 'recognition',
    captured_at: new Date().toISOString(),
    source: 'kiosk-1',
    engine: 'browser',
    faces: [
      {
        x: 1,
        y: 1,
        w: 50,
        h: 50,
        label: 'unknown',
        confidence: 0,
        reason: 'below_threshold',
        candidate: { label: candidate, confidence: 40, distance: 0.7 },
        crop: await crop(),
      },
    ],
  });
  const sighting = async (id: string) => {
    await expect.poll(async () => (await fetch(`${server.url}/api/sightings/${id}`)).status, { timeout: 30_000 }).toBe(200);
    return (await getJson(`${server.url}/api/sightings/${id}`)).body;
  };

  it('stored before the merge, read after it: the one who stays; after the undo: the merged person', async () => {
    const sent = await postJson(`${server.url}/api/results`, { results: [await unknownNear('r-cand-1', 'leo')] });
    expect([sent.status, sent.body.accepted]).toEqual([200, 1]);
    expect(await sighting('r-cand-1-0')).toMatchObject({ label: null, candidate: 'leo' });
    const merged = await merge('leo', 'lionel');
    expect((await sighting('r-cand-1-0')).candidate).toBe('lionel');
    await undo(merged.action_id);
    expect((await sighting('r-cand-1-0')).candidate).toBe('leo');
  });

  it('arriving after the merge still naming the merged person: the one who stays, and back with the undo', async () => {
    const merged = await merge('leo', 'lionel');
    const sent = await postJson(`${server.url}/api/results`, { results: [await unknownNear('r-cand-2', 'leo')] });
    expect([sent.status, sent.body.accepted]).toEqual([200, 1]);
    expect((await sighting('r-cand-2-0')).candidate).toBe('lionel');
    await undo(merged.action_id);
    expect((await sighting('r-cand-2-0')).candidate).toBe('leo');
  });
});
