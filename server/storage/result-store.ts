/**
 * The results history: recognition and object results captured on devices (a kiosk that was offline sends
 * them later), kept in arrival order in an append-only log, `<dir>/results.jsonl`: a header line, then one JSON
 * record per line.
 *
 * - Bounded: at most `max` records are kept; the oldest received are dropped first. The log grows by appends
 *   only, and is compacted (rewritten with the kept records, atomically) when it holds more than 2 x `max`
 *   records, so a POST costs a write of its own records, not of the whole history.
 * - Deduplicated by the client-made `id`: a re-sent record is not stored twice. Ids are remembered for the
 *   kept records and for up to `max` more dropped ones (the header of a compacted log lists those), so a record
 *   is recognised as a duplicate as long as it is among the last 2 x `max` records received (and always while
 *   it is kept).
 * - Durable: the new lines are appended in one write and flushed to disk before `add` resolves; adds are
 *   serialised (one append at a time, each carrying every add made before it started), so concurrent adds
 *   never lose a record. A line torn by a crash (no newline at its end) is ignored when read and cut off
 *   before the next append.
 * - Shared: API replicas on one DATA_DIR each keep the history in memory, and every append or compaction holds
 *   a lock file (`.results.lock`, server/storage/file-lock.ts); before appending, a replica reads what the
 *   others appended since it last looked (only the new bytes; all of it after another's compaction), and
 *   deduplicates against it. `refresh()` (a stat, and a read of the new bytes when there are any) brings the
 *   memory up to date before a query.
 * - The history of earlier versions (`results.json`, one JSON document) is moved into the log at the first
 *   start and renamed `results.json.migrated`. A file that cannot be read back (corrupt JSON, wrong shape) is
 *   set aside as `<name>.corrupt-<time>` with a warning, and the history starts empty: never a crash. A
 *   single bad line of the log is skipped with a warning.
 * - A symbolic link in place of the log is never followed (it is refused, as corrupt files are).
 *
 * No HTTP here: the routes (server/routes/results.ts) and, later, the event pipeline use it alike.
 */
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resultRecordInput, type ResultRecord, type ResultRecordInput } from '../../shared/api/index.js';
import type { Logger } from '../logger.js';
import { removeStaleTemps, writeFileAtomic } from './atomic.js';
import { FileLock } from './file-lock.js';

export const RESULTS_FILE = 'results.jsonl';
/** The single JSON document earlier versions kept the history in; migrated into RESULTS_FILE at start. */
export const LEGACY_RESULTS_FILE = 'results.json';
/** The cross-process lock every append and compaction holds (API replicas sharing one DATA_DIR). */
export const RESULTS_LOCK_FILE = '.results.lock';
const LOG_FORMAT = 'lookout-results-log';
const LOG_VERSION = 2;
/** The log is compacted when it holds more than this many times `max` records. */
const COMPACT_FACTOR = 2;

