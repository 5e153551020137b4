/**
 * A lock shared by every process that sees one directory (API replicas on one ReadWriteMany DATA_DIR): a lock
 * file created exclusively (O_EXCL, `wx`) holding its owner (token, pid, host, start time). While held, its
 * modification time is refreshed every `staleMs / 4`; a lock file not refreshed for `staleMs` belongs to a
 * crashed or hung process and is taken over, so a crash never blocks the others for ever. A lock whose owner
 * ran on this host and whose process is gone is stale at once (a restart after a crash need not wait); one with no
 * owner in it (a crash between creating it and writing the owner) after a few seconds.
 *
 * Takeover is done by one process at a time (a guard file created exclusively): it removes the stale file only
 * while it is still the one judged stale, then creates its own like any acquirer. Release removes the file only
 * while it still holds this owner's token.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import { PRIVATE_FILE_MODE } from './private-modes.js';

/** How long a lock file without an owner in it may be one still being written (see inspect). */
const OWNERLESS_STALE_MS = 5_000;
/** How long a takeover's guard file may be one in use (a takeover takes moments; see takeOver). */
const TAKEOVER_STALE_MS = 10_000;

export interface LockOwner {
  token: string;
  pid: number;
  host: string;
  started: string;
}

export interface FileLockOptions {
  /** Unrefreshed for this long, a lock is stale and taken over (default 60 s). */
  staleMs?: number;
  /** How often a held lock's modification time is refreshed (default staleMs / 4). */
  refreshMs?: number;
}

export interface HeldLock {
  readonly owner: LockOwner;
  /** False once another process took the lock over (this one stopped refreshing for staleMs). */
  readonly held: boolean;
  release(): Promise<void>;
}

export class LockBusyError extends Error {
  constructor(
    readonly file: string,
    readonly owner: LockOwner | null,
  ) {
    super(owner ? `${file} is held by pid ${owner.pid} on ${owner.host} since ${owner.started}` : `${file} is held by another process`);
    this.name = 'LockBusyError';
  }
}

async function readOwner(file: string): Promise<LockOwner | null> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<LockOwner>;
    return typeof parsed.token === 'string' ? (parsed as LockOwner) : null;
  } catch {
    return null;
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** An owner on this host whose process is gone (a crash or SIGKILL): its lock is stale at once. */
function deadOnThisHost(owner: LockOwner): boolean {
  if (owner.host !== os.hostname() || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    return code(err) === 'ESRCH';
  }
}

export class FileLock {
  readonly staleMs: number;
  readonly refreshMs: number;

  constructor(
    readonly file: string,
    opts: FileLockOptions = {},
  ) {
    this.staleMs = opts.staleMs ?? 60_000;
    this.refreshMs = opts.refreshMs ?? Math.max(10, Math.floor(this.staleMs / 4));
  }

  /** Takes the lock, or throws LockBusyError when another live process holds it. */
  async acquire(): Promise<HeldLock> {
    const owner: LockOwner = { token: randomUUID(), pid: process.pid, host: os.hostname(), started: new Date().toISOString() };
    const body = JSON.stringify(owner);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fs.writeFile(this.file, body, { flag: 'wx', mode: PRIVATE_FILE_MODE });
        return this.held(owner);
      } catch (err) {
        if (code(err) !== 'EEXIST') throw err;
      }
      const current = await this.inspect();
      if (current === 'gone') continue;
      if (!current.stale) throw new LockBusyError(this.file, current.owner);
      await this.takeOver(current.owner);
    }
    throw new LockBusyError(this.file, (await readOwner(this.file)) ?? null);
  }

  /** Waits (polling every `retryMs`) until the lock is free, at most `timeoutMs`, then throws LockBusyError. */
  async acquireWithin(timeoutMs: number, retryMs = 20): Promise<HeldLock> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.acquire();
      } catch (err) {
        if (!(err instanceof LockBusyError) || Date.now() >= deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, retryMs * (0.5 + Math.random())));
    }
  }

  /** Runs `work` holding the lock, waiting for it at most `timeoutMs`. */
  async run<T>(work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
    const lock = await this.acquireWithin(timeoutMs);
    try {
      return await work();
    } finally {
      await lock.release();
    }
  }

  private async inspect(): Promise<'gone' | { stale: boolean; owner: LockOwner | null }> {
    let mtimeMs: number;
    try {
      mtimeMs = (await fs.stat(this.file)).mtimeMs;
    } catch (err) {
      if (code(err) === 'ENOENT') return 'gone';
      throw err;
    }
    const owner = await readOwner(this.file);
    const age = Date.now() - mtimeMs;
    // No owner in it (empty or torn): its creator died between creating the file and writing the owner, which a live
    // one does at once. Waiting the whole staleMs would refuse every training for a minute after such a crash.
    if (owner === null) return { stale: age > Math.min(this.staleMs, OWNERLESS_STALE_MS), owner };
    return { stale: age > this.staleMs || deadOnThisHost(owner), owner };
  }

  /**
   * Removes the stale lock file, one process at a time: the remover holds `<file>.takeover` (created exclusively)
   * and removes the lock only while it is still the stale one it saw. Then whoever creates the lock file first has
   * it. (Renaming the stale file aside left the name free for a moment, and two newcomers could both hold the lock.)
   */
  private async takeOver(stale: LockOwner | null): Promise<void> {
    const guard = `${this.file}.takeover`;
    try {
      await fs.writeFile(guard, '', { flag: 'wx', mode: PRIVATE_FILE_MODE });
    } catch (err) {
      if (code(err) !== 'EEXIST') throw err;
      // Another process is taking over, which takes moments; one that crashed doing it left the file behind.
      const age = await fs.stat(guard).then(
        (st) => Date.now() - st.mtimeMs,
        () => 0,
      );
      if (age > TAKEOVER_STALE_MS) await fs.rm(guard, { force: true });
      return;
    }
    try {
      const current = await this.inspect();
      if (current === 'gone' || !current.stale || current.owner?.token !== stale?.token) return;
      await fs.rm(this.file, { force: true });
    } finally {
      await fs.rm(guard, { force: true });
    }
  }

  private held(owner: LockOwner): HeldLock {
    const file = this.file;
    let held = true;
    let released = false;
    const timer = setInterval(() => {
      const now = new Date();
      void readOwner(file).then(async (current) => {
        if (released) return;
        if (current?.token !== owner.token) {
          held = false;
          clearInterval(timer);
          return;
        }
        await fs.utimes(file, now, now).catch(() => {});
      });
    }, this.refreshMs);
    timer.unref();
    return {
      owner,
      get held() {
        return held;
      },
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        if (!held) return;
        held = false;
        if ((await readOwner(file))?.token === owner.token) await fs.rm(file, { force: true });
      },
    };
  }
}
