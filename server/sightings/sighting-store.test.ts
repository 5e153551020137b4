import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { type NewSighting, SightingStore } from './sighting-store.js';

const JPEG = new Uint8Array(
  await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer(),
);

function sighting(over: Partial<NewSighting> = {}): NewSighting & { crop: Uint8Array } {
  return {
    seen_at: new Date('2026-03-01T10:00:00.000Z'),
    source: 'api',
    client: null,
    camera: null,
    label: null,
    candidate: null,
    distance: 80,
    confidence: 0,
    certainty: null,
    reason: 'no_match',
    recognizer: 'lbph',
    model_version: 'v1',
    box: { x: 1, y: 2, w: 30, h: 30 },
    crop: JPEG,
    ...over,
  };
}

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

describe.each(DATABASES)('SightingStore on %s', (_name, open) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  async function store(opts: { retentionDays?: number; max?: number } = {}) {
    t = await open();
    return new SightingStore({
      db: t.db,
      dir: path.join(t.dataDir, 'sightings'),
      retentionDays: opts.retentionDays ?? 30,
      max: opts.max ?? 1000,
    });
  }

  it('keeps a sighting with its crop file, and gives both back', async () => {
    const s = await store();
    const kept = await s.add(sighting({ label: 'ada', candidate: null, certainty: 'high', reason: null, camera: 'door' }));
    expect(kept).toMatchObject({
      label: 'ada',
      camera: 'door',
      source: 'api',
      dismissed: false,
      crop_url: `/api/sightings/${kept!.id}/crop`,
    });
    expect(kept!.seen_at).toBe('2026-03-01T10:00:00.000Z');
    expect(await s.get(kept!.id)).toEqual(kept);
    expect(await s.crop(kept!.id)).toEqual(JPEG);
    expect(await exists(path.join(s.dir, '2026-03-01', `${kept!.id}.jpg`))).toBe(true);
    expect(await s.get('nope')).toBeNull();
    expect(await s.crop('nope')).toBeNull();
    expect(await s.crop('../../etc/passwd')).toBeNull();
  });

  it('stores a given id once (a re-sent browser result)', async () => {
    const s = await store();
    expect(await s.add(sighting({ id: 'r1-0' }))).not.toBeNull();
    expect(await s.add(sighting({ id: 'r1-0' }))).toBeNull();
    expect(await s.count()).toBe(1);
  });

  it('filters by label, unknown, time, source and group, pages newest first with a cursor', async () => {
    const s = await store();
    const at = (m: number) => new Date(Date.UTC(2026, 2, 1, 10, m));
    for (let m = 0; m < 7; m++) {
      await s.add(sighting({ id: `s${m}`, seen_at: at(m), label: m % 2 ? 'ada' : null, source: m < 3 ? 'camera' : 'api', camera: 'door' }));
    }
    const ids = (p: { sightings: { id: string }[] }) => p.sightings.map((x) => x.id);
    expect(ids(await s.list({}))).toEqual(['s6', 's5', 's4', 's3', 's2', 's1', 's0']);
    expect(ids(await s.list({ label: 'ada' }))).toEqual(['s5', 's3', 's1']);
    expect(ids(await s.list({ unknown_only: true }))).toEqual(['s6', 's4', 's2', 's0']);
    expect(ids(await s.list({ from: at(2), to: at(5) }))).toEqual(['s4', 's3', 's2']);
    expect(ids(await s.list({ source: 'camera' }))).toEqual(['s2', 's1', 's0']);

    const first = await s.list({ limit: 3 });
    expect(ids(first)).toEqual(['s6', 's5', 's4']);
    expect(first.total_matched).toBe(7);
    const second = await s.list({ limit: 3, cursor: first.next_cursor! });
    expect(ids(second)).toEqual(['s3', 's2', 's1']);
    const last = await s.list({ limit: 3, cursor: second.next_cursor! });
    expect(ids(last)).toEqual(['s0']);
    expect(last.next_cursor).toBeNull();
    await expect(s.list({ cursor: 'garbage' })).rejects.toThrow(/cursor/);

    expect(await s.setGroup(['s0', 's2'], 'g1')).toBe(2);
    expect(ids(await s.list({ group_id: 'g1' }))).toEqual(['s2', 's0']);
    expect(await s.setDismissed(['s0'], new Date())).toBe(1);
    expect(ids(await s.list({ group_id: 'g1' }))).toEqual(['s2']);
    expect(ids(await s.list({ group_id: 'g1', include_dismissed: true }))).toEqual(['s2', 's0']);
    expect((await s.get('s0'))!.dismissed).toBe(true);
    await s.setDismissed(['s0'], null);
    expect((await s.get('s0'))!.dismissed).toBe(false);
  });

  it('keeps descriptors as Float32 and lists the unknown, undismissed, unassigned ones for grouping', async () => {
    const s = await store();
    const d = new Float32Array([0.5, -0.25, 1e-3]);
    await s.add(sighting({ id: 'a', descriptor: d }));
    await s.add(sighting({ id: 'b', seen_at: new Date('2026-03-01T11:00:00Z') }));
    await s.add(sighting({ id: 'c', label: 'ada' }));
    await s.add(sighting({ id: 'd' }));
    await s.add(sighting({ id: 'e' }));
    await s.setDismissed(['d'], new Date());
    await s.setAssigned(['e'], { label: 'bob', filename: 'x.jpg', action: 'act1' });
    expect((await s.get('e'))!.assigned_label).toBe('bob');
    const open = await s.unknownWithDescriptors();
    expect(open.map((o) => o.id)).toEqual(['a', 'b']);
    expect([...open[0].descriptor!]).toEqual([...d]);
    expect(open[1].descriptor).toBeNull();
    expect((await s.unknownWithDescriptors(new Date('2026-03-01T10:30:00Z'))).map((o) => o.id)).toEqual(['b']);
    await s.setDescriptor('b', new Float32Array([1, 2]));
    expect([...(await s.unknownWithDescriptors())[1].descriptor!]).toEqual([1, 2]);
    await s.setAssigned(['e'], null);
    expect((await s.get('e'))!.assigned_label).toBeNull();
  });

  it('removes one, those before a time, and a person everywhere, crops included', async () => {
    const s = await store();
    await s.add(sighting({ id: 'a', label: 'ada' }));
    await s.add(sighting({ id: 'b', candidate: 'ada' }));
    await s.add(sighting({ id: 'c' }));
    await s.add(sighting({ id: 'd', seen_at: new Date('2026-03-02T00:00:00Z') }));
    await s.setAssigned(['c'], { label: 'ada', filename: 'f.jpg', action: 'x' });
    await s.add(sighting({ id: 'e', seen_at: new Date('2026-03-03T00:00:00Z') }));
    expect(await s.remove('e')).toBe(true);
    expect(await s.remove('e')).toBe(false);
    expect(await exists(path.join(s.dir, '2026-03-03', 'e.jpg'))).toBe(false);
    expect(await s.forgetPerson('ada')).toBe(3);
    expect(await exists(path.join(s.dir, '2026-03-01', 'a.jpg'))).toBe(false);
    expect(await s.count()).toBe(1);
    expect(await s.removeBefore(new Date('2026-03-03T00:00:00Z'))).toBe(1);
    expect(await s.crop('d')).toBeNull();
    expect(await s.count()).toBe(0);
  });

  it('purges by retention days and by the count cap, oldest first, with their crops and orphan day folders', async () => {
    const s = await store({ retentionDays: 30, max: 2 });
    const now = new Date('2026-03-31T12:00:00Z');
    await s.add(sighting({ id: 'old', seen_at: new Date('2026-02-01T00:00:00Z') }));
    for (const [i, day] of ['2026-03-20', '2026-03-21', '2026-03-22'].entries()) {
      await s.add(sighting({ id: `n${i}`, seen_at: new Date(`${day}T00:00:00Z`) }));
    }
    // A crop left without its row by a crash, in a day past the retention.
    await fs.mkdir(path.join(s.dir, '2026-01-05'), { recursive: true });
    await fs.writeFile(path.join(s.dir, '2026-01-05', 'orphan.jpg'), JPEG);
    expect(await s.purge(now)).toBe(2);
    expect((await s.list({})).sightings.map((x) => x.id)).toEqual(['n2', 'n1']);
    expect(await exists(path.join(s.dir, '2026-02-01', 'old.jpg'))).toBe(false);
    expect(await exists(path.join(s.dir, '2026-03-20', 'n0.jpg'))).toBe(false);
    expect(await exists(path.join(s.dir, '2026-01-05'))).toBe(false);
    expect(await exists(path.join(s.dir, '2026-03-21', 'n1.jpg'))).toBe(true);
  });
});
