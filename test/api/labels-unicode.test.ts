/**
 * Labels and Unicode over real HTTP (issue #16 item 4): one name reaches one folder whatever its normalisation
 * form or case, and listing, training and deleting see it; invisible and bidi-control labels are refused; a
 * folder stored under the earlier naming (not NFC after lower-casing) is merged into its label at start.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

const ENV = { EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', REMOTE_DETECTOR_ENABLED: 'false' };
let server: TestServer | undefined;

const upload = async (label: string, bytes: Buffer) => postJson(`${server!.url}/api/images`, { label, image: base64(bytes) });
const path_ = (label: string) => `${server!.url}/api/images/${encodeURIComponent(label)}`;

describe('labels: one name, one folder', () => {
  beforeAll(async () => {
    server = await startTestServer(ENV);
  });
  afterAll(async () => {
    await server?.close();
    server = undefined;
  });
  afterEach(async () => {
    for (const label of (await getJson(`${server!.url}/api/labels`)).body.labels) await getJson(path_(label), { method: 'DELETE' });
  });

  it('stores "T\\u0308" (T + combining diaeresis) under the NFC label ẗ, which listing, training and DELETE see', async () => {
    const grace = await photo('grace');
    const first = await upload('T\u0308', grace);
    expect(first.status).toBe(200);
    expect(first.body.label).toBe('\u1e97');
    // Every spelling of the name is the same label: decomposed, precomposed, upper and lower case.
    for (const spelling of ['t\u0308', '\u1e97', 'T\u0308']) {
      expect((await upload(spelling, grace)).body.label).toBe('\u1e97');
    }
    expect(await fs.readdir(path.join(server!.dataDir, 'images'))).toEqual(['\u1e97']);
    const labels = await getJson(`${server!.url}/api/labels`);
    expect(labels.body.labels).toEqual(['\u1e97']);
    expect(labels.body.details[0].images).toBe(4);
    expect((await getJson(path_('T\u0308'))).body.count).toBe(4);
    const trained = await postJson(`${server!.url}/api/train`, {});
    expect(trained.status).toBe(200);
    expect(trained.body).toMatchObject({ labels: ['\u1e97'], images_total: 4 });
    const deleted = await getJson(path_('t\u0308'), { method: 'DELETE' });
    expect(deleted.body).toMatchObject({ label: '\u1e97', deleted: 4, retrain_needed: false, removed: { images: 4 } });
    expect((await getJson(`${server!.url}/api/labels`)).body.labels).toEqual([]);
  });

  it('makes case variants one label (Anna, ANNA, anna; STRAẞE and Straße) and keeps ß (no case folding to ss)', async () => {
    const grace = await photo('grace');
    for (const name of ['Anna', 'ANNA', 'anna']) expect((await upload(name, grace)).body.label).toBe('anna');
    expect((await upload('STRAẞE', grace)).body.label).toBe('straße');
    expect((await upload('Straße', grace)).body.label).toBe('straße');
    expect((await upload('STRASSE', grace)).body.label).toBe('strasse');
    const { body } = await getJson(`${server!.url}/api/labels`);
    expect(body.details).toEqual([
      expect.objectContaining({ label: 'anna', images: 3, trained: false }),
      expect.objectContaining({ label: 'strasse', images: 1, trained: false }),
      expect.objectContaining({ label: 'straße', images: 2, trained: false }),
    ]);
  });

  it.each([
    ['a zero-width space', '\u200b', 'visible'],
    ['zero-width joiners and a variation selector', '\u200d\u200c\ufe0f', 'visible'],
    ['a Hangul filler', '\u3164', 'visible'],
    ['a lone combining mark', '\u0301', 'visible'],
    ['a right-to-left override', 'ann\u202ea', 'bidirectional'],
    ['a left-to-right mark', '\u200eanna', 'bidirectional'],
    ['an Arabic letter mark', 'anna\u061c', 'bidirectional'],
    ['a first-strong isolate', 'an\u2068na\u2069', 'bidirectional'],
    ['half a surrogate pair', 'anna\ud800', 'valid Unicode'],
    // #28: would be stored beside "ab", looking the same.
    ['a zero-width joiner inside a name', 'a\u200db', 'must not contain invisible or format characters'],
    ['a tag character inside a name', 'a\u{e0041}b', 'must not contain invisible or format characters'],
    // #35 9: blank and struck-through look-alikes of "alice".
    ['a blank Braille pattern after a name', 'alice\u2800', 'blank'],
    ['a combining long stroke overlay', 'a\u0336lice', 'overlay'],
    ['a combining enclosing circle', 'a\u20ddlice', 'overlay'],
    // #35 10: what a decoder makes of bytes that are not UTF-8.
    ['a replacement character', 'anna\ufffd', 'valid Unicode'],
  ])('refuses a label of %s with 400 invalid_label, storing nothing', async (_what, label, reason) => {
    const res = await upload(label, await photo('grace'));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_label', message: expect.stringContaining(reason) });
    expect(await fs.readdir(path.join(server!.dataDir, 'images'))).toEqual([]);
  });
});

// #35 10: multipart text parts are decoded with U+FFFD for bytes that are not UTF-8 (a lone surrogate's encoding
// among them); such a label is refused as JSON's "\ud800" is, never stored with the replacement character.
describe('labels that are not UTF-8', () => {
  beforeAll(async () => {
    server = await startTestServer(ENV);
  });
  afterAll(async () => {
    await server?.close();
    server = undefined;
  });

  const multipart = (labelBytes: Buffer, image: Buffer) => {
    const boundary = 'lookout-test-boundary-35';
    return {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: Buffer.concat([
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="label"\r\n\r\n`),
        labelBytes,
        Buffer.from(
          `\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.jpg"\r\ncontent-type: image/jpeg\r\n\r\n`,
        ),
        image,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]),
    };
  };

  it.each([
    ['an encoded lone surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
    ['a stray continuation byte', [0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
  ])('refuses a multipart label with %s with 400 invalid_label, storing nothing', async (_what, bad) => {
    const res = await getJson(`${server!.url}/api/images`, {
      method: 'POST',
      ...multipart(Buffer.concat([Buffer.from('anna'), Buffer.from(bad)]), await photo('grace')),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_label', message: expect.stringContaining('valid Unicode') });
    expect(await fs.readdir(path.join(server!.dataDir, 'images'))).toEqual([]);
  });

  it('refuses a JSON body whose label holds bytes that are not UTF-8, as it refuses "\\ud800"', async () => {
    const image = base64(await photo('grace'));
    for (const body of [
      Buffer.concat([Buffer.from('{"label":"anna'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(`","image":"${image}"}`)]),
      Buffer.from(`{"label":"anna\\ud800","image":"${image}"}`),
    ]) {
      const res = await getJson(`${server!.url}/api/images`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_label', message: expect.stringContaining('valid Unicode') });
    }
    expect(await fs.readdir(path.join(server!.dataDir, 'images'))).toEqual([]);
  });

  it('still stores a multipart label in valid UTF-8 (é as C3 A9)', async () => {
    const res = await getJson(`${server!.url}/api/images`, {
      method: 'POST',
      ...multipart(Buffer.from([0x72, 0x65, 0x6e, 0xc3, 0xa9, 0x65]), await photo('grace')),
    });
    expect(res.status).toBe(200);
    expect(res.body.label).toBe('renée');
  });
});

// #35 9: a new label that looks like an existing person's (its UTS #39 confusable skeleton is theirs) is refused.
describe('look-alike labels', () => {
  beforeAll(async () => {
    server = await startTestServer(ENV);
  });
  afterAll(async () => {
    await server?.close();
    server = undefined;
  });
  afterEach(async () => {
    for (const label of (await getJson(`${server!.url}/api/labels`)).body.labels) await getJson(path_(label), { method: 'DELETE' });
  });

  it.each([
    ['a Cyrillic а', '\u0430lice'],
    ['a fullwidth ａ', '\uff41lice'],
    ['a Greek ο for the o of bob', 'b\u03bfb'],
  ])('refuses %s beside the existing alice/bob with 409 label_confusable naming it, storing nothing', async (_what, label) => {
    const grace = await photo('grace');
    expect((await upload('alice', grace)).status).toBe(200);
    expect((await upload('bob', grace)).status).toBe(200);
    const before = await fs.readdir(path.join(server!.dataDir, 'images'));
    const res = await upload(label, grace);
    expect(res.status).toBe(409);
    const existing = label.endsWith('lice') ? 'alice' : 'bob';
    expect(res.body.error).toMatchObject({ code: 'label_confusable', message: expect.stringContaining(`"${existing}"`) });
    expect(await fs.readdir(path.join(server!.dataDir, 'images'))).toEqual(before);
    // The real one still takes images, in any case.
    expect((await upload(existing.toUpperCase(), grace)).status).toBe(200);
  });

  it('refuses 0 for o once bob exists (labels are lower-case, so the skeleton is compared in lower case)', async () => {
    const grace = await photo('grace');
    expect((await upload('bob', grace)).status).toBe(200);
    const res = await upload('B0B', grace);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('label_confusable');
  });

  it('creates one of two look-alikes uploaded at the same time, never both', async () => {
    const grace = await photo('grace');
    const answers = await Promise.all(['alice', '\u0430lice', '\uff41lice', 'alice', '\u0430lice'].map((l) => upload(l, grace)));
    const created = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.label));
    expect(created.size).toBe(1);
    for (const a of answers) if (a.status !== 200) expect(a.body.error.code).toBe('label_confusable');
    expect(await fs.readdir(path.join(server!.dataDir, 'images'))).toEqual([...created]);
  });
});

describe('folders stored before labels were NFC after lower-casing', () => {
  let dataDir: string;
  afterAll(async () => {
    await server?.close();
    server = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('merges them into their label at start: listed, trained and deleted with it, no image lost', async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-legacy-labels-'));
    const grace = await photo('grace');
    // What the earlier rules made of "T\u0308" (t + U+0308), and of "Zoe\u0308" typed on a decomposing keyboard.
    await fs.mkdir(path.join(dataDir, 'images', 't\u0308'), { recursive: true });
    await fs.writeFile(path.join(dataDir, 'images', 't\u0308', '1000-aaaaaaaa.jpg'), grace);
    await fs.writeFile(path.join(dataDir, 'images', 't\u0308', '1001-bbbbbbbb.jpg'), grace);
    await fs.mkdir(path.join(dataDir, 'images', 'zoe\u0308'), { recursive: true });
    await fs.writeFile(path.join(dataDir, 'images', 'zoe\u0308', '1000-aaaaaaaa.jpg'), grace);
    // The label already has an image of the same file name: both are kept.
    await fs.mkdir(path.join(dataDir, 'images', 'zoë'), { recursive: true });
    await fs.writeFile(path.join(dataDir, 'images', 'zoë', '1000-aaaaaaaa.jpg'), grace);
    // Not a spelling of a label (upper case was never stored): left alone.
    await fs.mkdir(path.join(dataDir, 'images', 'Not A Label'), { recursive: true });
    await fs.writeFile(path.join(dataDir, 'images', 'Not A Label', 'x.jpg'), grace);

    server = await startTestServer(ENV, dataDir);
    expect((await fs.readdir(path.join(dataDir, 'images'))).sort()).toEqual(['Not A Label', 'zoë', '\u1e97']);
    const { body } = await getJson(`${server!.url}/api/labels`);
    expect(body.details).toEqual([
      expect.objectContaining({ label: 'zoë', images: 2, trained: false }),
      expect.objectContaining({ label: '\u1e97', images: 2, trained: false }),
    ]);
    const trained = await postJson(`${server!.url}/api/train`, {});
    expect(trained.body).toMatchObject({ images_total: 4, total_labels: 2 });
    expect((await getJson(path_('ZOË'), { method: 'DELETE' })).body).toMatchObject({ label: 'zoë', deleted: 2 });
    expect((await getJson(path_('T\u0308'), { method: 'DELETE' })).body).toMatchObject({ label: '\u1e97', deleted: 2 });
    expect(await fs.readdir(path.join(dataDir, 'images'))).toEqual(['Not A Label']);
  });
});
