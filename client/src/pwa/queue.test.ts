/**
 * The offline queues on fake-indexeddb (an in-memory IndexedDB that follows the spec): order, dedup by id,
 * removal, the results cap, and that what was queued is still there after the connection is reopened. Real
 * browser behaviour (a reload, a stopped server) is e2e/offline.spec.ts's.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PENDING_RESULTS, queue, type PendingResult } from './queue';

type ResultRecordInput = PendingResult['record'];

function capture(id: string, label = 'grace') {
  return { capture_id: id, label, blob: new Blob([id], { type: 'image/jpeg' }), created: Date.now() };
}

function result(id: string): ResultRecordInput {
  return { id, kind: 'recognition', captured_at: new Date(0).toISOString(), engine: 'browser', faces: [] } as unknown as ResultRecordInput;
}

async function deleteDb(): Promise<void> {
  await queue.close();
  await new Promise<void>((resolve, reject) => {
    const req = indexedDB.deleteDatabase('lookout-offline');
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}

beforeEach(deleteDb);
afterEach(deleteDb);

describe('captures', () => {
  it('keeps them in the order they were queued, with their bytes', async () => {
    await queue.addCapture(capture('a'));
    await queue.addCapture(capture('b', 'ada'));
    const items = await queue.capturesAfter(0, 10);
    expect(items.map((i) => [i.capture_id, i.label])).toEqual([
      ['a', 'grace'],
      ['b', 'ada'],
    ]);
    expect(items[0].seq).toBeLessThan(items[1].seq!);
    expect(await items[1].blob.text()).toBe('b');
    expect(await queue.countCaptures()).toBe(2);
  });

  it('queues a capture_id once: a repeat is ignored, not an error', async () => {
    await queue.addCapture(capture('a', 'first'));
    await queue.addCapture(capture('a', 'again'));
    const items = await queue.capturesAfter(0, 10);
    expect(items.map((i) => i.label)).toEqual(['first']);
  });

  it('pages through the queue after a position, and removes one once sent', async () => {
    for (const id of ['a', 'b', 'c']) await queue.addCapture(capture(id));
    const [first] = await queue.capturesAfter(0, 1);
    const [second] = await queue.capturesAfter(first.seq!, 1);
    expect([first.capture_id, second.capture_id]).toEqual(['a', 'b']);
    await queue.removeCapture(first.seq!);
    expect((await queue.capturesAfter(0, 10)).map((i) => i.capture_id)).toEqual(['b', 'c']);
    expect(await queue.countCaptures()).toBe(2);
  });

  it('are still there after the database is closed and opened again', async () => {
    await queue.addCapture(capture('a'));
    await queue.close();
    expect((await queue.capturesAfter(0, 10)).map((i) => i.capture_id)).toEqual(['a']);
  });
});

describe('results', () => {
  it('keeps them oldest first, once per id, and removes the ones sent', async () => {
    for (const id of ['r1', 'r2', 'r3']) expect(await queue.addResult(result(id))).toBe(0);
    expect(await queue.addResult(result('r2'))).toBe(0);
    const batch = await queue.oldestResults(2);
    expect(batch.map((b) => b.id)).toEqual(['r1', 'r2']);
    expect(batch[0].record).toEqual(result('r1'));
    await queue.removeResults(batch.map((b) => b.seq!));
    expect((await queue.oldestResults(10)).map((b) => b.id)).toEqual(['r3']);
    expect(await queue.countResults()).toBe(1);
  });

  it('drops the oldest beyond the cap and says how many', async () => {
    for (let i = 0; i < MAX_PENDING_RESULTS; i++) await queue.addResult(result(`r${i}`));
    expect(await queue.countResults()).toBe(MAX_PENDING_RESULTS);
    expect(await queue.addResult(result('newest'))).toBe(1);
    expect(await queue.countResults()).toBe(MAX_PENDING_RESULTS);
    const [oldest] = await queue.oldestResults(1);
    expect(oldest.id).toBe('r1');
  }, 60_000);

  it('are still there after the database is closed and opened again', async () => {
    await queue.addResult(result('r1'));
    await queue.close();
    expect((await queue.oldestResults(10)).map((b) => b.id)).toEqual(['r1']);
  });

  it('keep the stores and indexes an older version of the app made (and the e2e tests write to)', async () => {
    await queue.countResults();
    await queue.close();
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open('lookout-offline');
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    try {
      expect(db.version).toBe(1);
      const tx = db.transaction(['captures', 'results']);
      expect(tx.objectStore('captures').keyPath).toBe('seq');
      expect(tx.objectStore('captures').autoIncrement).toBe(true);
      expect(tx.objectStore('captures').index('capture_id').unique).toBe(true);
      expect(tx.objectStore('results').index('id').unique).toBe(true);
    } finally {
      db.close();
    }
  });
});
