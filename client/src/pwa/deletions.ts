/**
 * People deleted on the server (DELETE /api/images/{label}) are dropped from the offline queues before a sync
 * sends anything: their photos and the results naming them that were made before the deletion never reach the
 * server (a person re-enrolled after it keeps what was made since). The list comes from `GET /api/deletions`;
 * a server without it (older, or a role that may not read it) leaves the queues as they are, and the server
 * itself does not store a result captured before a deletion.
 */
import type { DeletedPerson } from '../../../shared/api/index';
import { authFetch } from '../auth/session';
import type { PendingCapture, PendingResult } from './queue';

export const DELETIONS_TIMEOUT_MS = 10_000;
const PAGE = 200;

export interface DeletionQueue {
  capturesAfter(seq: number, limit: number): Promise<PendingCapture[]>;
  removeCapture(seq: number): Promise<unknown>;
  resultsAfter(seq: number, limit: number): Promise<PendingResult[]>;
  removeResults(seqs: number[]): Promise<unknown>;
}

/** The deletions the server knows of, or null when it does not say (no such endpoint, no access, no answer). */
export async function fetchDeletions(): Promise<DeletedPerson[] | null> {
  try {
    const res = await authFetch('/api/deletions', { signal: AbortSignal.timeout(DELETIONS_TIMEOUT_MS) });
    if (!res.ok) return null;
    const body = (await res.json()) as { deleted?: DeletedPerson[] };
    return Array.isArray(body.deleted) ? body.deleted : null;
  } catch {
    return null;
  }
}

/** Label -> the time of its latest deletion (ms). */
function latest(deletions: readonly DeletedPerson[]): Map<string, number> {
  const at = new Map<string, number>();
  for (const d of deletions) {
    const t = Date.parse(d.deleted_at);
    if (Number.isFinite(t) && t > (at.get(d.label) ?? Number.NEGATIVE_INFINITY)) at.set(d.label, t);
  }
  return at;
}

/** Removes the queued photos and results of people deleted after they were made; how many of each. */
export async function dropDeleted(
  queue: DeletionQueue,
  deletions: readonly DeletedPerson[],
): Promise<{ captures: number; results: number }> {
  const dropped = { captures: 0, results: 0 };
  const deleted = latest(deletions);
  if (deleted.size === 0) return dropped;
  const before = (label: string, madeAt: number) => {
    const at = deleted.get(label);
    return at !== undefined && madeAt <= at;
  };
  for (let after = 0; ; ) {
    const page = await queue.capturesAfter(after, PAGE);
    if (page.length === 0) break;
    after = page.at(-1)!.seq!;
    for (const c of page) {
      if (!before(c.label, c.created)) continue;
      await queue.removeCapture(c.seq!);
      dropped.captures++;
    }
  }
  for (let after = 0; ; ) {
    const page = await queue.resultsAfter(after, PAGE);
    if (page.length === 0) break;
    after = page.at(-1)!.seq!;
    const gone = page.filter(({ record }) => {
      if (record.kind !== 'recognition') return false;
      const captured = Date.parse(record.captured_at);
      return (record.faces ?? []).some((f) => before(f.label, captured));
    });
    if (gone.length === 0) continue;
    await queue.removeResults(gone.map((r) => r.seq!));
    dropped.results += gone.length;
  }
  return dropped;
}