const storedRecord = resultRecordInput.and(z.object({ received_at: z.string() }));
const header = z.object({
  format: z.literal(LOG_FORMAT),
  version: z.literal(LOG_VERSION),
  /** Ids of records dropped by the compaction that wrote this log, still remembered for dedup, oldest first. */
  forgotten_ids: z.array(z.string()).default([]),
});
const legacyFile = z.object({
  format: z.literal('lookout-results'),
  version: z.literal(1),
  records: z.array(storedRecord),
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

/** A kept record with its line in the log (written again as it is when the log is compacted). */
interface Kept {
  record: ResultRecord;
  line: string;
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Opens a file of the results folder for reading without following a link; null when there is none. */
async function openForReading(file: string): Promise<fs.FileHandle | null> {
  try {
    return await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if (code(err) === 'ENOENT') return null;
    throw err;
  }
}

export class ResultStore {
  /** Arrival order, oldest first. */
  private kept: Kept[] = [];
  /** Ids of the kept records. */
  private readonly keptIds = new Set<string>();
  /** Ids of dropped records, oldest first, at most `max` of them (still duplicates when re-sent). */
  private forgotten: string[] = [];
  private readonly forgottenSet = new Set<string>();
  /** Adds waiting for the next append. */
  private pending: PendingAdd[] = [];
  /** The append queued to run after the one in progress; every add before it starts is in it. */
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();
  /** The log as this process last read or wrote it: its inode, the bytes of complete lines, its record lines. */
  private logIno: number | null = null;
  private offset = 0;
  private lines = 0;
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
    return this.kept.length;
  }

  async init(): Promise<void> {
    await fs.mkdir(this.opts.dir, { recursive: true });
    await this.lock.run(async () => {
      // Temporary files are only written holding the lock: any found now were left by a crash.
      await removeStaleTemps(this.opts.dir);
      await this.migrateLegacy();
      await this.reload();
      // RESULTS_MAX may have been lowered since the log was written, or it holds dropped records: compact.
      if (this.lines > this.opts.max) await this.compact();
    });
  }

  /**
   * Reads what another process (an API replica on the same DATA_DIR) appended since this one last read or wrote
   * the log: a stat, and a read of the new bytes only when there are some.
   */
  async refresh(): Promise<void> {
    let st: { ino: number; size: number } | null;
    try {
      st = await fs.lstat(this.file);
    } catch {
      st = null;
    }
    if (st ? st.ino === this.logIno && st.size === this.offset : this.logIno === null) return;
    // Behind the appends of this process, so memory never goes back to before one of them.
    const catchUp = this.tail.then(() => this.catchUp());
    this.tail = catchUp.catch(() => {});
    await catchUp;
  }

  /** Whether a record with this id is kept or still remembered as dropped. */
  has(id: string): boolean {
    return this.keptIds.has(id) || this.forgottenSet.has(id);
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
    for (let i = this.kept.length - 1; i >= 0; i--) {
      const r = this.kept[i].record;
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
      // From here on, adds wait for the next append: this one takes those pending now.
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
   * Under the cross-process lock: what the other replicas appended, then this process's pending adds
   * (deduplicated against it by id) appended as new lines; compacted when the log has grown past its bound.
   */
  private async merge(batch: PendingAdd[]): Promise<void> {
    if (batch.length === 0) return;
    const outcomes: AddOutcome[] = [];
    try {
      await this.lock.run(async () => {
        await this.catchUp();
        const appended: string[] = [];
        for (const add of batch) {
          let accepted = 0;
          for (const record of add.fresh) {
            if (this.has(record.id)) continue;
            const line = JSON.stringify(record);
            this.keep({ record, line });
            appended.push(line);
            accepted++;
          }
          this.trim();
          outcomes.push({ accepted, duplicates: add.duplicates + add.fresh.length - accepted, total: this.kept.length });
        }
        // No log yet (or it vanished): one is written with everything kept, the new records included.
        if (appended.length > 0) await (this.logIno === null ? this.compact() : this.append(appended));
        if (this.lines > COMPACT_FACTOR * this.opts.max) await this.compact();
      });
    } catch (err) {
      for (const add of batch) add.reject(err);
      throw err;
    }
    for (const [i, add] of batch.entries()) add.resolve(outcomes[i]);
  }

  /**
   * Appends lines in one write and flushes them. Called holding the lock, after catchUp: anything past the
   * complete lines read so far is a line torn by a crashed writer, cut off first.
   */
  private async append(lines: string[]): Promise<void> {
    const handle = await fs.open(this.file, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    try {
      const st = await handle.stat();
      if (st.ino !== this.logIno) throw new Error(`${RESULTS_FILE} was replaced while the results lock was held`);
      if (st.size > this.offset) {
        this.opts.log.warn(`${RESULTS_FILE}: cut off ${st.size - this.offset} bytes of a line torn by a crash`);
        await handle.truncate(this.offset);
      }
      const bytes = Buffer.from(`${lines.join('\n')}\n`);
      await handle.write(bytes);
      await handle.datasync();
      this.offset += bytes.length;
      this.lines += lines.length;
    } finally {
      await handle.close();
    }
  }

  /** Rewrites the log with the kept records only (atomically: temp + rename); called holding the lock. */
  private async compact(): Promise<void> {
    const head = JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION, forgotten_ids: this.forgotten });
    // One string per chunk of lines rather than one of the whole history.
    const chunks = [`${head}\n`];
    for (let i = 0; i < this.kept.length; i += 256) {
      chunks.push(
        `${this.kept
          .slice(i, i + 256)
          .map((k) => k.line)
          .join('\n')}\n`,
      );
    }
    await writeFileAtomic(this.file, chunks);
    const st = await fs.lstat(this.file);
    this.logIno = st.ino;
    this.offset = st.size;
    this.lines = this.kept.length;
  }

  /** Brings the memory up to the log: the new complete lines when it only grew, else all of it again. */
  private async catchUp(): Promise<void> {
    const handle = await openForReading(this.file);
    if (!handle) {
      if (this.logIno !== null) this.clear();
      return;
    }
    try {
      const st = await handle.stat();
      if (st.ino !== this.logIno || st.size < this.offset) return await this.readAll(handle, st);
      if (st.size === this.offset) return;
      const buffer = Buffer.alloc(st.size - this.offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
      const text = buffer.subarray(0, bytesRead).toString('utf8');
      const end = text.lastIndexOf('\n') + 1;
      if (end === 0) return; // a line still being written (or torn): read once it is complete
      this.applyLines(text.slice(0, end));
      this.offset += Buffer.byteLength(text.slice(0, end));
      this.trim();
    } finally {
      await handle.close();
    }
  }

  /** Replaces the memory with the log (empty when there is none, or when it is set aside as corrupt). */
  private async reload(): Promise<void> {
    const handle = await openForReading(this.file).catch(async (err: unknown) => {
      if (code(err) !== 'ELOOP') throw err;
      await this.setAside(this.file, 'it is a symbolic link');
      return null;
    });
    if (!handle) return this.clear();
    try {
      await this.readAll(handle, await handle.stat());
    } finally {
      await handle.close();
    }
  }

  private async readAll(handle: fs.FileHandle, st: { ino: number; size: number }): Promise<void> {
    this.clear();
    const text = (await handle.readFile()).toString('utf8');
    const firstEnd = text.indexOf('\n');
    const parsed = header.safeParse(
      (() => {
        try {
          return JSON.parse(firstEnd < 0 ? text : text.slice(0, firstEnd));
        } catch {
          return null;
        }
      })(),
    );
    if (firstEnd < 0 || !parsed.success) {
      await this.setAside(this.file, 'its first line is not the results log header');
      return;
    }
    for (const id of parsed.data.forgotten_ids) this.forget(id);
    const end = text.lastIndexOf('\n') + 1;
    this.applyLines(text.slice(firstEnd + 1, end));
    this.trim();
    this.logIno = st.ino;
    this.offset = Buffer.byteLength(text.slice(0, end));
  }

  /** Adds the records of complete log lines (after the header); a line that is not a record is skipped. */
  private applyLines(text: string): void {
    let bad = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      this.lines++;
      let record: ResultRecord;
      try {
        const result = storedRecord.safeParse(JSON.parse(line));
        if (!result.success) throw new Error(result.error.issues[0].message);
        record = result.data as ResultRecord;
      } catch {
        bad++;
        continue;
      }
      if (!this.has(record.id)) this.keep({ record, line });
    }
    if (bad > 0) this.opts.log.warn(`${RESULTS_FILE}: skipped ${bad} lines that are not results records`);
  }

  /**
   * The history of earlier versions (one JSON document) becomes the log, once, holding the lock; the old file
   * is kept beside it as `results.json.migrated`.
   */
  private async migrateLegacy(): Promise<void> {
    const legacy = path.join(this.opts.dir, LEGACY_RESULTS_FILE);
    try {
      await fs.lstat(this.file);
      return;
    } catch {
      // No log yet: the legacy file, if any, becomes it.
    }
    let handle: fs.FileHandle | null;
    try {
      handle = await openForReading(legacy);
    } catch (err) {
      if (code(err) !== 'ELOOP') throw err;
      return this.setAside(legacy, 'it is a symbolic link');
    }
    if (!handle) return;
    let parsed: z.output<typeof legacyFile>;
    try {
      const text = await handle.readFile('utf8');
      const result = legacyFile.safeParse(JSON.parse(text));
      if (!result.success) {
        const issue = result.error.issues[0];
        throw new Error(`${issue.path.join('.') || 'the file'}: ${issue.message}`);
      }
      parsed = result.data;
    } catch (err) {
      return this.setAside(legacy, messageOf(err));
    } finally {
      await handle.close();
    }
    this.clear();
    for (const id of parsed.forgotten_ids) this.forget(id);
    for (const record of parsed.records) {
      if (!this.has(record.id)) this.keep({ record: record as ResultRecord, line: JSON.stringify(record) });
    }
    this.trim();
    await this.compact();
    await fs.rename(legacy, `${legacy}.migrated`);
    this.opts.log.info(`results history: moved ${this.kept.length} records from ${LEGACY_RESULTS_FILE} to ${RESULTS_FILE}`);
  }

  private async setAside(file: string, why: string): Promise<void> {
    const aside = `${file}.corrupt-${this.now().toISOString().replace(/[:.]/g, '-')}`;
    await fs.rename(file, aside);
    this.opts.log.warn(
      `${path.basename(file)} could not be read (${why}); set aside as ${path.basename(aside)}, the results history starts empty`,
    );
    this.clear();
  }

  private clear(): void {
    this.kept = [];
    this.keptIds.clear();
    this.forgotten = [];
    this.forgottenSet.clear();
    this.logIno = null;
    this.offset = 0;
    this.lines = 0;
  }

  private keep(k: Kept): void {
    this.kept.push(k);
    this.keptIds.add(k.record.id);
  }

  /** Drops the oldest records beyond `max`; their ids stay remembered. Returns how many were dropped. */
  private trim(): number {
    const over = this.kept.length - this.opts.max;
    if (over <= 0) return 0;
    for (const { record } of this.kept.splice(0, over)) {
      this.keptIds.delete(record.id);
      this.forget(record.id);
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
