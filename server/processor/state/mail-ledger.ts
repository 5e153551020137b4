/**
 * The ledger of events already handled by the mail router: one file per event id, created exclusively (`wx`),
 * so a redelivered event (a restart before its offset was committed, a rebalance) is never mailed twice, even
 * by another processor sharing the state directory. Entries older than `keepDays` are pruned at start.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { safeEventId } from '../safe-text.js';

export type LedgerOutcome = 'mailed' | 'dead_lettered';

export class MailLedger {
  constructor(private readonly dir: string) {}

  /** File name of an id: ids come from message headers, so never trust them as path segments. */
  private fileOf(eventId: string): string {
    return path.join(this.dir, safeEventId(eventId));
  }

  async open(keepDays = 30): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    const cutoff = Date.now() - keepDays * 86_400_000;
    for (const name of await fs.readdir(this.dir)) {
      const file = path.join(this.dir, name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat && stat.mtimeMs < cutoff) await fs.rm(file, { force: true });
    }
  }

  async has(eventId: string): Promise<boolean> {
    try {
      await fs.access(this.fileOf(eventId));
      return true;
    } catch {
      return false;
    }
  }

  /** Records the outcome (flushed to disk); false when the event was already recorded. */
  async record(eventId: string, outcome: LedgerOutcome): Promise<boolean> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.fileOf(eventId), 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    try {
      await handle.writeFile(JSON.stringify({ event_id: eventId, outcome, at: new Date().toISOString() }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    return true;
  }
}
