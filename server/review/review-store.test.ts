import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import type { Database } from '../db/database.js';
import { checkPhoto } from '../../shared/recognition/photo-check.js';
import { ApiError } from '../http/errors.js';
import { createLogger } from '../logger.js';
import { descriptorBytes } from '../sightings/sighting-store.js';
import { ImageStore } from '../storage/image-store.js';
import { ReviewStore } from './review-store.js';

const MAX = 0.48;
const random = seededRandom(2026);
const person = () => Float32Array.from({ length: 128 }, () => (random() - 0.5) * 0.3);
const seenAgain = (base: Float32Array) => base.map((v) => v + (random() - 0.5) * 0.045);

let crop: Buffer;

interface Fixture {
  db: Database;
  images: ImageStore;
  sightingsDir: string;
  trainedAt: string | null;
  training: boolean;
  store: ReviewStore;
}

let seq = 0;
/** One sighting as the sighting store keeps it: a row and its crop file in `<sightings>/<day>/<id>.jpg`. */
async function addSighting(
  f: Fixture,
  s: {
    at: Date;
    label?: string;
    descriptor?: Float32Array | null;
    groupDescriptor?: Float32Array | null;
    source?: string;
    withCrop?: boolean;
  },
): Promise<string> {
  const id = `s-${String(seq++).padStart(5, '0')}`;
  const rel = `${s.at.toISOString().slice(0, 10)}/${id}.jpg`;
  if (s.withCrop !== false) {
    await fs.mkdir(path.dirname(path.join(f.sightingsDir, rel)), { recursive: true });
    await fs.writeFile(path.join(f.sightingsDir, rel), crop);
  }
  await f.db.query(
    `INSERT INTO sightings (id, seen_at, source, label, recognizer, box, crop, crop_bytes, descriptor, group_descriptor)
     VALUES ($1, $2, $3, $4, 'embedding', $5, $6, $7, $8, $9)`,
    [
      id,
      s.at,
      s.source ?? 'camera',
      s.label ?? null,
      JSON.stringify({ x: 1, y: 2, w: 30, h: 30 }),
      rel,
      crop.length,
      s.descriptor ? descriptorBytes(s.descriptor) : null,
      s.groupDescriptor ? descriptorBytes(s.groupDescriptor) : null,
    ],
  );
  return id;
}

async function apiError(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  throw new Error('no error');
}

