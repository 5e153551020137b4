/**
 * sync.ts around the rules: one run at a time (triggers during a run join it, so nothing is sent twice),
 * the counts and the last error it shows. The server status and the requests are faked; the queues are real
 * (fake-indexeddb).
 */
import 'fake-indexeddb/auto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queue } from './queue';

vi.mock('../lib/server-status', () => ({ refreshStatus: vi.fn(async () => undefined), serverStatus: { reachable: () => true } }));
const sent: string[] = [];
let failWith: Error | null = null;
vi.mock('./transport', () => ({
  postCapture: vi.fn(async (_label: string, _blob: Blob, id: string) => {
    await new Promise((r) => setTimeout(r, 20)); // slow enough for the other triggers to arrive mid-run
    if (failWith) throw failWith;
    sent.push(id);
    return { duplicate: false };
  }),
  postResults: vi.fn(async () => ({ stored: 0, duplicates: 0 })),
  isRetryable: () => true,
}));

const { syncNow, syncState } = await import('./sync');
const { ApiFailure } = await import('../lib/api');

beforeAll(() => {
  // Node 20 has no `navigator` (so no Web Locks): sync.ts then runs without the lock, as in old browsers.
  if (typeof navigator === 'undefined') vi.stubGlobal('navigator', {});
});
afterAll(() => vi.unstubAllGlobals());

describe('syncNow', () => {
  it('keeps the items and says why when the server cannot be reached', async () => {
    await queue.addCapture({ capture_id: 'c0', label: 'grace', blob: new Blob(['c0']), created: Date.now() });
    failWith = new ApiFailure('Cannot reach the Lookout server.', 0, 'network');
    await syncNow();
    expect(syncState.pendingCaptures()).toBe(1);
    expect(syncState.lastError()).toBe('Cannot reach the Lookout server.');
    expect(syncState.syncing()).toBe(false);
    failWith = null;
  });

  it('runs once however many times it is asked during a run: each capture is sent once', async () => {
    for (const id of ['c1', 'c2', 'c3'])
      await queue.addCapture({ capture_id: id, label: 'grace', blob: new Blob([id]), created: Date.now() });
    const first = syncNow();
    const second = syncNow();
    expect(second).toBe(first);
    await new Promise((r) => setTimeout(r, 30));
    const third = syncNow(); // mid-run: joins it
    await Promise.all([first, second, third]);
    expect(sent).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(await queue.countCaptures()).toBe(0);
    expect(syncState.pendingCaptures()).toBe(0);
    expect(syncState.lastError()).toBe('');
    expect(syncState.lastSyncedAt()).toBeInstanceOf(Date);
    // Asked again with nothing queued: nothing is sent.
    await syncNow();
    expect(sent).toHaveLength(4);
  });
});
