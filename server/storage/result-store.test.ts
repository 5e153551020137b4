import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResultRecordInput } from '../../shared/api/index.js';
import { createLogger } from '../logger.js';
import { LEGACY_RESULTS_FILE, RESULTS_FILE, ResultStore } from './result-store.js';

let dir: string;
let warnings: string[];
const log = () => createLogger('warn', (line) => warnings.push(line));

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-results-'));
  warnings = [];
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

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

async function open(max = 10): Promise<ResultStore> {
  const store = new ResultStore({ dir, max, log: log() });
  await store.init();
  return store;
}

describe('ResultStore', () => {
  it('stores a batch in capture order and lists newest first', async () => {
    const store = await open();
    expect(await store.add([record(3), record(1), record(2)])).toEqual({ accepted: 3, duplicates: 0, total: 3 });
    expect(store.query({ limit: 10 }).results.map((r) => r.id)).toEqual(['rec-000003', 'rec-000002', 'rec-000001']);
    expect(store.query({ limit: 10 }).results[0].received_at).toMatch(/^\d{4}-\d\d-\d\dT/);
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
    expect(store.query({ limit: 10 }).results.map((r) => r.id)).toEqual(['rec-000005', 'rec-000004', 'rec-000003']);
    // Dropped, but a re-send of it is still a duplicate: it must not come back as new.
    expect(await store.add([record(1)])).toEqual({ accepted: 0, duplicates: 1, total: 3 });
    // Ids are remembered for max dropped records: after 3 more, record 1 is forgotten.
    for (let n = 6; n <= 9; n++) await store.add([record(n)]);
    expect(store.has('rec-000001')).toBe(false);
    expect(store.has('rec-000006')).toBe(true);
  });

  it('reloads records and remembered ids after a restart', async () => {
    const first = await open(2);
    await first.add([record(1), record(2), record(3)]);
    const second = await open(2);
    expect(second.query({ limit: 10 }).results.map((r) => r.id)).toEqual(['rec-000003', 'rec-000002']);
    expect(second.has('rec-000001')).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('drops the oldest at start when RESULTS_MAX was lowered', async () => {
    await (await open(5)).add([1, 2, 3, 4, 5].map((n) => record(n)));
    const smaller = await open(2);
    expect(smaller.size).toBe(2);
    // Compacted at start: the header (remembering up to max dropped ids) and the two kept records.
    const lines = await logLines();
    expect(lines.slice(1).map((l) => l.id)).toEqual(['rec-000004', 'rec-000005']);
    expect(lines[0].forgotten_ids).toEqual(['rec-000002', 'rec-000003']);
  });

  it('never loses a record of many concurrent adds, and writes one complete file', async () => {
    const store = await open(1000);
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => store.add([record(2 * i), record(2 * i + 1)])));
    expect(outcomes.reduce((sum, o) => sum + o.accepted, 0)).toBe(100);
    const reloaded = await open(1000);
    expect(reloaded.size).toBe(100);
    expect((await fs.readdir(dir)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });

  it('sets a corrupt file of the earlier format aside with a warning and starts empty', async () => {
    await fs.writeFile(path.join(dir, LEGACY_RESULTS_FILE), '{"format":"lookout-results","version":1,"records":[{"id":');
    const store = await open();
    expect(store.size).toBe(0);
    const names = await fs.readdir(dir);
    expect(names.some((n) => n.startsWith(`${LEGACY_RESULTS_FILE}.corrupt-`))).toBe(true);
    expect(names).not.toContain(LEGACY_RESULTS_FILE);
    expect(warnings.join('\n')).toMatch(/set aside/);
    // It keeps working: the next add writes a fresh log.
    await store.add([record(1)]);
    expect((await open()).size).toBe(1);
  });

  it('sets aside an earlier file of the wrong shape too', async () => {
    await fs.writeFile(
      path.join(dir, LEGACY_RESULTS_FILE),
      JSON.stringify({ format: 'lookout-results', version: 1, records: [{ id: 'x' }] }),
    );
    expect((await open()).size).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it('sets aside a log whose header is not one', async () => {
    await fs.writeFile(path.join(dir, RESULTS_FILE), '{"format":"something else"}\n{"id":"x"}\n');
    expect((await open()).size).toBe(0);
    expect((await fs.readdir(dir)).some((n) => n.startsWith(`${RESULTS_FILE}.corrupt-`))).toBe(true);
    expect(warnings.join('\n')).toMatch(/set aside/);
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
    expect(store.query({ limit: 10, kind: 'objects' }).results.map((r) => r.id)).toEqual(['objects-0001']);
    expect(store.query({ limit: 10, label: 'ada' }).results.map((r) => r.id)).toEqual(['rec-000001']);
    expect(store.query({ limit: 10, label: 'cat' }).results.map((r) => r.id)).toEqual(['objects-0001']);
    expect(store.query({ limit: 1, kind: 'recognition' })).toMatchObject({ matched: 2, results: [{ id: 'rec-000002' }] });
  });
});

/** The log's lines, parsed. */
async function logLines(): Promise<any[]> {
  const text = await fs.readFile(path.join(dir, RESULTS_FILE), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('ResultStore as an append-only log', () => {
  it('appends each add to the same file (no rewrite) and compacts past 2 x max records', async () => {
    const store = await open(4);
    await store.add([record(1)]);
    const { ino } = await fs.stat(path.join(dir, RESULTS_FILE));
    const sizes: number[] = [];
    for (let n = 2; n <= 8; n++) {
      await store.add([record(n)]);
      const st = await fs.stat(path.join(dir, RESULTS_FILE));
      expect(st.ino).toBe(ino);
      sizes.push(st.size);
    }
    // Grew by one line each time: 8 records in the log, 4 kept in memory.
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect((await logLines()).length).toBe(1 + 8);
    // The 9th record takes the log past 2 x max: rewritten (a new file) with the kept 4.
    await store.add([record(9)]);
    expect((await fs.stat(path.join(dir, RESULTS_FILE))).ino).not.toBe(ino);
    const lines = await logLines();
    expect(lines.slice(1).map((l) => l.id)).toEqual(['rec-000006', 'rec-000007', 'rec-000008', 'rec-000009']);
    expect(lines[0].forgotten_ids).toEqual(['rec-000002', 'rec-000003', 'rec-000004', 'rec-000005']);
    // What a restart reads is what was kept, and the dropped ids are still duplicates (up to max of them).
    const again = await open(4);
    expect(again.query({ limit: 10 }).results.map((r) => r.id)).toEqual(['rec-000009', 'rec-000008', 'rec-000007', 'rec-000006']);
    expect(await again.add([record(5)])).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(again.has('rec-000001')).toBe(false);
  });

  it('moves the history of the earlier format into the log at first start, nothing lost', async () => {
    const records = [1, 2, 3].map((n) => ({ ...record(n), received_at: '2024-01-01T00:00:00.000Z' }));
    await fs.writeFile(
      path.join(dir, LEGACY_RESULTS_FILE),
      JSON.stringify({ format: 'lookout-results', version: 1, records, forgotten_ids: ['old-1'] }),
    );
    const store = await open(10);
    expect(store.query({ limit: 10 }).results).toEqual([...records].reverse());
    expect(store.has('old-1')).toBe(true);
    const names = await fs.readdir(dir);
    expect(names).toContain(RESULTS_FILE);
    expect(names).toContain(`${LEGACY_RESULTS_FILE}.migrated`);
    expect(names).not.toContain(LEGACY_RESULTS_FILE);
    // Restarts read the log; the migrated file is not read again.
    await store.add([record(4)]);
    expect((await open(10)).size).toBe(4);
  });

  it('ignores a line torn by a crash, and cuts it off before the next append', async () => {
    const store = await open();
    await store.add([record(1), record(2)]);
    await fs.appendFile(path.join(dir, RESULTS_FILE), '{"id":"rec-torn","kind":"recogn');
    const restarted = await open();
    expect(restarted.size).toBe(2);
    await restarted.add([record(3)]);
    expect((await logLines()).slice(1).map((l) => l.id)).toEqual(['rec-000001', 'rec-000002', 'rec-000003']);
    expect(warnings.join('\n')).toMatch(/torn/);
  });

  it('skips a bad line in the middle with a warning and keeps the rest', async () => {
    const store = await open();
    await store.add([record(1)]);
    await fs.appendFile(path.join(dir, RESULTS_FILE), '{"not":"a record"}\n');
    await store.add([record(2)]);
    const restarted = await open();
    expect(restarted.query({ limit: 10 }).results.map((r) => r.id)).toEqual(['rec-000002', 'rec-000001']);
    expect(warnings.join('\n')).toMatch(/skipped 1 lines/);
  });

  it("two stores on one folder (API replicas) see each other's appends and never store an id twice", async () => {
    const a = await open(100);
    const b = await open(100);
    await a.add([record(1), record(2)]);
    await b.add([record(2), record(3)]);
    await a.refresh();
    expect(a.query({ limit: 10 }).results.map((r) => r.id)).toEqual(['rec-000003', 'rec-000002', 'rec-000001']);
    expect(await a.add([record(3)])).toMatchObject({ accepted: 0, duplicates: 1, total: 3 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).add([record(100 + i)])));
    await Promise.all([a.refresh(), b.refresh()]);
    expect(a.size).toBe(23);
    expect(b.size).toBe(23);
    expect((await logLines()).length).toBe(1 + 23);
  });

  it('does not follow a symbolic link in place of the log', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-outside-'));
    try {
      const secret = path.join(outside, 'secret.jsonl');
      const line = JSON.stringify({ format: 'lookout-results-log', version: 2, forgotten_ids: [] });
      await fs.writeFile(secret, `${line}\n${JSON.stringify({ ...record(1), received_at: 'x' })}\n`);
      await fs.symlink(secret, path.join(dir, RESULTS_FILE));
      const store = await open();
      expect(store.size).toBe(0);
      await store.add([record(2)]);
      // The link was set aside, not written through: the file outside is unchanged.
      expect((await fs.readFile(secret, 'utf8')).split('\n').filter(Boolean)).toHaveLength(2);
      expect((await fs.lstat(path.join(dir, RESULTS_FILE))).isFile()).toBe(true);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });
});
