/**
 * The review API over real HTTP (issue #26, the Faces page's server side): unknown faces grouped largest first, a
 * group assigned to a new person (its crops become training images, with retrain_needed), undo until the next
 * training, dismiss and its undo. Sightings are put in as the sighting store keeps them (a row in the server's
 * database, its crop a file in DATA_DIR/sightings/<day>/<id>.jpg), with synthetic descriptors: one stranger's faces
 * close together, another's far from them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descriptorBytes } from '../../server/sightings/sighting-store.js';
import { photo } from '../helpers/faces.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

const random = seededRandom(1426);
const person = () => Float32Array.from({ length: 128 }, () => (random() - 0.5) * 0.3);
const seenAgain = (base: Float32Array) => base.map((v) => v + (random() - 0.5) * 0.045);

let server: TestServer;
let face: Buffer;
let seq = 0;

beforeAll(async () => {
  server = await startTestServer({ EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  // A face crop as the sighting store keeps them: at most 160 px on its longest side.
  face = await sharp(await photo('grace'))
    .resize({ height: 160 })
    .jpeg({ quality: 90 })
    .toBuffer();
});
afterAll(async () => {
  await server?.close();
});

async function addSighting(at: Date, descriptor: Float32Array | null, source = 'camera'): Promise<string> {
  const id = `it-${String(seq++).padStart(4, '0')}`;
  const rel = `${at.toISOString().slice(0, 10)}/${id}.jpg`;
  const file = path.join(server.dataDir, 'sightings', rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, face);
  await server.service.ctx.db.query(
    `INSERT INTO sightings (id, seen_at, source, recognizer, box, crop, crop_bytes, descriptor)
     VALUES ($1, $2, $3, 'embedding', $4, $5, $6, $7)`,
    [id, at, source, JSON.stringify({ x: 10, y: 10, w: 80, h: 80 }), rel, face.length, descriptor ? descriptorBytes(descriptor) : null],
  );
  return id;
}

const api = (p: string) => `${server.url}/api${p}`;

describe('the review API', () => {
  let stranger: string[];
  let groupId: string;
  let otherGroup: string;

  it('groups the unknown faces: one stranger seen ten times is one group, largest first', async () => {
    const a = person();
    const b = person();
    const base = Date.now() - 3_600_000;
    stranger = [];
    for (let i = 0; i < 10; i++) stranger.push(await addSighting(new Date(base + i * 60_000), seenAgain(a)));
    await addSighting(new Date(base + 30_000), seenAgain(b), 'page');
    await addSighting(new Date(base + 31_000), seenAgain(b), 'api');

    const { status, body } = await getJson(api('/review/groups'));
    expect(status).toBe(200);
    expect(body.total).toBe(2);
    expect(body.groups.map((g: { count: number }) => g.count)).toEqual([10, 2]);
    expect(body.groups[0]).toMatchObject({ sources: ['camera'], last_seen: new Date(base + 9 * 60_000).toISOString() });
    expect(body.groups[0].sample_ids).toEqual([...stranger].reverse().slice(0, 8));
    expect(body.max_distance).toBeGreaterThan(0);
    [groupId, otherGroup] = body.groups.map((g: { id: string }) => g.id);
  });

  it('refuses what it cannot do with a clear 4xx', async () => {
    const both = await postJson(api('/review/assign'), { group_id: groupId, sighting_ids: [stranger[0]], display_name: 'X' });
    expect(both.status).toBe(400);
    expect(both.body.error.message).toContain('either sighting_ids or group_id');
    expect((await postJson(api('/review/assign'), { group_id: groupId })).status).toBe(400);
    const noGroup = await postJson(api('/review/assign'), { group_id: 'g-none', display_name: 'X' });
    expect([noGroup.status, noGroup.body.error.code]).toEqual([404, 'not_found']);
    const noPerson = await postJson(api('/review/assign'), { group_id: groupId, label: 'nobody' });
    expect([noPerson.status, noPerson.body.error.code]).toEqual([404, 'label_not_found']);
    const noAction = await postJson(api('/review/actions/a-none/undo'), {});
    expect([noAction.status, noAction.body.error.code]).toEqual([404, 'not_found']);
    expect((await getJson(api('/review/groups?limit=0'))).status).toBe(400);
    expect((await getJson(api('/review/people?from=yesterday'))).status).toBe(400);
  });

  it('assigns the group to a new person: the crops become their training images; undo removes them', async () => {
    const { status, body } = await postJson(api('/review/assign'), { group_id: groupId, display_name: 'Grace Hopper' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ label: 'grace-hopper', display_name: 'Grace Hopper', new_person: true, retrain_needed: true });
    expect(body.added).toHaveLength(10);
    const images = await getJson(api('/images/grace-hopper'));
    expect([...images.body.images].sort()).toEqual([...body.added].sort());
    const file = await fetch(api(`/images/grace-hopper/${body.added[0]}`));
    expect(Buffer.from(await file.arrayBuffer()).equals(face)).toBe(true);
    // Out of review; in the actions, undoable.
    expect((await getJson(api('/review/groups'))).body.groups.map((g: { id: string }) => g.id)).toEqual([otherGroup]);
    const actions = (await getJson(api('/review/actions'))).body.actions;
    expect(actions[0]).toMatchObject({ id: body.action_id, kind: 'assign', undoable: true, label: 'grace-hopper' });

    const undo = await postJson(api(`/review/actions/${body.action_id}/undo`), {});
    expect(undo.status).toBe(200);
    expect(undo.body).toMatchObject({ kind: 'assign', images_removed: 10, sightings: 10 });
    // Her images are gone: the label lists none (200 with an empty list, as the original answers).
    expect((await getJson(api('/images/grace-hopper'))).body).toMatchObject({ images: [], count: 0 });
    const groups = (await getJson(api('/review/groups'))).body.groups;
    expect(groups[0]).toMatchObject({ id: groupId, count: 10 });
    const again = await postJson(api(`/review/actions/${body.action_id}/undo`), {});
    expect([again.status, again.body.error.code]).toEqual([409, 'already_undone']);
  });

  it('keeps an assign once a training used its images: undo is a 409 already_trained', async () => {
    const assign = await postJson(api('/review/assign'), { sighting_ids: stranger.slice(0, 4), display_name: 'Grace Hopper' });
    expect(assign.status).toBe(200);
    const train = await fetch(api('/train'), { method: 'POST' });
    expect(train.status).toBe(200);
    const actions = (await getJson(api('/review/actions'))).body.actions;
    expect(actions[0]).toMatchObject({ id: assign.body.action_id, undoable: false, not_undoable_because: 'trained' });
    const undo = await postJson(api(`/review/actions/${assign.body.action_id}/undo`), {});
    expect([undo.status, undo.body.error.code]).toEqual([409, 'already_trained']);
    expect((await getJson(api('/images/grace-hopper'))).body.images).toHaveLength(4);
    // The rest of the group is still up for review, to an existing person now.
    const more = await postJson(api('/review/assign'), { group_id: groupId, label: 'grace-hopper' });
    expect(more.body).toMatchObject({ new_person: false, display_name: 'Grace Hopper' });
    expect(more.body.added).toHaveLength(6);
  });

  it('dismisses a group (hidden) and brings it back on undo', async () => {
    const out = await postJson(api('/review/dismiss'), { group_id: otherGroup });
    expect(out.status).toBe(200);
    expect(out.body.dismissed).toBe(2);
    expect((await getJson(api('/review/groups'))).body.groups).toEqual([]);
    const undo = await postJson(api(`/review/actions/${out.body.action_id}/undo`), {});
    expect(undo.body).toMatchObject({ kind: 'dismiss', sightings: 2 });
    const groups = (await getJson(api('/review/groups'))).body.groups;
    expect(groups.map((g: { id: string; count: number }) => [g.id, g.count])).toEqual([[otherGroup, 2]]);
  });

  it('lists known sightings by person', async () => {
    const at = new Date(Date.now() - 60_000);
    const id = await addSighting(at, null);
    await server.service.ctx.db.query(`UPDATE sightings SET label = 'grace-hopper' WHERE id = $1`, [id]);
    const { body } = await getJson(api(`/review/people?from=${encodeURIComponent(new Date(at.getTime() - 1000).toISOString())}`));
    expect(body.people).toEqual([
      { label: 'grace-hopper', display_name: 'Grace Hopper', count: 1, first_seen: at.toISOString(), last_seen: at.toISOString() },
    ]);
  });
});
