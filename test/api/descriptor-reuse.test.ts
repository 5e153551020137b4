/**
 * #26: with the embedding recognizer running, POST /api/recognize describes each face once: the sightings (camera
 * tracks and the stored descriptor) take the recognition's descriptors instead of describing the faces again.
 * Counted on the real embedding worker (its own count of the faces it described, FaceService.embeddingDescribed).
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

describe('descriptors computed once per face (embedding recognizer, camera frames)', () => {
  let server: TestServer;
  let portraits: Buffer[];
  beforeAll(async () => {
    // An interval no test outlasts: after its first sighting, a track keeps nothing more.
    server = await startTestServer({ RECOGNITION_MODEL: 'embedding', SIGHTINGS_INTERVAL_S: '600' });
    const deadline = Date.now() + 120_000;
    while (!server.service.ctx.faces.embeddingAvailability.available) {
      if (Date.now() > deadline) throw new Error('the embedding worker did not load within 2 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const person of ['grace', 'eileen'] as const) {
      for (const capture of (await trainingCaptures(person)).slice(0, 2)) {
        expect((await uploadImage(server.url, person, capture)).status).toBe(200);
      }
    }
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    portraits = await Promise.all(
      (['grace', 'eileen'] as const).map(async (p) =>
        sharp(await photo(p))
          .resize({ width: 380 })
          .png()
          .toBuffer(),
      ),
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A 1280 x 720 frame with both people, shifted by `dx`; recognised, and its sightings decided. */
  async function frame(dx: number, extra: Record<string, unknown>) {
    const image = await sharp({ create: { width: 1280, height: 720, channels: 3, background: { r: 90, g: 90, b: 90 } } })
      .composite([
        { input: portraits[0], left: 100 + dx, top: 120 },
        { input: portraits[1], left: 760 - dx, top: 140 },
      ])
      .jpeg({ quality: 90 })
      .toBuffer();
    const before = await server.service.ctx.faces.embeddingDescribed();
    const res = await postJson(`${server.url}/api/recognize`, { image: base64(image), source: 'camera', ...extra });
    expect(res.status).toBe(200);
    await server.service.ctx.sightingRecorder.idle();
    const described = (await server.service.ctx.faces.embeddingDescribed())! - before!;
    return { answer: res.body, described };
  }

  const sightingsOf = (camera: string) =>
    server.service.ctx.db.query<{ label: string | null; descriptor: Uint8Array | null }>(
      'SELECT label, descriptor FROM sightings WHERE camera = $1 ORDER BY label',
      [camera],
    );

  it('describes each face of a camera frame once, and the sightings keep those descriptors', async () => {
    for (const dx of [0, 20, 40]) {
      const { answer, described } = await frame(dx, { camera: 'door' });
      expect(answer.recognition_model).toBe('embedding');
      expect(answer.faces.map((f: { label: string }) => f.label).sort()).toEqual(['eileen', 'grace']);
      // One descriptor a face: the recognition's. (Before, the recorder described each face a second time.)
      expect(described).toBe(2);
    }
    // One sighting per track (the interval), each with its face's 128-d descriptor.
    const kept = await sightingsOf('door');
    expect(kept.map((s) => s.label)).toEqual(['eileen', 'grace']);
    for (const s of kept) expect(s.descriptor?.byteLength).toBe(128 * 4);
  });

  it('describes the faces in the recorder when the recognition computed no descriptors (LBPH), once each', async () => {
    const { answer, described } = await frame(0, { camera: 'gate', recognition_model: 'lbph' });
    expect(answer.recognition_model).toBe('lbph');
    expect(answer.count).toBe(2);
    expect(described).toBe(2);
    const kept = await sightingsOf('gate');
    expect(kept).toHaveLength(2);
    for (const s of kept) expect(s.descriptor?.byteLength).toBe(128 * 4);
  });
});
