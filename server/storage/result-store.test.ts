import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResultRecordInput } from '../../shared/api/index.js';
import { createLogger } from '../logger.js';
import { RESULTS_FILE, ResultStore } from './result-store.js';

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
    const onDisk = JSON.parse(await fs.readFile(path.join(dir, RESULTS_FILE), 'utf8'));
    expect(onDisk.records).toHaveLength(2);
  });

  it('never loses a record of many concurrent adds, and writes one complete file', async () => {
    const store = await open(1000);
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => store.add([record(2 * i), record(2 * i + 1)])));
    expect(outcomes.reduce((sum, o) => sum + o.accepted, 0)).toBe(100);
    const reloaded = await open(1000);
    expect(reloaded.size).toBe(100);
    expect((await fs.readdir(dir)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });

  it('sets a corrupt file aside with a warning and starts empty', async () => {
    await fs.writeFile(path.join(dir, RESULTS_FILE), '{"format":"lookout-results","version":1,"records":[{"id":');
    const store = await open();
    expect(store.size).toBe(0);
    const names = await fs.readdir(dir);
    expect(names.some((n) => n.startsWith(`${RESULTS_FILE}.corrupt-`))).toBe(true);
    expect(names).not.toContain(RESULTS_FILE);
    expect(warnings.join('\n')).toMatch(/set aside/);
    // It keeps working: the next add writes a fresh file.
    await store.add([record(1)]);
    expect((await open()).size).toBe(1);
  });

  it('sets aside a file of the wrong shape too', async () => {
    await fs.writeFile(path.join(dir, RESULTS_FILE), JSON.stringify({ format: 'lookout-results', version: 1, records: [{ id: 'x' }] }));
    expect((await open()).size).toBe(0);
    expect(warnings).toHaveLength(1);
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
