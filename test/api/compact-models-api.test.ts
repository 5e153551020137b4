/**
 * The compact browser models (#27 section 2) over real HTTP: the manifest lists one segment per person with the
 * ETag of GET /api/models/trained; the segments, fetched by hash (gzip when accepted), assemble into the very
 * model training.yml holds; a training that adds one person leaves the others' segments (hashes) as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompactModelManifest } from '../../shared/api/compact-models.js';
import { assembleLbph } from '../../shared/recognition/compact-model.js';
import { decodeLbphFile } from '../../shared/recognition/model-files.js';
import { trainingCaptures } from '../helpers/faces.js';
import { postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

/** The segments of a segments answer, in order. */
function split(body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  for (let at = 0; at < body.length; ) {
    const n = view.getUint32(at, true);
    out.push(body.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return out;
}

describe('compact trained models', () => {
  let server: TestServer;
  const manifest = (etag?: string) =>
    fetch(`${server.url}/api/models/trained/compact`, etag ? { headers: { 'if-none-match': `"${etag}"` } } : {});
  const segments = (hashes: string[], gzip = false) =>
    fetch(`${server.url}/api/models/trained/compact/segments?hashes=${hashes.join(',')}`, {
      headers: { 'accept-encoding': gzip ? 'gzip' : 'identity' },
    });

  beforeAll(async () => {
    server = await startTestServer(LIGHT);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  it('before any training: the manifest is a 404 not_trained', async () => {
    const res = await manifest();
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_trained');
  });

  it('lists one segment per person; the segments assemble into training.yml; adding a person adds one segment', async () => {
    for (const person of ['grace', 'lionel'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);

    const index = (await (await fetch(`${server.url}/api/models/trained`)).json()) as { version: string };
    const res = await manifest();
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${index.version}"`);
    const m1 = (await res.json()) as CompactModelManifest;
    expect(m1).toMatchObject({
      format: 'lookout-compact',
      format_version: 2,
      version: index.version,
      segments_url: '/api/models/trained/compact/segments',
    });
    expect(m1.lbph?.people.map((p) => [p.label, p.samples])).toEqual([
      ['grace', 4],
      ['lionel', 4],
    ]);
    expect(m1.lbph!.wire_bytes).toBeGreaterThan(0);
    expect(m1.lbph!.wire_bytes).toBeLessThan(m1.lbph!.people.reduce((n, p) => n + p.bytes, 0));
    expect((await manifest(index.version)).status).toBe(304);

    // Fetched plain and gzipped: the same bytes, and the model training.yml holds, bit for bit.
    const hashes = m1.lbph!.people.map((p) => p.hash);
    const plain = await segments(hashes);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('private, no-cache');
    expect((await fetch(plain.url, { headers: { 'if-none-match': plain.headers.get('etag')! } })).status).toBe(304);
    const plainBytes = new Uint8Array(await plain.arrayBuffer());
    // Node's fetch undoes the gzip itself (as a browser does): the header says it was sent compressed.
    const zipped = await segments(hashes, true);
    expect(zipped.status).toBe(200);
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(new Uint8Array(await zipped.arrayBuffer())).toEqual(plainBytes);
    const parts = split(plainBytes);
    expect(parts.map((p) => p.length)).toEqual(m1.lbph!.people.map((p) => p.bytes));
    const head = m1.lbph!;
    const { model, labelIds } = assembleLbph(
      {
        radius: head.radius,
        neighbors: head.neighbors,
        gridX: head.grid_x,
        gridY: head.grid_y,
        threshold: head.threshold,
        ...(head.face_alignment ? { faceAlignment: head.face_alignment } : {}),
      },
      parts,
    );
    const yaml = decodeLbphFile(await (await fetch(`${server.url}/api/models/trained/lbph`)).text());
    expect(Object.keys(labelIds).sort()).toEqual(Object.keys(yaml.labelIds).sort());
    expect(model.faceAlignment).toBe(yaml.model.faceAlignment);
    const byName = (m: typeof model, ids: Record<string, number>) =>
      Object.fromEntries(
        Object.entries(ids).map(([name, id]) => [
          name,
          m.histograms.filter((_, i) => m.labels[i] === id).map((h) => Buffer.from(h.buffer).toString('base64')),
        ]),
      );
    expect(byName(model, labelIds)).toEqual(byName(yaml.model, yaml.labelIds));

    // One more person: one new segment, the others' hashes unchanged.
    for (const capture of await trainingCaptures('eileen')) expect((await uploadImage(server.url, 'eileen', capture)).status).toBe(200);
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    const m2 = (await (await manifest()).json()) as CompactModelManifest;
    expect(m2.version).not.toBe(m1.version);
    const known = new Set(hashes);
    const fresh = m2.lbph!.people.filter((p) => !known.has(p.hash));
    expect(fresh.map((p) => p.label)).toEqual(['eileen']);
    if (m1.embedding && m2.embedding) {
      const knownE = new Set(m1.embedding.people.map((p) => p.hash));
      expect(m2.embedding.people.filter((p) => !knownE.has(p.hash)).map((p) => p.label)).toEqual(['eileen']);
    }
    // The previous model's segments stay answerable for devices that read its manifest.
    expect((await segments(hashes.slice(0, 1))).status).toBe(200);
  }, 240_000);

  it('refuses malformed hashes (400) and unknown ones (404 not_found)', async () => {
    const bad = await fetch(`${server.url}/api/models/trained/compact/segments?hashes=xyz`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    const unknown = await segments(['0123456789abcdef']);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});
