/**
 * Camera and device names over real HTTP (#35 item 11): the `camera` of POST /api/recognize (kept with the
 * sightings) and the `source` of POST /api/results (the device's name, kept with the result) follow rules like a
 * label's: NFC, trimmed, at most 64 characters, something visible, and no control, bidirectional, invisible or
 * format character, no markup and nothing a decoder made of bytes that were not UTF-8. Refused with 400 and
 * nothing stored; a name within the rules is stored in NFC.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ EMBEDDING_ENABLED: 'false', SIGHTINGS_INTERVAL_S: '0' });
});
afterAll(async () => {
  await server?.close();
});

const sightings = async () => {
  await server.service.ctx.sightingRecorder.idle();
  return (await getJson(`${server.url}/api/sightings`)).body;
};

const result = (source: string) => ({
  id: randomUUID(),
  kind: 'recognition',
  captured_at: new Date().toISOString(),
  source,
  engine: 'browser',
  faces: [],
});

const BAD: [string, string, string][] = [
  ['a right-to-left override', 'door\u202egate', 'bidirectional'],
  ['a newline', 'door\nAdmin: alice', 'control'],
  ['a tab', 'door\tgate', 'control'],
  ['HTML', '<img src=x onerror=alert(1)>', '< or >'],
  ['a zero-width space', 'do\u200bor', 'invisible'],
  ['only white space', '   ', 'empty'],
  ['a blank Braille pattern only', '\u2800', 'visible'],
  ['65 characters', 'c'.repeat(65), '64'],
  ['a replacement character', 'door\ufffd', 'valid Unicode'],
  ['half a surrogate pair', 'door\ud800', 'valid Unicode'],
];

describe('camera names', () => {
  it.each(BAD)('refuses a recognize camera with %s: 400 naming the field, no sighting kept', async (_what, camera, reason) => {
    const before = (await sightings()).total_matched;
    const res = await postJson(`${server.url}/api/recognize`, { image: base64(await photo('grace')), source: 'camera', camera });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    expect(res.body.error.message).toContain('"camera"');
    expect(res.body.error.message).toContain(reason);
    expect((await sightings()).total_matched).toBe(before);
  });

  it.each(BAD)('refuses a result source (device name) with %s: 400 naming the field, nothing stored', async (_what, source, reason) => {
    const res = await postJson(`${server.url}/api/results`, { results: [result(source)] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    expect(res.body.error.message).toContain('"results.0.source"');
    expect(res.body.error.message).toContain(reason);
    expect((await getJson(`${server.url}/api/results`)).body.total).toBe(0);
  });

  it('keeps a name within the rules trimmed and in NFC (e + U+0301 is é), for sightings and results alike', async () => {
    const res = await postJson(`${server.url}/api/recognize`, {
      image: base64(await photo('grace')),
      source: 'camera',
      camera: '  Cafe\u0301 door ',
    });
    expect(res.status).toBe(200);
    expect((await sightings()).sightings.map((s: { camera: string }) => s.camera)).toContain('Caf\u00e9 door');
    expect((await postJson(`${server.url}/api/results`, { results: [result(' Cafe\u0301 kiosk ')] })).status).toBe(200);
    expect((await getJson(`${server.url}/api/results`)).body.results[0].source).toBe('Caf\u00e9 kiosk');
  });
});
