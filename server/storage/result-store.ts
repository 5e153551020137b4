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
 * - Shared: API replicas on one DATA_DIR each keep the history in memory, but every write is a
 *   read-merge-write under a lock file (`.results.lock`, server/storage/file-lock.ts): the file as the
 *   others left it, plus this process's new records (deduplicated by id against it). `refresh()` (a stat,
 *   and a read only when the file changed) brings the memory up to date before a query.
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
import { FileLock } from './file-lock.js';

export const RESULTS_FILE = 'results.json';
/** The cross-process lock every write of results.json holds (API replicas sharing one DATA_DIR). */
export const RESULTS_LOCK_FILE = '.results.lock';
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
  /** A results lock not refreshed for this long was left by a crashed process and is taken over (default 10 s). */
  lockStaleMs?: number;
}

interface PendingAdd {
  fresh: ResultRecord[];
  duplicates: number;
  resolve: (outcome: AddOutcome) => void;
  reject: (err: unknown) => void;
}

/** What identifies one version of the file (an atomic rename always makes a new inode). */
function fileSignature(st: { ino: number; size: number; mtimeMs: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

export class ResultStore {
  /** Arrival order, oldest first. */
  private records: ResultRecord[] = [];
  /** Ids of the kept records. */
  private readonly kept = new Set<string>();
  /** Ids of dropped records, oldest first, at most `max` of them (still duplicates when re-sent). */
  private forgotten: string[] = [];
  private readonly forgottenSet = new Set<string>();
  /** Adds waiting for the next write. */
  private pending: PendingAdd[] = [];
  /** The write queued to run after the one in progress; every add before it starts is in it. */
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();
  /** The file version the memory reflects (null: no file). */
  private seen: string | null = null;
  private readonly file: string;
  private readonly lock: FileLock;
  private readonly now: () => Date;

  constructor(private readonly opts: ResultStoreOptions) {
    if (!Number.isInteger(opts.max) || opts.max < 1) throw new RangeError('ResultStore: max must be a positive integer');
    this.file = path.join(opts.dir, RESULTS_FILE);
    this.lock = new FileLock(path.join(opts.dir, RESULTS_LOCK_FILE), { staleMs: opts.lockStaleMs ?? 10_000 });
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
    await this.lock.run(async () => {
      // Temporary files are only written holding the lock: any found now were left by a crash.
      await removeStaleTemps(this.opts.dir);
      await this.load();
      // RESULTS_MAX may have been lowered since the file was written.
      const trimmed = this.trim();
      if (trimmed > 0) {
        this.opts.log.info(`results history: dropped the ${trimmed} oldest records to keep RESULTS_MAX=${this.opts.max}`);
        await this.write();
      }
    });
  }

  /**
   * Reads the file again when another process (an API replica on the same DATA_DIR) changed it since this one
   * last read or wrote it: a stat, and a read only when it changed.
   */
  async refresh(): Promise<void> {
    let signature: string | null;
    try {
      signature = fileSignature(await fs.stat(this.file));
    } catch {
      signature = null;
    }
    if (signature === this.seen) return;
    // Behind the writes of this process, so memory never goes back to before one of them.
    const reload = this.tail.then(() => this.load());
    this.tail = reload.catch(() => {});
    await reload;
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
      if (ids.has(input.id)) continue;
      ids.add(input.id);
      fresh.push({ ...input, received_at: receivedAt });
    }
    fresh.sort((a, b) => Date.parse(a.captured_at) - Date.parse(b.captured_at));
    const outcome = new Promise<AddOutcome>((resolve, reject) => {
      this.pending.push({ fresh, duplicates: inputs.length - fresh.length, resolve, reject });
    });
    void this.flush().catch(() => {});
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
      // From here on, adds wait for the next write: this one takes those pending now.
      this.queued = null;
      const batch = this.pending;
      this.pending = [];
      return this.merge(batch);
    });
    const write = this.queued;
    this.tail = write.catch(() => {});
    return write;
  }

  /**
   * Read-merge-write under the cross-process lock: the file as the other replicas left it, plus this
   * process's pending adds (deduplicated against it by id), trimmed, written back.
   */
  private async merge(batch: PendingAdd[]): Promise<void> {
    if (batch.length === 0) return;
    const outcomes: AddOutcome[] = [];
    try {
      await this.lock.run(async () => {
        await this.load();
        let added = 0;
        for (const add of batch) {
          let accepted = 0;
          for (const record of add.fresh) {
            if (this.has(record.id)) continue;
            this.records.push(record);
            this.kept.add(record.id);
            accepted++;
          }
          added += accepted;
          this.trim();
          outcomes.push({ accepted, duplicates: add.duplicates + add.fresh.length - accepted, total: this.records.length });
        }
        if (added > 0) await this.write();
      });
    } catch (err) {
      for (const add of batch) add.reject(err);
      throw err;
    }
    for (const [i, add] of batch.entries()) add.resolve(outcomes[i]);
  }

  /** Replaces the memory with the file (empty when there is none, or when it is set aside as corrupt). */
  private async load(): Promise<void> {
    this.records = [];
    this.kept.clear();
    this.forgotten = [];
    this.forgottenSet.clear();
    this.seen = null;
    let text: string;
    let signature: string;
    try {
      const handle = await fs.open(this.file, 'r');
      try {
        signature = fileSignature(await handle.stat());
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
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
    this.seen = signature;
  }

  /** Writes the memory to the file; called holding the lock. */
  private async write(): Promise<void> {
    const body = { format: FILE_FORMAT, version: FILE_VERSION, records: this.records, forgotten_ids: this.forgotten };
    await writeFileAtomic(this.file, JSON.stringify(body));
    this.seen = fileSignature(await fs.stat(this.file));
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
