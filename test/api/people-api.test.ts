/**
 * #36 2 over real HTTP on 127.0.0.1 under AUTH_MODE=oidc (an issuer double): a person's page, rename (the label stays
 * the id; a name that is another person's, or looks like it, is refused), cover photo, merge (photos, sightings and
 * corrections go to the one who stays, undo brings everything back), move photos to a new person and back, each in
 * the audit log with its actor; only an administrator may; and search by face on real face photos: the same person's
 * sightings come first, nearest first, with time and source, rate-limited.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descriptorBytes } from '../../server/sightings/sighting-store.js';
import { base64, photo, rescaled, type Person } from '../helpers/faces.js';
import { startIssuer, type IssuerDouble } from '../helpers/oidc-issuer.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

// Searches a caller may make per window here (VERIFY_RATE_PER_VERIFIER); the tests below make fewer, then one too many.
const SEARCH_LIMIT = 6;
const ENV = {
  WORKERS: '1',
  OBJECT_DETECTION_ENABLED: 'false',
  CHAT_ENABLED: 'false',
  VERIFY_RATE_PER_VERIFIER: String(SEARCH_LIMIT),
  VERIFY_RATE_WINDOW_S: '600',
};

let issuer: IssuerDouble;
let server: TestServer;
let admin: string;
let user: string;

async function call(p: string, token: string | null, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await fetch(`${server.url}/api${p}`, { ...init, body, headers });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // An image.
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
const get = (p: string, token = admin) => call(p, token);
const post = (p: string, json: unknown, token = admin) => call(p, token, { method: 'POST', json });
const put = (p: string, json: unknown, token = admin) => call(p, token, { method: 'PUT', json });

async function enroll(label: string, who: Person, scales: number[]): Promise<string[]> {
  const names: string[] = [];
  for (const scale of scales) {
    const form = new FormData();
    form.set('label', label);
    form.set('file', new Blob([new Uint8Array(await rescaled(who, scale))]), `${who}-${scale}.jpg`);
    const res = await call('/images', admin, { method: 'POST', body: form });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    names.push(res.body.filename);
  }
  return names;
}

let seq = 0;
/** A sighting as the sighting store keeps it, its descriptor computed from a real photo by the running embedding worker. */
async function addSighting(opts: { image: Buffer; label?: string | null; camera?: string; at?: Date }): Promise<string> {
  const ctx = server.service.ctx;
  const sample = await ctx.faces.correctionSample(new Uint8Array(opts.image), (width, height) => ({ x: 0, y: 0, width, height }));
  expect(sample.descriptor).not.toBeNull();
  const id = `ps-${String(seq++).padStart(4, '0')}`;
  const at = opts.at ?? new Date(Date.now() - 3_600_000 + seq * 1000);
  const rel = `${at.toISOString().slice(0, 10)}/${id}.jpg`;
  const crop = await sharp(opts.image).resize({ height: 160 }).jpeg().toBuffer();
  await fs.mkdir(path.join(server.dataDir, 'sightings', path.dirname(rel)), { recursive: true });
  await fs.writeFile(path.join(server.dataDir, 'sightings', rel), crop);
  await ctx.db.query(
    `INSERT INTO sightings (id, seen_at, source, camera, label, recognizer, box, crop, crop_bytes, descriptor)
     VALUES ($1, $2, 'camera', $3, $4, 'embedding', $5, $6, $7, $8)`,
    [
      id,
      at,
      opts.camera ?? 'door',
      opts.label ?? null,
      JSON.stringify({ x: 0, y: 0, w: 80, h: 80 }),
      rel,
      crop.length,
      descriptorBytes(sample.descriptor as Float32Array),
    ],
  );
  return id;
}

async function audit(endpoint: string) {
  const res = await get('/audit?action=person_update&limit=200');
  expect(res.status).toBe(200);
  return (res.body.entries as any[]).filter((e) => e.detail.endpoint === endpoint);
}

