/**
 * Dropping what a device still queues of people deleted on the server (issue #26): on the real queue (fake-indexeddb),
 * only the photos and results of a deleted person made before the deletion go; the rest stays, in order.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dropDeleted } from './deletions';
import { type PendingResult, queue } from './queue';

const T = Date.UTC(2024, 4, 1, 12);

function capture(id: string, label: string, created: number) {
  return { capture_id: id, label, blob: new Blob([id], { type: 'image/jpeg' }), created };
}

function result(id: string, labels: string[], captured: number, kind: 'recognition' | 'objects' = 'recognition'): PendingResult['record'] {
  const at = new Date(captured).toISOString();
  if (kind === 'objects') {
    return {
      id,
      kind,
      captured_at: at,
      engine: 'browser',
      objects: [{ class_id: 0, class_name: 'person', confidence: 0.9, x: 0, y: 0, w: 1, h: 1 }],
    };
  }
  return {
    id,
    kind,
    captured_at: at,
    engine: 'browser',
    faces: labels.map((label) => ({ x: 0, y: 0, w: 1, h: 1, label, confidence: 80 })),
  };
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

describe('dropDeleted', () => {
  it('drops the photos and results of a person deleted after they were made, and nothing else', async () => {
    await queue.addCapture(capture('a', 'eileen', T - 1000));
    await queue.addCapture(capture('b', 'grace', T - 1000));
    await queue.addCapture(capture('c', 'eileen', T + 1000)); // re-enrolled after the deletion: kept
    await queue.addResult(result('r1', ['eileen'], T - 5000));
    await queue.addResult(result('r2', ['grace', 'eileen'], T - 4000)); // names her: dropped whole
    await queue.addResult(result('r3', ['grace'], T - 3000));
    await queue.addResult(result('r4', ['eileen'], T + 2000));
    await queue.addResult(result('r5', [], T - 1000, 'objects')); // an object class "person", not a person
    const dropped = await dropDeleted(queue, [
      { label: 'eileen', deleted_at: new Date(T - 60_000).toISOString() },
      { label: 'eileen', deleted_at: new Date(T).toISOString() }, // deleted twice: the latest counts
      { label: 'nobody', deleted_at: new Date(T).toISOString() },
      { label: 'person', deleted_at: new Date(T).toISOString() },
    ]);
    expect(dropped).toEqual({ captures: 1, results: 2 });
    expect((await queue.capturesAfter(0, 10)).map((c) => c.capture_id)).toEqual(['b', 'c']);
    expect((await queue.resultsAfter(0, 10)).map((r) => r.id)).toEqual(['r3', 'r4', 'r5']);
  });

  it('leaves the queues alone without deletions', async () => {
    await queue.addCapture(capture('a', 'eileen', T));
    await queue.addResult(result('r1', ['eileen'], T));
    expect(await dropDeleted(queue, [])).toEqual({ captures: 0, results: 0 });
    expect(await queue.countCaptures()).toBe(1);
    expect(await queue.countResults()).toBe(1);
  });

  it('goes through more than one page of each queue', async () => {
    for (let i = 0; i < 450; i++) await queue.addResult(result(`r${i}`, [i % 3 ? 'grace' : 'eileen'], T - 1000));
    const dropped = await dropDeleted(queue, [{ label: 'eileen', deleted_at: new Date(T).toISOString() }]);
    expect(dropped.results).toBe(150);
    expect(await queue.countResults()).toBe(300);
  });
});
