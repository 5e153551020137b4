/**
 * The sync rules (drain.ts) on the real queues (fake-indexeddb) and a fake server: each queued item reaches
 * the server exactly once, photos before results, nothing is lost when the server is away or fails, and what
 * the server refuses is dropped and reported.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drainQueues, RESULTS_BATCH, type DrainDeps } from './drain';
import { queue, type PendingResult } from './queue';

type ResultRecordInput = PendingResult['record'];

/** A failure as transport.ts throws them: `status` 0 when there was no answer. */
class Failure extends Error {
  constructor(readonly status: number) {
    super(status === 0 ? 'Cannot reach the Lookout server.' : `The server answered ${status}.`);
  }
}

/** A fake server: records every request; `fail` decides an answer other than 2xx for a request. */
function fakeServer() {
  const log: string[] = [];
  const server = {
    log,
    photos: [] as string[],
    results: [] as string[],
    refusedMessages: [] as string[],
    fail: (_what: string): number | null => null,
  };
  const answer = (what: string) => {
    log.push(what);
    const status = server.fail(what);
    if (status !== null) throw new Failure(status);
  };
  const deps: DrainDeps = {
    queue,
    async postCapture(_label, _blob, captureId) {
      answer(`photo ${captureId}`);
      server.photos.push(captureId);
    },
    async postResults(records) {
      answer(`results ${records.map((r) => r.id).join(',')}`);
      server.results.push(...records.map((r) => r.id));
    },
    isUnreachable: (err) => err instanceof Failure && err.status === 0,
    isRetryable: (err) => !(err instanceof Failure) || err.status === 0 || err.status >= 500,
    changed: async () => undefined,
    refused: (m) => server.refusedMessages.push(m),
  };
  return { server, deps };
}

const capture = (id: string) => queue.addCapture({ capture_id: id, label: 'grace', blob: new Blob([id]), created: Date.now() });
const result = (id: string) =>
  queue.addResult({
    id,
    kind: 'recognition',
    captured_at: '2026-01-01T00:00:00.000Z',
    engine: 'browser',
    faces: [],
  } as unknown as ResultRecordInput);

