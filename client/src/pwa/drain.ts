/**
 * One run through the offline queues, with no signals, timers or tabs (those are sync.ts's), so the rules can
 * be tested on their own: training images first, one at a time, oldest first; then results in batches.
 * A result naming a person whose photos still wait (skipped, or queued meanwhile) waits too: the server must
 * never hear of someone from a result before it has their photos (a model trained in this browser names them).
 * An item leaves the queue only after the server's 2xx (a `duplicate: true` answer counts: it has it), or
 * when the server looked at it and refused it (resending cannot help; the person is told). No answer at all
 * stops the run with everything kept, results included (the server is away); a photo the server fails on
 * (5xx) is skipped until the next run, so one bad photo cannot hold up the rest.
 */
import type { CaptureDetails, PendingCapture, PendingResult } from './queue';

/** The server takes at most 100 results per request (RESULTS_BATCH_MAX). */
export const RESULTS_BATCH = 100;

export interface DrainDeps {
  queue: {
    capturesAfter(seq: number, limit: number): Promise<PendingCapture[]>;
    removeCapture(seq: number): Promise<unknown>;
    captureLabels(): Promise<Set<string>>;
    resultsAfter(seq: number, limit: number): Promise<PendingResult[]>;
    removeResults(seqs: number[]): Promise<unknown>;
  };
  postCapture(label: string, blob: Blob, captureId: string, details: CaptureDetails): Promise<unknown>;
  postResults(records: PendingResult['record'][]): Promise<unknown>;
  /** No answer at all: the server is away (stop the run). */
  isUnreachable(err: unknown): boolean;
  /** Worth another try later (keep the item) rather than refused for good (drop it and say so). */
  isRetryable(err: unknown): boolean;
  /** Something left the queue (sync.ts recounts and tells the other tabs). */
  changed(): Promise<void>;
  /** Something was refused and dropped: in words, for the person. */
  refused(message: string): void;
}

export interface DrainOutcome {
  /** Why the run stopped short or left something behind ('' when it emptied the queues). */
  error: string;
  /** True when the run went through both queues (some photos may have been skipped: see `error`). */
  finished: boolean;
}

/** `stats.stored` counts the photos the server took, also when the run fails part way. */
export async function drainQueues(deps: DrainDeps, stats = { stored: 0 }): Promise<DrainOutcome> {
  const { queue } = deps;
  let skippedProblem = '';
  for (let after = 0; ; ) {
    const [item] = await queue.capturesAfter(after, 1);
    if (!item) break;
    after = item.seq!;
    try {
      await deps.postCapture(item.label, item.blob, item.capture_id, {
        display_name: item.display_name,
        original_name: item.original_name,
        face: item.face,
      });
      stats.stored++;
    } catch (err) {
      if (deps.isUnreachable(err)) return { error: message(err), finished: false };
      if (deps.isRetryable(err)) {
        skippedProblem = message(err);
        continue;
      }
      deps.refused(`A photo of “${item.label}” taken offline was refused by the server: ${message(err)}`);
    }
    await queue.removeCapture(item.seq!);
    await deps.changed();
  }
  const waiting = await queue.captureLabels();
  let held = 0;
  for (let after = 0; ; ) {
    const page = await queue.resultsAfter(after, RESULTS_BATCH);
    if (page.length === 0) break;
    after = page.at(-1)!.seq!;
    const batch = page.filter((b) => !namesAnyOf(b.record, waiting));
    held += page.length - batch.length;
    if (batch.length === 0) continue;
    try {
      await deps.postResults(batch.map((b) => b.record));
      await queue.removeResults(batch.map((b) => b.seq!));
    } catch (err) {
      if (deps.isRetryable(err)) return { error: message(err), finished: false };
      // A batch is stored whole or not at all: send its records one by one to keep the good ones.
      for (const item of batch) {
        try {
          await deps.postResults([item.record]);
        } catch (one) {
          if (deps.isRetryable(one)) return { error: message(one), finished: false };
          deps.refused(`A result from ${item.record.captured_at} was refused by the server: ${message(one)}`);
        }
        await queue.removeResults([item.seq!]);
      }
    }
    await deps.changed();
  }
  if (held > 0 && !skippedProblem) {
    skippedProblem = `${held} ${held === 1 ? 'result waits' : 'results wait'} until the photos of the people ${held === 1 ? 'it names' : 'they name'} reach the server.`;
  }
  return { error: skippedProblem, finished: true };
}

/** Whether a recognition result names one of `labels`. */
function namesAnyOf(record: PendingResult['record'], labels: Set<string>): boolean {
  if (labels.size === 0 || record.kind !== 'recognition') return false;
  return (record.faces ?? []).some((f) => labels.has(f.label));
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