beforeAll(async () => {
  issuer = await startIssuer();
  server = await startTestServer({ ...ENV, AUTH_MODE: 'oidc', OIDC_ISSUER: issuer.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
  admin = await issuer.token({ roles: ['biometric-admin'], username: 'root' });
  user = await issuer.token({ roles: ['biometric-user'], username: 'alice' });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await issuer?.close();
});

describe("a person's page, rename and cover", () => {
  let photos: string[];

  it('shows the photos, the cover (the first until one is chosen) and the sightings', async () => {
    photos = await enroll('Grace Hopper', 'grace', [1, 0.8]);
    await addSighting({ image: await photo('grace'), label: 'grace-hopper' });
    const page = await get('/people/grace-hopper');
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body).toMatchObject({ label: 'grace-hopper', display_name: 'Grace Hopper', cover: photos[0], cover_chosen: false });
    expect(page.body.photos.map((p: any) => p.filename).sort()).toEqual([...photos].sort());
    expect(page.body.photos[0]).toMatchObject({ source: 'upload', url: `/api/images/grace-hopper/${page.body.photos[0].filename}` });
    expect(page.body.sightings).toHaveLength(1);
    expect(page.body.sightings[0]).toMatchObject({ source: 'camera', camera: 'door', how: 'recognised' });
    expect((await get('/people/nobody-here')).body.error.code).toBe('label_not_found');
  });

  it("is an administrator's: a plain user is refused", async () => {
    expect((await get('/people/grace-hopper', user)).status).toBe(403);
    expect((await put('/people/grace-hopper/name', { display_name: 'X' }, user)).status).toBe(403);
    expect((await post('/people/grace-hopper/merge', { into: 'x' }, user)).status).toBe(403);
    expect((await post('/sightings/search', { sighting_id: 'x' }, user)).status).toBe(403);
    expect((await call('/people/grace-hopper', null)).status).toBe(401);
  });

  it('renames: the display name changes, the label stays; undo brings the old name back', async () => {
    const res = await put('/people/grace-hopper/name', { display_name: 'Rear Admiral Grace Hopper' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'rename',
      label: 'grace-hopper',
      display_name: 'Rear Admiral Grace Hopper',
      retrain_needed: false,
    });
    expect((await get('/people/grace-hopper')).body.display_name).toBe('Rear Admiral Grace Hopper');
    expect((await get('/labels', user)).body.labels).toContain('grace-hopper');
    const undo = await post(`/person-actions/${res.body.action_id}/undo`, {});
    expect(undo.status, JSON.stringify(undo.body)).toBe(200);
    expect(undo.body).toMatchObject({ kind: 'rename', label: 'grace-hopper' });
    expect((await get('/people/grace-hopper')).body.display_name).toBe('Grace Hopper');
    const again = await post(`/person-actions/${res.body.action_id}/undo`, {});
    expect([again.status, again.body.error.code]).toEqual([409, 'already_undone']);
    const rows = await audit('renamePerson');
    expect(rows[0]).toMatchObject({ actor: 'root', actor_kind: 'user', target: 'grace-hopper', outcome: 'ok' });
    expect(rows[0].detail).toMatchObject({ kind: 'rename', action_id: res.body.action_id });
    const undone = (await audit('undoPersonAction')).find((e) => e.outcome === 'ok');
    expect(undone).toMatchObject({ actor: 'root', target: 'grace-hopper' });
    expect(undone.detail).toMatchObject({ kind: 'undo_rename', action_id: res.body.action_id });
  });

  it("refuses a name that is another person's, or looks like it, and one that breaks the label rules", async () => {
    await enroll('Lionel Messi', 'lionel', [1]);
    const same = await put('/people/lionel-messi/name', { display_name: 'GRACE HOPPER' });
    expect([same.status, same.body.error.code]).toEqual([409, 'label_confusable']);
    // Cyrillic а and е in place of the Latin letters.
    const twin = await put('/people/lionel-messi/name', { display_name: 'Grаcе Hopper' });
    expect([twin.status, twin.body.error.code]).toEqual([409, 'label_confusable']);
    const bidi = await put('/people/lionel-messi/name', { display_name: 'Leo\u202e' });
    expect([bidi.status, bidi.body.error.code]).toEqual([400, 'invalid_label']);
    expect((await get('/people/lionel-messi')).body.display_name).toBe('Lionel Messi');
    // Their own name in other letters is fine.
    expect((await put('/people/lionel-messi/name', { display_name: 'Leo Messi' })).status).toBe(200);
  });

  it('sets the cover photo; an unknown photo is a 404; undo goes back to the first', async () => {
    const res = await put('/people/grace-hopper/cover', { filename: photos[1] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await get('/people/grace-hopper')).body).toMatchObject({ cover: photos[1], cover_chosen: true });
    const missing = await put('/people/grace-hopper/cover', { filename: 'nope.jpg' });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
    expect((await post(`/person-actions/${res.body.action_id}/undo`, {})).status).toBe(200);
    expect((await get('/people/grace-hopper')).body).toMatchObject({ cover: photos[0], cover_chosen: false });
    expect((await audit('setPersonCover'))[0]).toMatchObject({ actor: 'root', target: 'grace-hopper' });
  });
});

describe('merge and move photos', () => {
  it('merges a second enrolment into the person who stays: photos, sightings, corrections; undo brings all back', async () => {
    const hers = ((await get('/people/grace-hopper')).body.photos as any[]).map((p) => p.filename);
    const dup = await enroll('G Hopper', 'grace', [0.9, 0.7]);
    const bytes = await Promise.all(
      dup.map(async (f) =>
        (await fetch(`${server.url}/api/images/g-hopper/${f}`, { headers: { authorization: `Bearer ${admin}` } })).arrayBuffer(),
      ),
    );
    const seen = await addSighting({ image: await rescaled('grace', 0.85), label: 'g-hopper', camera: 'hall' });
    await server.service.ctx.db.query(
      `INSERT INTO corrections (id, label, sighting_id, action_id, created_at, actor, recognizer, descriptor_model, feature)
       VALUES ('c-merge-1', 'g-hopper', NULL, NULL, now(), 'root', 'lbph', NULL, '\\x00'::bytea)`,
    );
    await put('/people/g-hopper/cover', { filename: dup[1] });

    const res = await post('/people/g-hopper/merge', { into: 'grace-hopper' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'merge',
      label: 'grace-hopper',
      display_name: 'Grace Hopper',
      moved: { photos: 2, sightings: 1, corrections: 1 },
      retrain_needed: true,
    });
    expect((await get('/people/g-hopper')).body.error.code).toBe('label_not_found');
    const page = (await get('/people/grace-hopper')).body;
    expect(page.photos).toHaveLength(4);
    const movedNames = dup.map((f) => res.body.files[f]);
    expect(page.photos.map((p: any) => p.filename).sort()).toEqual([...hers, ...movedNames].sort());
    // The same bytes, under the one who stays; the metadata (its source, its original name) went along.
    for (const [i, f] of movedNames.entries()) {
      const now = await fetch(`${server.url}/api/images/grace-hopper/${f}`, { headers: { authorization: `Bearer ${admin}` } });
      expect(Buffer.from(await now.arrayBuffer()).equals(Buffer.from(bytes[i]))).toBe(true);
    }
    expect(page.photos.find((p: any) => p.filename === movedNames[0])).toMatchObject({ source: 'upload', original_name: 'grace-0.9.jpg' });
    expect(page.sightings.map((s: any) => s.id)).toContain(seen);
    const [corr] = await server.service.ctx.db.query<{ label: string }>(`SELECT label FROM corrections WHERE id = 'c-merge-1'`);
    expect(corr.label).toBe('grace-hopper');
    expect(await fs.readdir(path.join(server.dataDir, 'images')).then((d) => d.includes('g-hopper'))).toBe(false);
    const rows = await audit('mergePerson');
    expect(rows[0]).toMatchObject({ actor: 'root', target: 'g-hopper', outcome: 'ok' });
    expect(rows[0].detail).toMatchObject({ into: 'grace-hopper', photos: 2, action_id: res.body.action_id });

    const undo = await post(`/person-actions/${res.body.action_id}/undo`, {});
    expect(undo.status, JSON.stringify(undo.body)).toBe(200);
    expect(undo.body).toMatchObject({ kind: 'merge', restored: 2, missing: [], retrain_needed: true });
    const back = (await get('/people/g-hopper')).body;
    expect(back).toMatchObject({ display_name: 'G Hopper', cover: dup[1], cover_chosen: true });
    expect(back.photos.map((p: any) => p.filename).sort()).toEqual([...dup].sort());
    expect(back.sightings.map((s: any) => s.id)).toEqual([seen]);
    expect((await get('/people/grace-hopper')).body.photos.map((p: any) => p.filename).sort()).toEqual([...hers].sort());
    const [corrBack] = await server.service.ctx.db.query<{ label: string }>(`SELECT label FROM corrections WHERE id = 'c-merge-1'`);
    expect(corrBack.label).toBe('g-hopper');
  });

  it('refuses to merge a person into themselves or into nobody', async () => {
    const self = await post('/people/g-hopper/merge', { into: 'G-Hopper' });
    expect([self.status, self.body.error.code]).toEqual([400, 'bad_request']);
    const nobody = await post('/people/g-hopper/merge', { into: 'nobody-at-all' });
    expect([nobody.status, nobody.body.error.code]).toEqual([404, 'label_not_found']);
    expect((await get('/people/g-hopper')).body.photos).toHaveLength(2);
  });

  it("relabels the merged person's stored recognition results (POST /api/results), and undo restores them", async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    const face = (label: string, x: number, extra: object = {}) => ({ x, y: 1, w: 50, h: 50, label, confidence: 70, ...extra });
    const results = [
      {
        id: 'r-merge-1',
        kind: 'recognition',
        captured_at: at,
        source: 'kiosk-1',
        engine: 'browser',
        faces: [face('g-hopper', 1), face('unknown', 60)],
      },
      { id: 'r-merge-2', kind: 'recognition', captured_at: at, source: 'kiosk-1', engine: 'browser', faces: [face('grace-hopper', 1)] },
      // An unknown face whose nearest person was the one merged.
      {
        id: 'r-merge-3',
        kind: 'recognition',
        captured_at: at,
        source: 'kiosk-1',
        engine: 'browser',
        faces: [face('unknown', 1, { candidate: { label: 'g-hopper', confidence: 40, distance: 0.7 } })],
      },
    ];
    const stored = await post('/results', { results });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    const byId = async (label: string) =>
      new Map(((await get(`/results?label=${label}&limit=1000`)).body.results as any[]).map((r) => [r.id, r]));
    const all = async () => new Map(((await get('/results?limit=1000')).body.results as any[]).map((r) => [r.id, r]));

    const res = await post('/people/g-hopper/merge', { into: 'grace-hopper' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await byId('g-hopper')).size).toBe(0);
    const merged = await byId('grace-hopper');
    expect(merged.get('r-merge-1').faces.map((f: any) => f.label)).toEqual(['grace-hopper', 'unknown']);
    expect(merged.get('r-merge-2').faces.map((f: any) => f.label)).toEqual(['grace-hopper']);
    expect((await all()).get('r-merge-3').faces[0]).toMatchObject({ label: 'unknown', candidate: { label: 'grace-hopper' } });

    const undo = await post(`/person-actions/${res.body.action_id}/undo`, {});
    expect(undo.status, JSON.stringify(undo.body)).toBe(200);
    const back = await byId('g-hopper');
    expect([...back.keys()]).toEqual(['r-merge-1']);
    expect(back.get('r-merge-1').faces.map((f: any) => f.label)).toEqual(['g-hopper', 'unknown']);
    expect((await byId('grace-hopper')).has('r-merge-1')).toBe(false);
    expect((await byId('grace-hopper')).get('r-merge-2').faces[0].label).toBe('grace-hopper');
    expect((await all()).get('r-merge-3').faces[0]).toMatchObject({ label: 'unknown', candidate: { label: 'g-hopper' } });
  });

  it('names the one who stays on a result that arrives after the merge still naming the merged person; after undo a late one keeps its name', async () => {
    const face = (label: string, x: number, extra: object = {}) => ({ x, y: 1, w: 50, h: 50, label, confidence: 70, ...extra });
    const crop = await sharp(await rescaled('grace', 0.5))
      .resize({ height: 96 })
      .jpeg({ quality: 70 })
      .toBuffer();
    // A kiosk offline since before the merge, with the old model: its faces (and its crop, a sighting) name g-hopper.
    const late = (id: string) => ({
      id,
      kind: 'recognition',
      captured_at: new Date().toISOString(),
      source: 'kiosk-2',
      engine: 'browser',
      faces: [
        face('g-hopper', 1, { crop: `data:image/jpeg;base64,${crop.toString('base64')}` }),
        face('unknown', 60, { candidate: { label: 'g-hopper', confidence: 40, distance: 0.7 } }),
      ],
    });
    const stored = async (id: string) => ((await get('/results?limit=1000')).body.results as any[]).find((r) => r.id === id);
    const sightingLabel = async (id: string) => {
      await expect.poll(async () => (await get(`/sightings/${id}`)).status, { timeout: 30_000 }).toBe(200);
      return (await get(`/sightings/${id}`)).body.label;
    };

    const merge = await post('/people/g-hopper/merge', { into: 'grace-hopper' });
    expect(merge.status, JSON.stringify(merge.body)).toBe(200);
    const sent = await post('/results', { results: [late('r-late-1')] });
    expect([sent.status, sent.body.accepted]).toEqual([200, 1]);
    const renamed = await stored('r-late-1');
    expect(renamed.faces[0].label).toBe('grace-hopper');
    expect(renamed.faces[1]).toMatchObject({ label: 'unknown', candidate: { label: 'grace-hopper' } });
    expect((await get('/results?label=g-hopper&limit=1000')).body.results.map((r: any) => r.id)).not.toContain('r-late-1');
    expect((await get('/results?label=grace-hopper&limit=1000')).body.results.map((r: any) => r.id)).toContain('r-late-1');
    expect(await sightingLabel('r-late-1-0')).toBe('grace-hopper');
    // "Not this person" sent with the old name (a browser that has not heard of the merge): about the one who stays.
    const corrected = await post('/corrections', { sighting_id: 'r-late-1-0', label: 'g-hopper' });
    expect([corrected.status, corrected.body.label], JSON.stringify(corrected.body)).toEqual([200, 'grace-hopper']);
    const correctionsOf = async (label: string) => ((await get(`/corrections?label=${label}`)).body.corrections as any[]).map((c) => c.id);
    expect(await correctionsOf('grace-hopper')).toContain(corrected.body.id);

    // Undo: the merged person is back, and so are the names the late result came with.
    const undo = await post(`/person-actions/${merge.body.action_id}/undo`, {});
    expect(undo.status, JSON.stringify(undo.body)).toBe(200);
    const back = await stored('r-late-1');
    expect(back.faces[0].label).toBe('g-hopper');
    expect(back.faces[1].candidate.label).toBe('g-hopper');
    expect((await get('/sightings/r-late-1-0')).body.label).toBe('g-hopper');
    expect(await correctionsOf('g-hopper')).toContain(corrected.body.id);
    expect((await call(`/corrections/${corrected.body.id}`, admin, { method: 'DELETE' })).status).toBe(200);
    // A result naming g-hopper now is theirs: no merge maps it any more.
    expect((await post('/results', { results: [late('r-late-2')] })).body.accepted).toBe(1);
    const own = await stored('r-late-2');
    expect(own.faces[0].label).toBe('g-hopper');
    expect(own.faces[1].candidate.label).toBe('g-hopper');
    expect(await sightingLabel('r-late-2-0')).toBe('g-hopper');
  });

  it('moves chosen photos to a new person; undo moves them back and the new person goes', async () => {
    const dup = ((await get('/people/g-hopper')).body.photos as any[]).map((p) => p.filename);
    const noName = await post('/people/g-hopper/photos/move', { filenames: [dup[0]], to: 'someone-else' });
    expect([noName.status, noName.body.error.code]).toEqual([404, 'label_not_found']);
    const unknown = await post('/people/g-hopper/photos/move', { filenames: ['nope.jpg'], to: 'grace-hopper' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
    const lookalike = await post('/people/g-hopper/photos/move', { filenames: [dup[0]], to: 'grаce-hopper', display_name: 'Grаce' });
    expect([lookalike.status, lookalike.body.error.code]).toEqual([409, 'label_confusable']);

    const res = await post('/people/g-hopper/photos/move', { filenames: [dup[0]], to: 'someone-else', display_name: 'Someone Else' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      kind: 'move',
      label: 'someone-else',
      display_name: 'Someone Else',
      moved: { photos: 1 },
      retrain_needed: true,
    });
    expect((await get('/people/g-hopper')).body.photos.map((p: any) => p.filename)).toEqual([dup[1]]);
    expect((await get('/people/someone-else')).body).toMatchObject({
      display_name: 'Someone Else',
      photos: [{ filename: res.body.files[dup[0]] }],
    });
    expect((await audit('movePhotos'))[0]).toMatchObject({ actor: 'root', target: 'g-hopper' });
    expect((await audit('movePhotos'))[0].detail).toMatchObject({ to: 'someone-else', photos: 1 });

    const undo = await post(`/person-actions/${res.body.action_id}/undo`, {});
    expect(undo.status, JSON.stringify(undo.body)).toBe(200);
    expect((await get('/people/g-hopper')).body.photos.map((p: any) => p.filename).sort()).toEqual([...dup].sort());
    expect((await get('/people/someone-else')).body.error.code).toBe('label_not_found');
  });

  it('keeps every photo when a merge and a move of the same person race', async () => {
    const before = ((await get('/people/g-hopper')).body.photos as any[]).map((p) => p.filename);
    const herCount = (await get('/people/grace-hopper')).body.photos.length;
    const [merge, move] = await Promise.all([
      post('/people/g-hopper/merge', { into: 'grace-hopper' }),
      post('/people/g-hopper/photos/move', { filenames: [before[0]], to: 'lionel-messi' }),
    ]);
    const statuses = [merge.status, move.status];
    expect(statuses).toContain(200);
    const g = await get('/people/g-hopper');
    const grace = (await get('/people/grace-hopper')).body.photos.length;
    const lionel = (await get('/people/lionel-messi')).body.photos.length;
    const left = g.status === 200 ? g.body.photos.length : 0;
    // Two of hers, one of Lionel's (enrolled above): wherever they went, all there, once.
    expect(left + grace + lionel).toBe(before.length + herCount + 1);
  });
});

describe('search by face', () => {
  it("ranks the same person's sightings first, nearest first, with time and source", async () => {
    const graceSeen = [
      await addSighting({ image: await rescaled('grace', 0.9), camera: 'door' }),
      await addSighting({ image: await rescaled('grace', 0.6), camera: 'hall' }),
      await addSighting({
        image: await sharp(await photo('grace'))
          .modulate({ brightness: 1.1 })
          .jpeg()
          .toBuffer(),
        camera: 'yard',
      }),
    ];
    const others = [
      await addSighting({ image: await photo('lionel'), camera: 'door' }),
      await addSighting({ image: await photo('eileen'), camera: 'door' }),
      await addSighting({ image: await rescaled('eileen', 0.8), camera: 'hall' }),
    ];
    const res = await post('/sightings/search', { sighting_id: graceSeen[0], limit: 50 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const ids = res.body.results.map((r: any) => r.sighting_id);
    expect(ids).not.toContain(graceSeen[0]);
    for (const id of graceSeen.slice(1)) expect(ids).toContain(id);
    for (const id of others) expect(ids).not.toContain(id);
    const distances = res.body.results.map((r: any) => r.distance);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    expect(res.body.results[0]).toMatchObject({ source: 'camera', crop_url: `/api/sightings/${ids[0]}/crop` });
    expect(Date.parse(res.body.results[0].seen_at)).toBeGreaterThan(0);
    expect(res.body.searched).toBeGreaterThanOrEqual(6);
    const rows = (await get('/audit?action=sighting_access&limit=20')).body.entries.filter((e: any) => e.detail.endpoint === 'searchFaces');
    expect(rows[0]).toMatchObject({ actor: 'root', target: graceSeen[0] });
  });

  it('takes a stored photo or an uploaded image as the face', async () => {
    const [first] = (await get('/people/lionel-messi')).body.photos;
    const byPhoto = await post('/sightings/search', { label: 'lionel-messi', filename: first.filename });
    expect(byPhoto.status, JSON.stringify(byPhoto.body)).toBe(200);
    expect(byPhoto.body.results.length).toBeGreaterThan(0);
    const [top] = byPhoto.body.results;
    const [row] = await server.service.ctx.db.query<{ camera: string }>('SELECT camera FROM sightings WHERE id = $1', [top.sighting_id]);
    expect(row.camera).toBe('door');
    const byImage = await post('/sightings/search', { image: base64(await rescaled('eileen', 0.7)), limit: 1 });
    expect(byImage.status, JSON.stringify(byImage.body)).toBe(200);
    expect(byImage.body.results).toHaveLength(1);
    const bad = await post('/sightings/search', { sighting_id: 'a', label: 'x', filename: 'y.jpg' });
    expect(bad.status).toBe(400);
    const none = await post('/sightings/search', { sighting_id: 'no-such-sighting' });
    expect([none.status, none.body.error.code]).toEqual([404, 'not_found']);
  });

  it('is rate-limited per caller: past the limit 429 with Retry-After', async () => {
    let last = await post('/sightings/search', { sighting_id: 'no-such-sighting' });
    for (let i = 0; i < SEARCH_LIMIT && last.status !== 429; i++)
      last = await post('/sightings/search', { sighting_id: 'no-such-sighting' });
    expect([last.status, last.body.error.code]).toEqual([429, 'rate_limited']);
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe("a person's deletion", () => {
  it('takes their person actions along (names and file names of theirs, and the undo they allowed)', async () => {
    const db = server.service.ctx.db;
    const count = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM person_actions WHERE label = 'someone-else' OR other_label = 'someone-else'`,
        )
      )[0].n;
    const [photo] = (await get('/people/lionel-messi')).body.photos;
    const moved = await post('/people/lionel-messi/photos/move', {
      filenames: [photo.filename],
      to: 'someone-else',
      display_name: 'Someone Else',
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await count()).toBeGreaterThan(0);
    expect((await call('/images/someone-else', admin, { method: 'DELETE' })).status).toBe(200);
    expect(await count()).toBe(0);
    const undo = await post(`/person-actions/${moved.body.action_id}/undo`, {});
    expect([undo.status, undo.body.error.code]).toEqual([404, 'not_found']);
  });

  it('is the deletion of every label merged into them: a late result naming one is not stored', async () => {
    await enroll('Ada Dup', 'grace', [0.8]);
    await enroll('Ada Main', 'grace', [0.75]);
    expect((await post('/people/ada-dup/merge', { into: 'ada-main' })).status).toBe(200);
    expect((await call('/images/ada-main', admin, { method: 'DELETE' })).status).toBe(200);
    const late = {
      id: 'r-after-deletion',
      kind: 'recognition',
      captured_at: new Date(Date.now() - 60_000).toISOString(),
      source: 'kiosk-3',
      engine: 'browser',
      faces: [{ x: 1, y: 1, w: 50, h: 50, label: 'ada-dup', confidence: 70 }],
    };
    const sent = await post('/results', { results: [late] });
    expect([sent.status, sent.body.accepted]).toEqual([200, 0]);
    expect((await get('/deletions')).body.deleted.map((d: any) => d.label)).toEqual(expect.arrayContaining(['ada-main', 'ada-dup']));
  });
});
