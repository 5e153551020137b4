/**
 * The results history on both databases (test/helpers/databases.ts): order, dedup (kept and dropped ids), the
 * cap, concurrency, two stores on one database (replicas), a person's results forgotten, and the import of the
 * files of earlier versions.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ResultRecordInput } from '../../shared/api/index.js';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { createLogger } from '../logger.js';
import { LEGACY_RESULTS_FILE, RESULTS_FILE, ResultStore } from './result-store.js';

function record(n: number, extra: Partial<ResultRecordInput> = {}): ResultRecordInput {
  return {
    id: `rec-${String(n).padStart(6, '0')}`,
    kind: 'recognition',
    captured_at: new Date(Date.UTC(2024, 0, 1, 0, 0, n)).toISOString(),
    engine: 'browser',
    faces: [{ x: 1, y: 2, w: 3, h: 4, label: n % 2 ? 'ada' : 'unknown', confidence: n % 2 ? 80 : 0 }],
    ...extra,
  };
}

describe.each(DATABASES)('ResultStore on %s', (_name, openDatabase) => {
  let t: TestDatabase;
  let dir: string;
  let warnings: string[];

  // One database per suite (a fresh embedded one costs seconds), emptied before each test.
  beforeAll(async () => {
    t = await openDatabase();
  });
  afterAll(async () => {
    await t.dispose();
  });
  beforeEach(async () => {
    await t.db.exec('TRUNCATE results, results_forgotten, deleted_people');
    dir = path.join(t.dataDir, 'results');
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(dir);
    warnings = [];
  });

  async function open(max = 10): Promise<ResultStore> {
    const store = new ResultStore({ db: t.db, dir, max, log: createLogger('warn', (line) => warnings.push(line)) });
    await store.init();
    await store.refresh();
    return store;
  }

  async function ids(store: ResultStore, q: Parameters<ResultStore['query']>[0] = { limit: 100 }): Promise<string[]> {
    return (await store.query(q)).results.map((r) => r.id);
  }

  it('stores a batch in capture order and lists newest first', async () => {
    const store = await open();
    expect(await store.add([record(3), record(1), record(2)])).toEqual({ accepted: 3, duplicates: 0, total: 3 });
    expect(await ids(store)).toEqual(['rec-000003', 'rec-000002', 'rec-000001']);
    const [first] = (await store.query({ limit: 1 })).results;
    expect(first.received_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(first).toMatchObject({ engine: 'browser', faces: [{ label: 'ada', confidence: 80 }] });
  });

  it('counts a repeated id as a duplicate, within a batch and across batches', async () => {
    const store = await open();
    expect(await store.add([record(1), record(1), record(2)])).toEqual({ accepted: 2, duplicates: 1, total: 2 });
    expect(await store.add([record(2), record(3)])).toEqual({ accepted: 1, duplicates: 1, total: 3 });
  });

  it('keeps at most max records, oldest received dropped first, and still knows dropped ids', async () => {
    const store = await open(3);
    for (let n = 1; n <= 5; n++) await store.add([record(n)]);
    expect(store.size).toBe(3);
    expect(await ids(store)).toEqual(['rec-000005', 'rec-000004', 'rec-000003']);
    // Dropped, but a re-send of it is still a duplicate: it must not come back as new.
    expect(await store.add([record(1)])).toEqual({ accepted: 0, duplicates: 1, total: 3 });
    // Ids are remembered for max dropped records: after 4 more, record 1 is forgotten (3, 4, 5, 6 dropped since).
    for (let n = 6; n <= 9; n++) await store.add([record(n)]);
    expect(await store.has('rec-000001')).toBe(false);
    expect(await store.has('rec-000004')).toBe(true);
    expect(await store.has('rec-000006')).toBe(true);
    // Within one batch too: the oldest of the batch's drops is forgotten first.
    await store.add([10, 11, 12, 13].map((n) => record(n)));
    expect(await ids(store)).toEqual(['rec-000013', 'rec-000012', 'rec-000011']);
    expect(await store.has('rec-000010')).toBe(true);
    expect(await store.has('rec-000007')).toBe(false);
  });

  it('keeps records and remembered ids across a restart', async () => {
    await (await open(2)).add([record(1), record(2), record(3)]);
    const second = await open(2);
    expect(second.size).toBe(2);
    expect(await ids(second)).toEqual(['rec-000003', 'rec-000002']);
    expect(await second.has('rec-000001')).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('drops the oldest at the next add when RESULTS_MAX was lowered', async () => {
    await (await open(5)).add([1, 2, 3, 4, 5].map((n) => record(n)));
    const smaller = await open(2);
    expect(await smaller.add([record(6)])).toEqual({ accepted: 1, duplicates: 0, total: 2 });
    expect(await ids(smaller)).toEqual(['rec-000006', 'rec-000005']);
    expect(await smaller.has('rec-000004')).toBe(true);
    expect(await smaller.has('rec-000001')).toBe(false);
  });

  it('never loses a record of many concurrent adds, and never stores an id twice', async () => {
    const store = await open(1000);
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => store.add([record(2 * i), record(2 * i + 1), record(i)])));
    expect(outcomes.reduce((sum, o) => sum + o.accepted, 0)).toBe(100);
    expect(outcomes.reduce((sum, o) => sum + o.duplicates, 0)).toBe(50);
    expect((await open(1000)).size).toBe(100);
  });

  it("two stores on one database (API replicas) see each other's records and never store an id twice", async () => {
    const a = await open(100);
    const b = await open(100);
    await a.add([record(1), record(2)]);
    await b.add([record(2), record(3)]);
    expect(await ids(a)).toEqual(['rec-000003', 'rec-000002', 'rec-000001']);
    expect(await a.add([record(3)])).toMatchObject({ accepted: 0, duplicates: 1, total: 3 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).add([record(100 + i)])));
    await Promise.all([a.refresh(), b.refresh()]);
    expect(a.size).toBe(23);
    expect(b.size).toBe(23);
  });

  it('filters by kind and by face label or object class', async () => {
    const store = await open();
    await store.add([
      record(1),
      record(2),
      {
        id: 'objects-0001',
        kind: 'objects',
        captured_at: '2024-01-02T00:00:00Z',
        engine: 'server',
        objects: [{ class_id: 15, class_name: 'cat', confidence: 0.9, x: 0, y: 0, w: 5, h: 5 }],
      },
    ]);
    expect(await ids(store, { limit: 10, kind: 'objects' })).toEqual(['objects-0001']);
    expect(await ids(store, { limit: 10, label: 'ada' })).toEqual(['rec-000001']);
    expect(await ids(store, { limit: 10, label: 'ADA' })).toEqual(['rec-000001']);
    expect(await ids(store, { limit: 10, label: 'cat' })).toEqual(['objects-0001']);
    const page = await store.query({ limit: 1, kind: 'recognition' });
    expect(page).toMatchObject({ matched: 2, total: 3, results: [{ id: 'rec-000002' }] });
  });

  it("forgets a person's results: removed, a re-send not stored again, the others kept", async () => {
    const store = await open();
    await store.add([1, 2, 3, 4].map((n) => record(n)));
    expect(await store.forgetPerson('ada')).toBe(2);
    expect(await ids(store)).toEqual(['rec-000004', 'rec-000002']);
    expect(store.size).toBe(2);
    expect(await store.add([record(1)])).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(await store.forgetPerson('ada')).toBe(0);
  });

  it('does not store a result naming a person deleted after it was captured (a device that had not heard yet)', async () => {
    const store = await open();
    await t.db.query("INSERT INTO deleted_people (label, deleted_at) VALUES ('ada', '2024-01-01T00:00:02Z')");
    // Captured at 00:00:01 (before the deletion): dropped; at 00:00:03 (after, re-enrolled): kept.
    expect(await store.add([record(1), record(3), record(2)])).toEqual({ accepted: 2, duplicates: 1, total: 2 });
    expect(await ids(store)).toEqual(['rec-000003', 'rec-000002']);
  });

  describe('the files of earlier versions', () => {
    it('moves the append-only log into the database at the first start, then renames it', async () => {
      const head = JSON.stringify({ format: 'lookout-results-log', version: 2, forgotten_ids: ['old-1'] });
      const lines = [1, 2, 3].map((n) => JSON.stringify({ ...record(n), received_at: '2024-01-01T00:00:00.000Z' }));
      // A bad line in the middle is skipped, a torn last line (no newline) ignored.
      await fs.writeFile(
        path.join(dir, RESULTS_FILE),
        `${head}\n${lines[0]}\n{"not":"a record"}\n${lines[1]}\n${lines[2]}\n{"id":"rec-torn","kind":"recogn`,
      );
      const store = await open(10);
      expect(await ids(store)).toEqual(['rec-000003', 'rec-000002', 'rec-000001']);
      expect((await store.query({ limit: 1 })).results[0].received_at).toBe('2024-01-01T00:00:00.000Z');
      expect(await store.has('old-1')).toBe(true);
      expect(warnings.join('\n')).toMatch(/skipped 1 lines/);
      const names = await fs.readdir(dir);
      expect(names).toContain(`${RESULTS_FILE}.migrated`);
      expect(names).not.toContain(RESULTS_FILE);
      // A restart does not read the migrated file again.
      await store.add([record(4)]);
      expect((await open(10)).size).toBe(4);
    });

    it('moves the single JSON document of the version before too, nothing lost', async () => {
      const records = [1, 2, 3].map((n) => ({ ...record(n), received_at: '2024-01-01T00:00:00.000Z' }));
      await fs.writeFile(
        path.join(dir, LEGACY_RESULTS_FILE),
        JSON.stringify({ format: 'lookout-results', version: 1, records, forgotten_ids: ['old-1'] }),
      );
      const store = await open(10);
      expect((await store.query({ limit: 10 })).results).toEqual([...records].reverse());
      expect(await store.has('old-1')).toBe(true);
      expect(await fs.readdir(dir)).toEqual([`${LEGACY_RESULTS_FILE}.migrated`]);
    });

    it('imports within RESULTS_MAX: the oldest dropped, their ids remembered', async () => {
      const records = [1, 2, 3, 4].map((n) => ({ ...record(n), received_at: '2024-01-01T00:00:00.000Z' }));
      await fs.writeFile(path.join(dir, LEGACY_RESULTS_FILE), JSON.stringify({ format: 'lookout-results', version: 1, records }));
      const store = await open(2);
      expect(await ids(store)).toEqual(['rec-000004', 'rec-000003']);
      expect(await store.has('rec-000001')).toBe(true);
    });

    it('two replicas importing at once store each record once', async () => {
      const records = [1, 2, 3].map((n) => ({ ...record(n), received_at: '2024-01-01T00:00:00.000Z' }));
      await fs.writeFile(path.join(dir, LEGACY_RESULTS_FILE), JSON.stringify({ format: 'lookout-results', version: 1, records }));
      const [a] = await Promise.all([open(10), open(10)]);
      await a.refresh();
      expect(a.size).toBe(3);
    });

    it('sets a corrupt file aside with a warning and starts empty', async () => {
      await fs.writeFile(path.join(dir, LEGACY_RESULTS_FILE), '{"format":"lookout-results","version":1,"records":[{"id":');
      const store = await open();
      expect(store.size).toBe(0);
      const names = await fs.readdir(dir);
      expect(names.some((n) => n.startsWith(`${LEGACY_RESULTS_FILE}.corrupt-`))).toBe(true);
      expect(names).not.toContain(LEGACY_RESULTS_FILE);
      expect(warnings.join('\n')).toMatch(/set aside/);
      await store.add([record(1)]);
      expect((await open()).size).toBe(1);
    });

    it('sets aside a file of the wrong shape, and a log whose header is not one', async () => {
      await fs.writeFile(
        path.join(dir, LEGACY_RESULTS_FILE),
        JSON.stringify({ format: 'lookout-results', version: 1, records: [{ id: 'x' }] }),
      );
      await fs.writeFile(path.join(dir, RESULTS_FILE), '{"format":"something else"}\n{"id":"x"}\n');
      expect((await open()).size).toBe(0);
      expect(warnings).toHaveLength(2);
      const names = await fs.readdir(dir);
      expect(names.some((n) => n.startsWith(`${RESULTS_FILE}.corrupt-`))).toBe(true);
      expect(names.some((n) => n.startsWith(`${LEGACY_RESULTS_FILE}.corrupt-`))).toBe(true);
    });

    it('does not follow a symbolic link in place of the log', async () => {
      const outside = path.join(t.dataDir, 'outside.jsonl'); // outside the results folder
      const head = JSON.stringify({ format: 'lookout-results-log', version: 2, forgotten_ids: [] });
      await fs.writeFile(outside, `${head}\n${JSON.stringify({ ...record(1), received_at: 'x' })}\n`);
      await fs.symlink(outside, path.join(dir, RESULTS_FILE));
      const store = await open();
      expect(store.size).toBe(0);
      expect(warnings.join('\n')).toMatch(/symbolic link/);
      expect((await fs.readFile(outside, 'utf8')).split('\n').filter(Boolean)).toHaveLength(2);
    });
  });
});
