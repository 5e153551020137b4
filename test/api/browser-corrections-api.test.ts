/**
 * Corrections for the in-browser engine (issue #26) over real HTTP, on both databases: the trained models a kiosk
 * downloads come with the corrections of the kiosk gallery's people. A correction changes the list's version (its
 * ETag) without a training, while the model files keep theirs (`models_version`), and is served as a corrections
 * file holding the same template the server applies; a person kept out of the kiosk gallery takes their corrections
 * out too; deleting the correction gives the earlier version back.
 *
 * The sighting corrected is the one the server recorded for a real recognition (POST /api/recognize).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCorrectionsFile } from '../../shared/recognition/correction-file.js';
import { featureFrom } from '../../server/review/corrections.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

// #35: the lenient limits that name a stranger lie past the calibrated bounds: THRESHOLD_BOUNDS=off.
const LIGHT = { WORKERS: '1', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false', THRESHOLD_BOUNDS: 'off' };
/** Lenient enough that the stranger (astronaut Eileen Collins) is named as one of the people by LBPH. */
const LENIENT = { recognizer: 'lbph', max: 300, verify_max: 300 };

const send = (url: string, method: string, body?: unknown) =>
  getJson(url, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });

describe.each(['embedded', 'postgresql'] as const)('corrections in the downloaded models (%s database)', (database) => {
  let server: TestServer;
  const index = (etag?: string) => fetch(`${server.url}/api/models/trained`, etag ? { headers: { 'if-none-match': `"${etag}"` } } : {});
  const correctionsFile = (etag?: string) =>
    fetch(`${server.url}/api/models/trained/corrections`, etag ? { headers: { 'if-none-match': `"${etag}"` } } : {});

  beforeAll(async () => {
    const env: Record<string, string> = { ...LIGHT, ...(database === 'postgresql' ? { DATABASE_URL: await freshPostgresDatabase() } : {}) };
    server = await startTestServer(env);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  it('before any training: no corrections in the list, and the file is a 404 not_trained', async () => {
    const body = (await (await index()).json()) as Record<string, unknown>;
    expect(body.version).toBeNull();
    expect(body).not.toHaveProperty('corrections');
    const res = await correctionsFile();
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_trained');
  });

  it('a correction changes the version without a training and is served; kiosk exclusion and deletion take it out', async () => {
    for (const person of ['grace', 'lionel'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    expect((await send(`${server.url}/api/models/thresholds`, 'PUT', LENIENT)).status).toBe(200);

    // Trained, no correction: the version is the files', the corrections file an empty set of that version.
    const first = await index();
    const v1 = ((await first.json()) as { version: string }).version;
    const listed = async (etag?: string) => {
      const res = await index(etag);
      expect(res.status).toBe(200);
      return { etag: res.headers.get('etag'), body: (await res.json()) as any };
    };
    expect((await listed()).body).toMatchObject({
      version: v1,
      models_version: v1,
      corrections: { available: false, url: '/api/models/trained/corrections', bytes: null, count: 0 },
    });
    const empty = await correctionsFile();
    expect(empty.status).toBe(200);
    expect(empty.headers.get('etag')).toBe(`"${v1}"`);
    expect(decodeCorrectionsFile(await empty.text())).toMatchObject({ version: v1, negatives: { lbph: new Map(), embedding: new Map() } });

    // The stranger, given a name under the lenient rule: a sighting the server records.
    const stranger = await photo('eileen');
    const recognized = await postJson(`${server.url}/api/recognize`, { image: base64(stranger), recognition_model: 'lbph' });
    expect(recognized.body.faces).toHaveLength(1);
    const named: string = recognized.body.faces[0].label;
    expect(['grace', 'lionel']).toContain(named);
    const other = named === 'grace' ? 'lionel' : 'grace';
    let sightingId = '';
    await expect
      .poll(
        async () => {
          const { body } = await getJson(`${server.url}/api/sightings?label=${named}&source=api`);
          sightingId = body.sightings?.[0]?.id ?? '';
          return sightingId;
        },
        { timeout: 30_000, interval: 200 },
      )
      .not.toBe('');
    const made = await postJson(`${server.url}/api/corrections`, { sighting_id: sightingId });
    expect(made.status).toBe(200);

    // A new version at the next check (If-None-Match of the old one is not a 304); the files keep theirs.
    const after = await listed(v1);
    const v2 = after.body.version as string;
    expect(v2).not.toBe(v1);
    expect(after.etag).toBe(`"${v2}"`);
    expect(after.body.models_version).toBe(v1);
    expect(after.body.corrections).toMatchObject({ available: true, count: made.body.recognizers.length });
    const lbphFile = await fetch(`${server.url}/api/models/trained/lbph`, { headers: { 'if-none-match': `"${v1}"` } });
    expect(lbphFile.status).toBe(304);
    expect((await index(v2)).status).toBe(304);

    // Served: the same template the server applies, for that person only.
    const res = await correctionsFile();
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe(`"${v2}"`);
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBe(after.body.corrections.bytes);
    const file = decodeCorrectionsFile(text);
    expect(file.version).toBe(v2);
    expect([...file.negatives.lbph.keys()]).toEqual([named]);
    const [row] = await server.service.ctx.db.query<{ feature: Uint8Array }>(
      "SELECT feature FROM corrections WHERE label = $1 AND recognizer = 'lbph'",
      [named],
    );
    expect(file.negatives.lbph.get(named)).toEqual([featureFrom(new Uint8Array(row.feature))]);
    expect(file.negatives.embedding.size).toBe(made.body.recognizers.includes('embedding') ? 1 : 0);
    expect((await correctionsFile(v2)).status).toBe(304);

    // The person kept out of the kiosk gallery: their corrections go with their templates.
    expect((await send(`${server.url}/api/people/${named}`, 'PUT', { kiosk: false })).status).toBe(200);
    const excluded = await listed(v2);
    expect(excluded.body.labels).toEqual([other]);
    expect(excluded.body.corrections).toMatchObject({ available: false, count: 0 });
    expect(decodeCorrectionsFile(await (await correctionsFile()).text()).negatives.lbph.size).toBe(0);
    expect((await send(`${server.url}/api/people/${named}`, 'PUT', { kiosk: true })).status).toBe(200);
    expect((await listed()).body.version).toBe(v2);

    // Deleted: the files' version again, at the next check.
    expect((await send(`${server.url}/api/corrections/${made.body.id}`, 'DELETE')).status).toBe(200);
    const deleted = await listed(v2);
    expect(deleted.body).toMatchObject({ version: v1, models_version: v1, corrections: { available: false, count: 0 } });
  });
});
