/**
 * #36 1 "these two are different people", over real HTTP on 127.0.0.1 under AUTH_MODE=oidc (an issuer double): a
 * reviewer marks a face of a group as not the same person as the others (it leaves the group), or two faces as two
 * people; the pairs are kept in the database, so the grouping never puts them in one group again, also when it
 * clusters again as faces arrive; an assign of both to one person is refused; each mark is a review action with its
 * actor, in the audit log, and undone like the others (the faces are grouped as before). Synthetic descriptors: one
 * stranger's faces close together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descriptorBytes } from '../../server/sightings/sighting-store.js';
import { startIssuer, type IssuerDouble } from '../helpers/oidc-issuer.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let issuer: IssuerDouble;
let server: TestServer;
let admin: string;
let user: string;

async function call(p: string, token: string, json?: unknown, method?: string) {
  const headers = new Headers({ authorization: `Bearer ${token}` });
  if (json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(`${server.url}/api${p}`, {
    method: method ?? (json === undefined ? 'GET' : 'POST'),
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const get = (p: string) => call(p, admin);
const post = (p: string, json: unknown, token = admin) => call(p, token, json);

beforeAll(async () => {
  issuer = await startIssuer();
  server = await startTestServer({
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: issuer.issuer,
    OIDC_JWKS_COOLDOWN_MS: '0',
  });
  admin = await issuer.token({ roles: ['biometric-admin'], username: 'root' });
  user = await issuer.token({ roles: ['biometric-user'], username: 'alice' });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await issuer?.close();
});

let seq = 0;
/** An unknown face, one picture each, its descriptor `spread` (a share of the grouping limit) from a stranger's centre. */
async function addFace(limit: number, spread = 0.3): Promise<string> {
  const k = seq++;
  const id = `ap-${String(k).padStart(3, '0')}`;
  // Unit vectors e0 * cos + e(k+1) * sin: every two of them sqrt(2) * sin apart.
  const sin = (spread * limit) / Math.SQRT2;
  const d = new Float32Array(128);
  d[0] = Math.sqrt(1 - sin * sin);
  d[1 + k] = sin;
  const at = new Date(Date.now() - 600_000 + k * 1000);
  await server.service.ctx.db.query(
    `INSERT INTO sightings (id, seen_at, source, recognizer, box, crop, crop_bytes, descriptor)
     VALUES ($1, $2, 'camera', 'embedding', $3, $4, 0, $5)`,
    [id, at, JSON.stringify({ x: 1, y: 1, w: 60, h: 60 }), `${at.toISOString().slice(0, 10)}/${id}.jpg`, descriptorBytes(d)],
  );
  return id;
}

/** The group of every reviewable face, by GET /api/review/groups and GET /api/sightings?group=. */
async function groupOf(): Promise<Map<string, string>> {
  const res = await get('/review/groups?limit=200');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const out = new Map<string, string>();
  for (const g of res.body.groups as { id: string }[]) {
    const members = await get(`/sightings?group=${g.id}&limit=200`);
    for (const s of members.body.sightings as { id: string }[]) out.set(s.id, g.id);
  }
  return out;
}