async function reset(): Promise<void> {
  await queue.close();
  await new Promise<void>((resolve, reject) => {
    const req = indexedDB.deleteDatabase('lookout-offline');
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}
beforeEach(reset);
afterEach(reset);

describe('drainQueues', () => {
  it('sends a photo taken offline with its display name, file name and picked face, as it was taken', async () => {
    const face = { x: 10, y: 20, w: 30, h: 40 };
    await queue.addCapture({
      capture_id: 'c-details',
      label: 'marie-curie',
      display_name: 'Marie Curie',
      original_name: 'brick.png',
      face,
      blob: new Blob(['x']),
      created: Date.now(),
    });
    const { deps } = fakeServer();
    const sent: unknown[] = [];
    deps.postCapture = async (label, _blob, captureId, details) => {
      sent.push({ label, captureId, details });
    };
    expect((await drainQueues(deps)).error).toBe('');
    expect(sent).toEqual([
      { label: 'marie-curie', captureId: 'c-details', details: { display_name: 'Marie Curie', original_name: 'brick.png', face } },
    ]);
  });

  it('sends each queued item once, photos first, and empties the queues', async () => {
    await result('r1');
    await capture('c1');
    await capture('c2');
    await result('r2');
    const { server, deps } = fakeServer();
    const stats = { stored: 0 };
    expect(await drainQueues(deps, stats)).toEqual({ error: '', finished: true });
    expect(server.log).toEqual(['photo c1', 'photo c2', 'results r1,r2']);
    expect(stats.stored).toBe(2);
    expect(await queue.countCaptures()).toBe(0);
    expect(await queue.countResults()).toBe(0);
    // A second run has nothing to send.
    expect(await drainQueues(deps)).toEqual({ error: '', finished: true });
    expect(server.log).toHaveLength(3);
  });

  it('keeps everything, results included, when the server does not answer', async () => {
    await capture('c1');
    await result('r1');
    const { server, deps } = fakeServer();
    server.fail = () => 0;
    const outcome = await drainQueues(deps);
    expect(outcome.finished).toBe(false);
    expect(outcome.error).toMatch(/Cannot reach/);
    expect(server.log).toEqual(['photo c1']);
    expect(await queue.countCaptures()).toBe(1);
    expect(await queue.countResults()).toBe(1);

    // The server back: the next run sends each once.
    server.fail = () => null;
    expect(await drainQueues(deps)).toEqual({ error: '', finished: true });
    expect(server.photos).toEqual(['c1']);
    expect(server.results).toEqual(['r1']);
  });

  it('skips a photo the server fails on (5xx) until the next run, and sends the rest', async () => {
    await capture('bad');
    await capture('good');
    await result('r1');
    const { server, deps } = fakeServer();
    server.fail = (what) => (what === 'photo bad' ? 500 : null);
    const outcome = await drainQueues(deps);
    expect(outcome).toEqual({ error: 'The server answered 500.', finished: true });
    expect(server.photos).toEqual(['good']);
    expect(server.results).toEqual(['r1']);
    expect((await queue.capturesAfter(0, 10)).map((c) => c.capture_id)).toEqual(['bad']);

    server.fail = () => null;
    await drainQueues(deps);
    expect(server.photos).toEqual(['good', 'bad']);
    expect(await queue.countCaptures()).toBe(0);
  });

  it('drops and reports a photo the server refuses (4xx)', async () => {
    await capture('c1');
    const { server, deps } = fakeServer();
    server.fail = () => 400;
    expect(await drainQueues(deps)).toEqual({ error: '', finished: true });
    expect(await queue.countCaptures()).toBe(0);
    expect(server.refusedMessages).toEqual(['A photo of “grace” taken offline was refused by the server: The server answered 400.']);
  });

  it('keeps a batch of results the server fails on, and sends it once when it recovers', async () => {
    await result('r1');
    await result('r2');
    const { server, deps } = fakeServer();
    server.fail = () => 503;
    expect((await drainQueues(deps)).finished).toBe(false);
    expect(await queue.countResults()).toBe(2);
    server.fail = () => null;
    await drainQueues(deps);
    expect(server.results).toEqual(['r1', 'r2']);
  });

  it('sends a refused batch one by one, keeping the good results and reporting the bad one', async () => {
    await result('r1');
    await result('bad');
    await result('r3');
    const { server, deps } = fakeServer();
    server.fail = (what) => (what.includes('bad') ? 422 : null);
    expect(await drainQueues(deps)).toEqual({ error: '', finished: true });
    expect(server.log).toEqual(['results r1,bad,r3', 'results r1', 'results bad', 'results r3']);
    expect(server.results).toEqual(['r1', 'r3']);
    expect(server.refusedMessages).toHaveLength(1);
    expect(await queue.countResults()).toBe(0);
  });

  it('holds results naming a person until their photos have reached the server', async () => {
    const named = (id: string, label: string) =>
      queue.addResult({
        id,
        kind: 'recognition',
        captured_at: '2026-01-01T00:00:00.000Z',
        engine: 'browser',
        faces: [{ label, confidence: 70, x: 0, y: 0, w: 10, h: 10 }],
      } as unknown as ResultRecordInput);
    await named('r-kiosk', 'kiosk');
    await named('r-grace', 'grace');
    await queue.addCapture({ capture_id: 'k1', label: 'kiosk', blob: new Blob(['k1']), created: Date.now() });
    const { server, deps } = fakeServer();
    // Her photo fails (5xx) this run: the result naming her waits with it, the other goes.
    server.fail = (what) => (what === 'photo k1' ? 500 : null);
    const outcome = await drainQueues(deps);
    expect(outcome.finished).toBe(true);
    expect(server.log).toEqual(['photo k1', 'results r-grace']);
    expect(await queue.countResults()).toBe(1);

    server.fail = () => null;
    expect(await drainQueues(deps)).toEqual({ error: '', finished: true });
    expect(server.log.slice(2)).toEqual(['photo k1', 'results r-kiosk']);
    expect(await queue.countResults()).toBe(0);
  });

  it('sends results in batches the server accepts', async () => {
    for (let i = 0; i < RESULTS_BATCH * 2 + 5; i++) await result(`r${i}`);
    const { server, deps } = fakeServer();
    await drainQueues(deps);
    expect(server.log.map((l) => l.split(',').length)).toEqual([RESULTS_BATCH, RESULTS_BATCH, 5]);
    expect(new Set(server.results).size).toBe(RESULTS_BATCH * 2 + 5);
  });
});
