/**
 * The results history: recognition and object results captured on devices (a kiosk that was offline sends
 * them later), kept in arrival order in one JSON file, `<dir>/results.json`.
 *
 * - Bounded: at most `max` records; the oldest received are dropped first.
 * - Deduplicated by the client-made `id`: a re-sent record is not stored twice. Ids are remembered for the
 *   kept records and for up to `max` more dropped ones, so a record is recognised as a duplicate as long as
 *   it is among the last 2 x `max` records received (and always while it is kept).
 * - Durable: every change is written with writeFileAtomic (temp + rename) before `add` resolves, and writes
 *   are serialised (one at a time; a write always carries every change made before it started), so
 *   concurrent adds never lose a record.
 * - A file that cannot be read back (corrupt JSON, wrong shape) is set aside as `results.json.corrupt-<time>`
 *   with a warning, and the history starts empty: never a crash.
 *
 * No HTTP here: the routes (server/routes/results.ts) and, later, the event pipeline use it alike.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resultRecordInput, type ResultRecord, type ResultRecordInput } from '../../shared/api/index.js';
import type { Logger } from '../logger.js';
import { removeStaleTemps, writeFileAtomic } from './atomic.js';

export const RESULTS_FILE = 'results.json';
const FILE_FORMAT = 'lookout-results';
const FILE_VERSION = 1;

const storedRecord = resultRecordInput.and(z.object({ received_at: z.string() }));
const storedFile = z.object({
  format: z.literal(FILE_FORMAT),
  version: z.literal(FILE_VERSION),
  records: z.array(storedRecord),
  /** Ids of dropped records still remembered for dedup, oldest first. */
  forgotten_ids: z.array(z.string()).default([]),
});

export interface AddOutcome {
  accepted: number;
  duplicates: number;
  total: number;
}

export interface ResultQuery {
  limit: number;
  kind?: ResultRecord['kind'];
  /** A face label (recognition) or an object class name (objects). */
  label?: string;
}

export interface ResultStoreOptions {
  dir: string;
  max: number;
  log: Logger;
  /** The server's clock, for received_at (tests pass their own). */
  now?: () => Date;
}

export class ResultStore {
  /** Arrival order, oldest first. */
  private records: ResultRecord[] = [];
  /** Ids of the kept records. */
  private readonly kept = new Set<string>();
  /** Ids of dropped records, oldest first, at most `max` of them (still duplicates when re-sent). */
  private forgotten: string[] = [];
  private readonly forgottenSet = new Set<string>();
  /** The write queued to run after the one in progress; every add before it starts is in it. */
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();
  private readonly file: string;
  private readonly now: () => Date;

  constructor(private readonly opts: ResultStoreOptions) {
    if (!Number.isInteger(opts.max) || opts.max < 1) throw new RangeError('ResultStore: max must be a positive integer');
    this.file = path.join(opts.dir, RESULTS_FILE);
    this.now = opts.now ?? (() => new Date());
  }

  get max(): number {
    return this.opts.max;
  }

  get size(): number {
    return this.records.length;
  }

  async init(): Promise<void> {
    await fs.mkdir(this.opts.dir, { recursive: true });
    await removeStaleTemps(this.opts.dir);
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    let parsed: z.output<typeof storedFile>;
    try {
      const result = storedFile.safeParse(JSON.parse(text));
      if (!result.success) {
        const issue = result.error.issues[0];
        throw new Error(`${issue.path.join('.') || 'the file'}: ${issue.message}`);
      }
      parsed = result.data;
    } catch (err) {
      const aside = `${this.file}.corrupt-${this.now().toISOString().replace(/[:.]/g, '-')}`;
      await fs.rename(this.file, aside);
      this.opts.log.warn(
        `${RESULTS_FILE} could not be read (${err instanceof Error ? err.message : String(err)}); set aside as ${path.basename(aside)}, the results history starts empty`,
      );
      return;
    }
    for (const id of parsed.forgotten_ids) this.forget(id);
    for (const record of parsed.records) {
      if (this.kept.has(record.id)) continue;
      this.records.push(record as ResultRecord);
      this.kept.add(record.id);
    }
    // RESULTS_MAX may have been lowered since the file was written.
    const trimmed = this.trim();
    if (trimmed > 0) {
      this.opts.log.info(`results history: dropped the ${trimmed} oldest records to keep RESULTS_MAX=${this.opts.max}`);
      await this.flush();
    }
  }

  /** Whether a record with this id is kept or still remembered as dropped. */
  has(id: string): boolean {
    return this.kept.has(id) || this.forgottenSet.has(id);
  }

  /**
   * Stores the records not seen before (a repeated id, also within the same batch, is a duplicate) and
   * resolves once they are on disk. The batch is stored in the order the devices captured it.
   */
  async add(inputs: readonly ResultRecordInput[]): Promise<AddOutcome> {
    const receivedAt = this.now().toISOString();
    const fresh: ResultRecord[] = [];
    const ids = new Set<string>();
    for (const input of inputs) {
      if (this.has(input.id) || ids.has(input.id)) continue;
      ids.add(input.id);
      fresh.push({ ...input, received_at: receivedAt });
    }
    fresh.sort((a, b) => Date.parse(a.captured_at) - Date.parse(b.captured_at));
    for (const record of fresh) {
      this.records.push(record);
      this.kept.add(record.id);
    }
    this.trim();
    const outcome = { accepted: fresh.length, duplicates: inputs.length - fresh.length, total: this.records.length };
    if (fresh.length > 0) await this.flush();
    return outcome;
  }

  /** Newest first, filtered; `matched` counts every record the filters match. */
  query(q: ResultQuery): { results: ResultRecord[]; matched: number } {
    const results: ResultRecord[] = [];
    let matched = 0;
    for (let i = this.records.length - 1; i >= 0; i--) {
      const r = this.records[i];
      if (q.kind && r.kind !== q.kind) continue;
      if (q.label !== undefined && !mentions(r, q.label)) continue;
      matched++;
      if (results.length < q.limit) results.push(r);
    }
    return { results, matched };
  }

  /** Resolves when every change made so far is on disk. */
  async flush(): Promise<void> {
    this.queued ??= this.tail.then(() => {
      // From here on, changes wait for the next write: this one takes the state as it is now.
      this.queued = null;
      return this.write();
    });
    const write = this.queued;
    this.tail = write.catch(() => {});
    return write;
  }

  private async write(): Promise<void> {
    const body = { format: FILE_FORMAT, version: FILE_VERSION, records: this.records, forgotten_ids: this.forgotten };
    await writeFileAtomic(this.file, JSON.stringify(body));
  }

  /** Drops the oldest records beyond `max`; their ids stay remembered. Returns how many were dropped. */
  private trim(): number {
    const over = this.records.length - this.opts.max;
    if (over <= 0) return 0;
    for (const r of this.records.splice(0, over)) {
      this.kept.delete(r.id);
      this.forget(r.id);
    }
    return over;
  }

  private forget(id: string): void {
    if (this.forgottenSet.has(id)) return;
    this.forgotten.push(id);
    this.forgottenSet.add(id);
    if (this.forgotten.length > this.opts.max) {
      const excess = this.forgotten.splice(0, this.forgotten.length - this.opts.max);
      for (const old of excess) this.forgottenSet.delete(old);
    }
  }
}

function mentions(r: ResultRecord, label: string): boolean {
  const wanted = label.toLowerCase();
  return (r.faces?.some((f) => f.label.toLowerCase() === wanted) ?? false) || (r.objects?.some((o) => o.class_name === wanted) ?? false);
}