describe('these two are different people', () => {
  let limit: number;
  let a: string;
  let b: string;
  let c: string;
  let e: string;
  let splitAction: string;
  let pairAction: string;

  it('splits a face out of its group, and the grouping keeps it apart as faces arrive', async () => {
    limit = (await get('/review/groups')).body.max_distance;
    [a, b, c] = [await addFace(limit), await addFace(limit), await addFace(limit)];
    const before = await groupOf();
    const group = before.get(a) as string;
    expect([before.get(b), before.get(c)]).toEqual([group, group]);

    const res = await post('/review/apart', { sighting_ids: [c], group_id: group });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ action_id: expect.any(String), pairs: 2, sighting_ids: [c] });
    splitAction = res.body.action_id;
    const after = await groupOf();
    expect(after.get(a)).toBe(group);
    expect(after.get(b)).toBe(group);
    expect(after.get(c)).not.toBe(group);
    expect(after.get(c)).toBeDefined();

    // A new face makes the grouping cluster every face again: the stored pairs still keep c apart.
    e = await addFace(limit);
    const again = await groupOf();
    expect(again.get(e)).toBe(group);
    expect(again.get(c)).not.toBe(group);
    const rows = await server.service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM review_apart WHERE action_id = $1', [
      splitAction,
    ]);
    expect(rows[0].n).toBe(2);
  });

  it('marks two faces as two people: never one group, never assigned to one person', async () => {
    const res = await post('/review/apart', { sighting_ids: [a, e] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ pairs: 1, sighting_ids: [a, e] });
    pairAction = res.body.action_id;
    const groups = await groupOf();
    expect(groups.get(a)).not.toBe(groups.get(e));

    const both = await post('/review/assign', { sighting_ids: [a, e], display_name: 'One Stranger' });
    expect(both.status).toBe(409);
    expect(both.body.error.code).toBe('different_people');
    expect(both.body.error.message).toContain(a);
  });

  it('keeps the mark as a review action with its actor, in the audit log', async () => {
    const actions = (await get('/review/actions?limit=10')).body.actions as any[];
    expect(actions.find((x) => x.id === pairAction)).toMatchObject({
      kind: 'apart',
      actor: 'root',
      sighting_ids: [a, e],
      undoable: true,
    });
    const audit = (await get('/audit?action=review&limit=50')).body.entries as any[];
    const mine = audit.filter((x) => x.detail.endpoint === 'reviewApart');
    expect(mine.length).toBe(2);
    expect(mine[0]).toMatchObject({ actor: 'root', outcome: 'ok' });
  });

  it('refuses what it cannot mark, with clear errors, and leaves the groups as they were', async () => {
    const groups = await groupOf();
    const one = await post('/review/apart', { sighting_ids: [a] });
    expect(one.status).toBe(400);
    expect(one.body.error.code).toBe('bad_request');
    expect(one.body.error.message).toMatch(/two faces|group_id/);
    const unknown = await post('/review/apart', { sighting_ids: [a, 'nobody-here'] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('nobody-here');
    const noGroup = await post('/review/apart', { sighting_ids: [a], group_id: 'g-nothing' });
    expect(noGroup.status).toBe(404);
    // A dismissed face is out of review: nothing to tell apart.
    const gone = await addFace(limit, 0.3);
    await post('/review/dismiss', { sighting_ids: [gone] });
    const dismissed = await post('/review/apart', { sighting_ids: [a, gone] });
    expect(dismissed.status).toBe(409);
    expect(dismissed.body.error.code).toBe('not_in_review');
    expect(dismissed.body.error.message).toContain(gone);
    // Only an administrator may.
    const plain = await post('/review/apart', { sighting_ids: [a, b] }, user);
    expect(plain.status).toBe(403);
    expect(await groupOf()).toEqual(groups);
  });

  it('is undone like any review action: the faces are grouped together again', async () => {
    for (const id of [pairAction, splitAction]) {
      const undo = await post(`/review/actions/${id}/undo`, {});
      expect(undo.status, JSON.stringify(undo.body)).toBe(200);
      expect(undo.body.kind).toBe('apart');
    }
    const groups = await groupOf();
    expect(new Set([a, b, c, e].map((id) => groups.get(id))).size).toBe(1);
    const again = await post(`/review/actions/${splitAction}/undo`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('already_undone');
    const rows = await server.service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM review_apart');
    expect(rows[0].n).toBe(0);
  });

  it('forgets the pairs of a face deleted since, at the next grouping', async () => {
    const [x, y] = [await addFace(limit), await addFace(limit)];
    expect((await post('/review/apart', { sighting_ids: [x, y] })).status).toBe(200);
    const del = await call(`/sightings/${x}`, admin, undefined, 'DELETE');
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    await addFace(limit);
    await groupOf();
    const rows = await server.service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM review_apart WHERE a = $1 OR b = $1', [
      x,
    ]);
    expect(rows[0].n).toBe(0);
  });
});
