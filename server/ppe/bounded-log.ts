/**
 * A bounded, durable log of records in one JSON file (the PPE history and the local dead letters), kept as the
 * results history keeps its file (server/storage/result-store.ts):
 *
 * - Bounded: at most `max` records; the oldest are dropped first.
 * - Durable: every change is written with writeFileAtomic (temp + rename) before `add` resolves, and writes are
 *   serialised (one at a time; a write carries every change made before it started), so concurrent adds never
 *   lose a record.
 * - A file that cannot be read back (corrupt JSON, wrong shape) is set aside as `<file>.corrupt-<time>` with a
 *   warning and the log starts empty: never a crash. Records that do not match the schema any more are skipped.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Logger } from '../logger.js';
import { removeStaleTemps, writeFileAtomic } from '../storage/atomic.js';
import { readFileNoFollow } from '../storage/no-follow.js';
import { privateDir } from '../storage/private-modes.js';

export interface BoundedLogOptions<T> {
  file: string;
  /** Names the file's content (`lookout-ppe-history`); a file of another format is set aside. */
  format: string;
  max: number;
  record: z.ZodType<T>;
  log: Logger;
  /** What the log is, for log lines (`PPE history`). */
  what: string;
}

const FILE_VERSION = 1;

export class BoundedLog<T> {
  /** Oldest first. */
  private records: T[] = [];
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly opts: BoundedLogOptions<T>) {
    if (!Number.isInteger(opts.max) || opts.max < 1) throw new RangeError('BoundedLog: max must be a positive integer');
  }

  get size(): number {
    return this.records.length;
  }

  get max(): number {
    return this.opts.max;
  }

  async init(): Promise<void> {
    const dir = path.dirname(this.opts.file);
    await privateDir(dir);
    await removeStaleTemps(dir);
    let text: string;
    try {
      text = (await readFileNoFollow(this.opts.file)).toString('utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // A symbolic link (or anything but a regular file) in DATA_DIR is never read: set aside as unreadable.
      if (code !== 'ELOOP' && code !== 'ENOTFILE') throw err;
      text = '';
    }
    const shape = z.object({ format: z.literal(this.opts.format), version: z.literal(FILE_VERSION), records: z.array(z.unknown()) });
    let raw: unknown[];
    try {
      const result = shape.safeParse(JSON.parse(text));
      if (!result.success) {
        const issue = result.error.issues[0];
        throw new Error(`${issue.path.join('.') || 'the file'}: ${issue.message}`);
      }
      raw = result.data.records;
    } catch (err) {
      const aside = `${this.opts.file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await fs.rename(this.opts.file, aside);
      this.opts.log.warn(
        `${path.basename(this.opts.file)} could not be read (${err instanceof Error ? err.message : String(err)}); set aside as ${path.basename(aside)}, the ${this.opts.what} starts empty`,
      );
      return;
    }
    let skipped = 0;
    for (const r of raw) {
      const parsed = this.opts.record.safeParse(r);
      if (parsed.success) this.records.push(parsed.data);
      else skipped++;
    }
    if (skipped) this.opts.log.warn(`${this.opts.what}: skipped ${skipped} records of ${path.basename(this.opts.file)} that are not valid`);
    const over = this.records.length - this.opts.max;
    if (over > 0) {
      this.records.splice(0, over);
      this.opts.log.info(`${this.opts.what}: dropped the ${over} oldest records to keep ${this.opts.max}`);
    }
    if (over > 0 || skipped > 0) await this.flush();
  }

  /** Appends a record (dropping the oldest beyond `max`) and resolves once it is on disk. */
  async add(record: T): Promise<void> {
    this.records.push(record);
    if (this.records.length > this.opts.max) this.records.splice(0, this.records.length - this.opts.max);
    await this.flush();
  }

  /** Newest first. */
  newestFirst(): T[] {
    return [...this.records].reverse();
  }

  /** Resolves when every change made so far is on disk. */
  flush(): Promise<void> {
    this.queued ??= this.tail.then(() => {
      // From here on, changes wait for the next write: this one takes the state as it is now.
      this.queued = null;
      return writeFileAtomic(this.opts.file, JSON.stringify({ format: this.opts.format, version: FILE_VERSION, records: this.records }));
    });
    const write = this.queued;
    this.tail = write.catch(() => {});
    return write;
  }
}
