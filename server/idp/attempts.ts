/**
 * Failed attempts per key (a username) in a sliding window: at `max` failures within `windowMs` the key is locked
 * until the oldest of them leaves the window. Used for passwords and for the face step (BIOMETRIC_MAX_ATTEMPTS
 * per BIOMETRIC_ATTEMPT_WINDOW_S).
 *
 * Opened on a file (`AttemptLimiter.open`), the failures persist: a restart of the IdP must not unlock whoever
 * was guessing. The file holds usernames and failure times only (never a picture or a password), is rewritten
 * whole and atomically after each change (temporary file + rename, as the file adapter's records), and entries
 * that left the window are dropped on load (the file rewritten without them) and on every write.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs/promises';
import { writePrivateFileAtomic } from './private-file.js';

interface AttemptFile {
  version: 1;
  /** Key -> epoch milliseconds of its recent failures, oldest first. */
  failures: Record<string, number[]>;
}

/**
 * The key an unknown username's failures are counted (and logged) under: a keyed hash, never the name, which is
 * often a password typed into the wrong field. `secret` is the IdP's own (a new one per start: an unknown name's
 * failures protect no account, so losing them on a restart costs nothing).
 */
export function unknownNameKey(secret: Buffer, name: string): string {
  return `unknown:${createHmac('sha256', secret).update(name).digest('hex').slice(0, 32)}`;
}

/** The attempt file is not what this class writes (edited or damaged by hand). */
export class AttemptFileError extends Error {}

/** One attempt counted by `AttemptLimiter.begin`. */
export interface Attempt {
  /** It failed: it stays counted; resolves once that is on disk. */
  failed(): Promise<void>;
  /**
   * It succeeded, or failed for a reason that is not the user's (the backend was down): it no longer counts. Only
   * this attempt is taken back; earlier failures stay until they leave the window (a success in the middle of a
   * burst of guesses must not clear the count for the guesses still in flight).
   */
  release(): Promise<void>;
}

export class AttemptLimiter {
  private readonly failures = new Map<string, number[]>();
  /** Writes run one after another, each of the state at its turn, so the last one on disk is the newest. */
  private saving: Promise<void> = Promise.resolve();
  /** A write waiting for its turn: changes meanwhile join it (a flood of failures is not a flood of writes). */
  private queued: Promise<void> | null = null;

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
    /** Keys remembered at most; the stalest go first (a flood of made-up names must not grow memory for ever). */
    private readonly maxKeys = 10_000,
    /** Where the failures persist; none: in memory only. */
    private readonly file?: string,
  ) {}

  /**
   * A limiter persisted in `file`, with the failures still in the window loaded from it (a missing file: none).
   * Throws AttemptFileError when the file cannot be understood; the caller decides whether to start empty.
   */
  static async open(file: string, max: number, windowMs: number, now: () => number = Date.now, maxKeys = 10_000): Promise<AttemptLimiter> {
    const limiter = new AttemptLimiter(max, windowMs, now, maxKeys, file);
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return limiter;
      throw err;
    }
    let stored: AttemptFile;
    try {
      stored = JSON.parse(text) as AttemptFile;
    } catch {
      throw new AttemptFileError(`${file} is not JSON`);
    }
    if (stored?.version !== 1 || typeof stored.failures !== 'object' || stored.failures === null)
      throw new AttemptFileError(`${file} is not an attempt file of version 1`);
    let dropped = false;
    for (const [key, times] of Object.entries(stored.failures)) {
      if (!Array.isArray(times) || !times.every((t) => Number.isFinite(t))) throw new AttemptFileError(`${file}: bad entry for ${key}`);
      const recent = limiter.inWindow(times).slice(-max);
      if (recent.length) limiter.failures.set(key, recent);
      dropped ||= recent.length < times.length;
    }
    // What left the window leaves the disk too.
    if (dropped) await limiter.save();
    return limiter;
  }

  /** Milliseconds until the key may try again; 0 when it may now. */
  lockedFor(key: string): number {
    const recent = this.recent(key);
    return recent.length >= this.max ? recent[recent.length - this.max] + this.windowMs - this.now() : 0;
  }

  /**
   * Starts an attempt: counts it as a failure at once, before the password or face is checked, so that attempts
   * already in flight count against the limit (checking `lockedFor` first and counting after the ~0.1 s check let
   * a burst of 61 guesses all be evaluated). Synchronous, so no other request runs between the check and the count.
   * Locked: the milliseconds to wait, nothing counted. Otherwise the attempt, which the caller ends with `failed()`
   * or `release()`.
   */
  begin(key: string): { lockedForMs: number } | { attempt: Attempt } {
    const lockedForMs = this.lockedFor(key);
    if (lockedForMs > 0) return { lockedForMs };
    const at = this.now();
    this.push(key, at);
    let ended = false;
    return {
      attempt: {
        failed: () => this.save(),
        release: () => {
          if (ended) return Promise.resolve();
          ended = true;
          return this.take(key, at);
        },
      },
    };
  }

  /** Counts a failure; resolves once it is on disk (at once in memory). */
  fail(key: string): Promise<void> {
    this.push(key, this.now());
    return this.save();
  }

  /** Forgets the key's failures; resolves once that is on disk. */
  succeed(key: string): Promise<void> {
    if (!this.failures.delete(key)) return Promise.resolve();
    return this.save();
  }

  /** Resolves when every change so far is on disk. */
  flushed(): Promise<void> {
    return this.saving;
  }

  private save(): Promise<void> {
    const file = this.file;
    if (file === undefined) return Promise.resolve();
    if (this.queued) return this.queued;
    const write = this.saving
      .catch(() => {}) // an earlier failed write is its caller's error, not this one's
      .then(() => {
        this.queued = null;
        const failures: Record<string, number[]> = {};
        for (const [key, times] of this.failures) {
          const recent = this.inWindow(times);
          if (recent.length) failures[key] = recent;
        }
        const stored: AttemptFile = { version: 1, failures };
        return writePrivateFileAtomic(file, JSON.stringify(stored));
      });
    this.queued = write;
    this.saving = write;
    return write;
  }

  private push(key: string, at: number): void {
    const recent = this.recent(key);
    recent.push(at);
    this.failures.delete(key);
    this.failures.set(key, recent.slice(-this.max));
    if (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value as string);
  }

  /** Takes back one counted attempt (the one made at `at`); the other failures stay. */
  private take(key: string, at: number): Promise<void> {
    const times = this.failures.get(key);
    const i = times?.lastIndexOf(at) ?? -1;
    if (!times || i < 0) return Promise.resolve();
    times.splice(i, 1);
    if (times.length === 0) this.failures.delete(key);
    return this.save();
  }

  private inWindow(times: number[]): number[] {
    const since = this.now() - this.windowMs;
    return times.filter((t) => t > since);
  }

  private recent(key: string): number[] {
    return this.inWindow(this.failures.get(key) ?? []);
  }
}