describe.each(DATABASES)('review on %s', (_name, open) => {
  let t: TestDatabase;
  let f: Fixture;

  beforeEach(async () => {
    crop ??= await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 120, g: 90, b: 80 } } })
      .jpeg()
      .toBuffer();
    t = await open();
    const images = new ImageStore(path.join(t.dataDir, 'images'));
    await images.init();
    const fixture: Partial<Fixture> = {
      db: t.db,
      images,
      sightingsDir: path.join(t.dataDir, 'sightings'),
      trainedAt: null,
      training: false,
    };
    fixture.store = new ReviewStore({
      db: t.db,
      sightingsDir: fixture.sightingsDir as string,
      images,
      log: createLogger('silent'),
      lastTrainedAt: () => f.trainedAt,
      trainingRunning: () => f.training,
    });
    f = fixture as Fixture;
  });
  afterEach(async () => {
    await t.dispose();
  });

  /** A stranger seen ten times, another seen twice, a face without a descriptor, and a known person. */
  async function scene() {
    const stranger = person();
    const other = person();
    const base = Date.parse('2026-11-20T09:00:00.000Z');
    const strangerIds: string[] = [];
    for (let i = 0; i < 10; i++)
      strangerIds.push(await addSighting(f, { at: new Date(base + i * 60_000), descriptor: seenAgain(stranger) }));
    const otherIds = [
      await addSighting(f, { at: new Date(base + 30_000), descriptor: seenAgain(other), source: 'api' }),
      await addSighting(f, { at: new Date(base + 90_000), descriptor: seenAgain(other), source: 'page' }),
    ];
    const lone = await addSighting(f, { at: new Date(base + 120_000), descriptor: null });
    await addSighting(f, { at: new Date(base + 180_000), label: 'alice' });
    return { stranger, strangerIds, otherIds, lone, base };
  }

  it('#36 1: groups faces recognised with another descriptor model (faceres-1024) by their 128-d grouping descriptors', async () => {
    // The 1,024-d descriptors say nothing alike (each face its own direction); the grouping ones say two people.
    const unit = () => {
      const v = Float32Array.from({ length: 1024 }, () => random() - 0.5);
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    };
    const [a, b] = [person(), person()];
    const base = Date.parse('2026-11-21T09:00:00.000Z');
    const ofA = [];
    for (let i = 0; i < 4; i++)
      ofA.push(await addSighting(f, { at: new Date(base + i * 1000), descriptor: unit(), groupDescriptor: seenAgain(a) }));
    const ofB = [];
    for (let i = 0; i < 3; i++)
      ofB.push(await addSighting(f, { at: new Date(base + 10_000 + i * 1000), descriptor: unit(), groupDescriptor: seenAgain(b) }));
    // Kept with a 1,024-d descriptor only (before the change): never compared with the 128-d ones, a group of its own.
    const older = await addSighting(f, { at: new Date(base - 60_000), descriptor: unit() });
    // A 128-d descriptor of its own (a faceapi-128 server's face) of person A: grouped with A's faces.
    const own = await addSighting(f, { at: new Date(base + 20_000), descriptor: seenAgain(a) });
    const { groups } = await f.store.groups({ limit: 50, max: MAX });
    const members = async (id: string) =>
      (await t.db.query<{ id: string }>('SELECT id FROM sightings WHERE group_id = $1 ORDER BY id', [id])).map((r) => r.id);
    expect(groups.map((g) => g.count)).toEqual([5, 3, 1]);
    expect(await members(groups[0].id)).toEqual([...ofA, own].sort());
    expect(await members(groups[1].id)).toEqual([...ofB].sort());
    expect(await members(groups[2].id)).toEqual([older]);
    // Each group's faces agree by the same descriptors.
    expect(groups.map((g) => g.coherent)).toEqual([true, true, true]);
  });

  it('groups unknown faces largest first, with stable ids that new faces of the same stranger join', async () => {
    const s = await scene();
    const first = await f.store.groups({ limit: 50, max: MAX });
    expect(first.groups.map((g) => g.count)).toEqual([10, 2, 1]);
    expect(first.total).toBe(3);
    expect(first.grouped_by).toBe('descriptor');
    const [big, two] = first.groups;
    expect(big.sample_ids).toEqual([...s.strangerIds].reverse().slice(0, 8));
    expect(big.first_seen).toBe(new Date(s.base).toISOString());
    expect(big.last_seen).toBe(new Date(s.base + 9 * 60_000).toISOString());
    expect(big.sources).toEqual(['camera']);
    expect(two.sources).toEqual(['api', 'page']);

    const later = await addSighting(f, { at: new Date(s.base + 3_600_000), descriptor: seenAgain(s.stranger) });
    const second = await f.store.groups({ limit: 1, max: MAX });
    expect(second.groups).toHaveLength(1);
    expect(second.total).toBe(3);
    expect(second.groups[0]).toMatchObject({ id: big.id, count: 11 });
    expect(second.groups[0].sample_ids[0]).toBe(later);

    // Only the faces seen since a time count.
    const since = await f.store.groups({ since: new Date(s.base + 100_000), limit: 50, max: MAX });
    expect(since.groups.map((g) => [g.id, g.count])).toEqual([
      [big.id, 9],
      [first.groups[2].id, 1],
    ]);
  });

  it('assigns a group to a new person: its crops become training images, undone until training', async () => {
    const s = await scene();
    const [big] = (await f.store.groups({ limit: 50, max: MAX })).groups;
    const out = await f.store.assign({ group_id: big.id, display_name: 'Grace Hopper' }, 'reviewer');
    expect(out).toMatchObject({ label: 'grace-hopper', display_name: 'Grace Hopper', new_person: true, retrain_needed: true, skipped: [] });
    expect(out.added).toHaveLength(10);
    const stored = (await f.images.list('grace-hopper'))?.map((i) => i.filename).sort();
    expect(stored).toEqual([...out.added].sort());
    expect(new Uint8Array((await f.images.read('grace-hopper', out.added[0])) as Uint8Array)).toEqual(new Uint8Array(crop));
    const meta = await t.db.query<{ source: string; sighting_id: string }>(
      'SELECT source, sighting_id FROM image_meta WHERE label = $1 ORDER BY sighting_id',
      ['grace-hopper'],
    );
    expect(meta.map((m) => m.sighting_id)).toEqual(s.strangerIds);
    expect(new Set(meta.map((m) => m.source))).toEqual(new Set(['sighting']));
    expect(await t.db.query('SELECT display_name FROM people WHERE label = $1', ['grace-hopper'])).toEqual([
      { display_name: 'Grace Hopper' },
    ]);

    // The group is no longer up for review; assigning its faces again is refused.
    expect((await f.store.groups({ limit: 50, max: MAX })).groups.map((g) => g.count)).toEqual([2, 1]);
    expect(await apiError(f.store.assign({ sighting_ids: [s.strangerIds[0]], label: 'grace-hopper' }, null))).toBe('already_assigned');

    const [action] = await f.store.actions(10);
    expect(action).toMatchObject({ id: out.action_id, kind: 'assign', actor: 'reviewer', label: 'grace-hopper', undoable: true });
    expect(action.added.sort()).toEqual([...out.added].sort());

    const undone = await f.store.undo(out.action_id);
    expect(undone).toMatchObject({ kind: 'assign', images_removed: 10, sightings: 10 });
    expect(await f.images.list('grace-hopper')).toBeNull();
    expect(await t.db.query('SELECT 1 FROM image_meta WHERE label = $1', ['grace-hopper'])).toEqual([]);
    expect(await t.db.query('SELECT 1 FROM people WHERE label = $1', ['grace-hopper'])).toEqual([]);
    // Back in review, in the same group.
    expect((await f.store.groups({ limit: 50, max: MAX })).groups[0]).toMatchObject({ id: big.id, count: 10 });
    expect(await apiError(f.store.undo(out.action_id))).toBe('already_undone');
    expect((await f.store.actions(10))[0]).toMatchObject({ undoable: false, not_undoable_because: 'undone' });
  });

  it('checks each crop before storing it: the check answered and kept with the image; a failing checker leaves it unchecked', async () => {
    const s = await scene();
    const seen: number[] = [];
    // The real check of a crop with no face found (the server's route runs the detector first).
    const check = async (bytes: Uint8Array) => {
      seen.push(bytes.length);
      if (seen.length === 2) throw new Error('the vision worker stopped');
      const { data, info } = await sharp(bytes).grayscale().raw().toBuffer({ resolveWithObject: true });
      return checkPhoto({ gray: { width: info.width, height: info.height, data: new Uint8Array(data) }, faces: [] });
    };
    const ids = s.strangerIds.slice(0, 3);
    const out = await f.store.assign({ sighting_ids: ids, display_name: 'Checked' }, null, check);
    expect(seen).toEqual([crop.length, crop.length, crop.length]);
    expect(out.added).toHaveLength(3);
    // In the faces' order (checked a few at a time, so which one met the failing checker may vary).
    expect(out.checks?.map((c) => [c.sighting_id, c.filename])).toEqual(ids.map((id, i) => [id, out.added[i]]));
    const verdicts = out.checks?.map((c) => c.check?.verdict ?? null) ?? [];
    expect([...verdicts].sort()).toEqual(['no_face', 'no_face', null]);
    const meta = await t.db.query<{ sighting_id: string; verdict: string | null }>(
      `SELECT sighting_id, photo_check->>'verdict' AS verdict FROM image_meta WHERE label = 'checked' ORDER BY sighting_id`,
    );
    expect(meta).toEqual(ids.map((id, i) => ({ sighting_id: id, verdict: verdicts[i] })));
    // Without a checker (as before checks existed) the images are stored unchecked.
    const plain = await f.store.assign({ sighting_ids: s.otherIds, display_name: 'Plain' }, null);
    expect(plain.checks?.map((c) => c.check)).toEqual([null, null]);
  });

  it('refuses to undo an assign once a training ran since (or while one runs)', async () => {
    const s = await scene();
    const out = await f.store.assign({ sighting_ids: s.otherIds, display_name: 'Someone' }, null);
    f.training = true;
    expect(await apiError(f.store.undo(out.action_id))).toBe('training_in_progress');
    f.training = false;
    f.trainedAt = new Date(Date.now() + 1000).toISOString();
    expect(await apiError(f.store.undo(out.action_id))).toBe('already_trained');
    expect((await f.store.actions(5))[0]).toMatchObject({ undoable: false, not_undoable_because: 'trained' });
    expect((await f.images.list('someone'))?.length).toBe(2);
    // A training before the assign does not hold it back.
    f.trainedAt = new Date(Date.now() - 60_000).toISOString();
    expect((await f.store.undo(out.action_id)).images_removed).toBe(2);
  });

  it('adds to an existing person and keeps them on undo; refuses an unknown label without a name', async () => {
    const s = await scene();
    const own = await f.images.save('alice', crop, 'jpeg');
    expect(await apiError(f.store.assign({ sighting_ids: [s.lone], label: 'bob' }, null))).toBe('label_not_found');
    expect(await apiError(f.store.assign({ sighting_ids: [s.lone], label: '../x' }, null))).toBe('invalid_label');
    expect(await apiError(f.store.assign({ sighting_ids: ['nope'], label: 'alice' }, null))).toBe('not_found');
    expect(await apiError(f.store.assign({ group_id: 'g-nope', label: 'alice' }, null))).toBe('not_found');

    const out = await f.store.assign({ sighting_ids: [s.lone], label: 'Alice' }, null);
    expect(out).toMatchObject({ label: 'alice', new_person: false, display_name: 'alice' });
    expect((await f.images.list('alice'))?.length).toBe(2);
    await f.store.undo(out.action_id);
    expect((await f.images.list('alice'))?.map((i) => i.filename)).toEqual([own]);
  });

  it('skips faces whose crop is gone, and refuses when none is left', async () => {
    const at = new Date('2026-11-21T10:00:00.000Z');
    const kept = await addSighting(f, { at, descriptor: null });
    const gone = await addSighting(f, { at, descriptor: null, withCrop: false });
    expect(await apiError(f.store.assign({ sighting_ids: [gone], display_name: 'X' }, null))).toBe('not_found');
    expect(await f.images.list('x')).toBeNull();
    const out = await f.store.assign({ sighting_ids: [kept, gone], display_name: 'X' }, null);
    expect(out.added).toHaveLength(1);
    expect(out.skipped).toEqual([{ sighting_id: gone, reason: 'crop_missing' }]);
  });

  it('assigns a face once when two reviewers assign it at the same time', async () => {
    const s = await scene();
    const results = await Promise.allSettled([
      f.store.assign({ sighting_ids: s.otherIds, display_name: 'First' }, null),
      f.store.assign({ sighting_ids: s.otherIds, display_name: 'Second' }, null),
    ]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    expect(ok).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((failed.reason as ApiError).code).toBe('already_assigned');
    // The loser's images went again: only the winner's two are stored.
    const winner = (ok[0] as PromiseFulfilledResult<{ label: string }>).value.label;
    const loser = winner === 'first' ? 'second' : 'first';
    expect((await f.images.list(winner))?.length).toBe(2);
    expect(await f.images.list(loser)).toBeNull();
  });

  it('dismisses a group (hidden from review) and undoes it (back, same group)', async () => {
    await scene();
    const before = await f.store.groups({ limit: 50, max: MAX });
    const out = await f.store.dismiss({ group_id: before.groups[1].id }, null);
    expect(out.dismissed).toBe(2);
    expect((await f.store.groups({ limit: 50, max: MAX })).groups.map((g) => g.count)).toEqual([10, 1]);
    expect(await apiError(f.store.dismiss({ group_id: before.groups[1].id }, null))).toBe('not_found');
    const undone = await f.store.undo(out.action_id);
    expect(undone).toMatchObject({ kind: 'dismiss', sightings: 2, images_removed: 0 });
    expect((await f.store.groups({ limit: 50, max: MAX })).groups).toEqual(before.groups);
  });

  it('undoes a correction: its rows go, and the action is marked undone', async () => {
    const at = new Date('2026-11-21T10:00:00.000Z');
    const id = await addSighting(f, { at, label: 'alice' });
    await t.db.query(`INSERT INTO review_actions (id, kind, created_at, label, sighting_ids) VALUES ('a-c1', 'correct', $1, 'alice', $2)`, [
      at,
      JSON.stringify([id]),
    ]);
    await t.db.query(
      `INSERT INTO corrections (id, label, sighting_id, action_id, created_at, recognizer, feature) VALUES ('c1', 'alice', $1, 'a-c1', $2, 'lbph', $3)`,
      [id, at, new Uint8Array([1, 2, 3, 4])],
    );
    // A training since does not hold a correction's undo back.
    f.trainedAt = new Date().toISOString();
    expect((await f.store.actions(5))[0]).toMatchObject({ kind: 'correct', undoable: true });
    expect(await f.store.undo('a-c1')).toMatchObject({ kind: 'correct', images_removed: 0, sightings: 0 });
    expect(await t.db.query('SELECT id FROM corrections')).toEqual([]);
    expect(await apiError(f.store.undo('a-c1'))).toBe('already_undone');
  });

  it('lists known sightings by person, in a time range and by name', async () => {
    const base = Date.parse('2026-11-22T08:00:00.000Z');
    for (let i = 0; i < 3; i++) await addSighting(f, { at: new Date(base + i * 1000), label: 'marie-curie' });
    await addSighting(f, { at: new Date(base + 5000), label: 'alice' });
    await addSighting(f, { at: new Date(base + 9000), descriptor: null });
    await t.db.query(`INSERT INTO people (label, display_name) VALUES ('marie-curie', 'Marie Curie')`);

    const all = await f.store.people({ limit: 100 });
    expect(all.people.map((p) => [p.label, p.display_name, p.count])).toEqual([
      ['alice', 'alice', 1],
      ['marie-curie', 'Marie Curie', 3],
    ]);
    expect(all.total).toBe(2);
    const range = await f.store.people({ from: new Date(base + 1000), to: new Date(base + 2000), limit: 100 });
    expect(range.people).toEqual([
      {
        label: 'marie-curie',
        display_name: 'Marie Curie',
        count: 1,
        first_seen: new Date(base + 1000).toISOString(),
        last_seen: new Date(base + 1000).toISOString(),
      },
    ]);
    expect((await f.store.people({ q: 'CURIE', limit: 100 })).people.map((p) => p.label)).toEqual(['marie-curie']);
  });
});
