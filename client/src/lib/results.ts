/**
 * Keeping what the in-browser engines saw: `recordResult` puts a recognition or detection result in the
 * offline queue (IndexedDB) and asks the sync loop to send it to `POST /api/results`. Queued first, always:
 * a result made while the server is away reaches it later, exactly once (the record's id is the dedup key).
 */
import type { ResultRecordInput } from '../../../shared/api/index';
import { randomUuid } from '../pwa/ids';
import { queue, storageProblem } from '../pwa/queue';
import { queuedOne, reportProblem, syncSoon } from '../pwa/sync';

/** A result to record; `id` and `captured_at` are filled in (a new UUID, now) when left out. */
export type ResultToRecord = Omit<ResultRecordInput, 'id' | 'captured_at'> & Partial<Pick<ResultRecordInput, 'id' | 'captured_at'>>;

/**
 * Queues the result and starts a sync within a second (results made together go in one request). Resolves with the record's id once it is safely queued; never
 * rejects (a live loop should not stop over this): a problem shows in the sync status instead.
 */
export async function recordResult(rec: ResultToRecord): Promise<string> {
  const record: ResultRecordInput = { ...rec, id: rec.id ?? randomUuid(), captured_at: rec.captured_at ?? new Date().toISOString() };
  try {
    const dropped = await queue.addResult(record);
    if (dropped > 0)
      reportProblem(`${dropped} of the oldest unsent results were discarded: this device keeps at most a few thousand waiting.`);
    await queuedOne();
    syncSoon();
  } catch (err) {
    reportProblem(`A result could not be kept on this device to be sent later: ${storageProblem(err)}.`);
  }
  return record.id;
}
