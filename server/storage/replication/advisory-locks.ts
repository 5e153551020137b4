/**
 * Cluster locks as PostgreSQL session advisory locks (#37), in place of lock files on a shared volume: a replica
 * that crashes or is killed loses its connection, and PostgreSQL ends its locks at that moment (no 60 s wait for a
 * stale file). All of a process's locks live on one dedicated connection; a lock is also held in this process's own
 * table, since PostgreSQL would let one session take the same lock twice.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type HeldLock, LockBusyError, type LockOwner } from '../file-lock.js';
import { type ClusterLock, StateUnavailableError } from '../shared-files.js';
import { ownerOfSession, type PgSession } from './pg-session.js';

/** The advisory lock key of a name: the first 8 bytes of its sha256, as PostgreSQL's signed bigint. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(`lookout:${name}`).digest().readBigInt64BE(0).toString();
}

export class AdvisoryLocks {
  /** Locks this process holds, by key. */
  private readonly held = new Map<string, { owner: LockOwner; lost: boolean }>();

  constructor(
    private readonly session: PgSession,
    /** Run after a lock is taken and before it is handed out: brings this replica's copy up to date. */
    private readonly beforeHandingOut: () => Promise<void>,
  ) {}

  /** The connection dropped: PostgreSQL released every lock on it. */
  connectionLost(): void {
    for (const entry of this.held.values()) entry.lost = true;
    this.held.clear();
  }

  lock(name: string): ClusterLock {
    const key = advisoryKey(name);
    const acquire = async (): Promise<HeldLock> => {
      if (this.held.has(key)) throw new LockBusyError(name, this.held.get(key)?.owner ?? null);
      let client: Awaited<ReturnType<PgSession['client']>>;
      let row: { ok: boolean } | undefined;
      try {
        client = await this.session.client();
        [row] = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [key])).rows;
      } catch (err) {
        // Fails closed: no lock without PostgreSQL (the request answers 503).
        throw new StateUnavailableError(`the lock ${name} cannot be taken: PostgreSQL does not answer`, { cause: err });
      }
      if (!row?.ok) throw new LockBusyError(name, await this.ownerOf(key));
      if (this.held.has(key)) {
        // Another call in this process took it between our check and the query (same session: it stacks): undo ours.
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        throw new LockBusyError(name, this.held.get(key)?.owner ?? null);
      }
      const entry = {
        owner: { token: randomUUID(), pid: process.pid, host: '', started: new Date().toISOString() },
        lost: false,
      };
      this.held.set(key, entry);
      const release = async () => {
        if (this.held.get(key) !== entry) return;
        this.held.delete(key);
        await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {});
      };
      try {
        await this.beforeHandingOut();
      } catch (err) {
        await release();
        throw err;
      }
      return {
        owner: entry.owner,
        get held() {
          return !entry.lost;
        },
        release,
      };
    };
    const acquireWithin = async (timeoutMs: number, retryMs = 20): Promise<HeldLock> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          return await acquire();
        } catch (err) {
          if (!(err instanceof LockBusyError) || Date.now() >= deadline) throw err;
        }
        await new Promise((r) => setTimeout(r, retryMs * (0.5 + Math.random())));
      }
    };
    return {
      acquire,
      acquireWithin,
      async run<T>(work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
        const lock = await acquireWithin(timeoutMs);
        try {
          return await work();
        } finally {
          await lock.release();
        }
      },
    };
  }

  /** Who holds the lock `key` (from its session's name), when PostgreSQL says. */
  private async ownerOf(key: string): Promise<LockOwner | null> {
    try {
      const client = await this.session.client();
      const big = BigInt(key);
      const unsigned = BigInt.asUintN(64, big);
      const [row] = (
        await client.query<{ application_name: string }>(
          `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid AND l.objid = $2::oid AND l.objsubid = 1`,
          [(unsigned >> 32n).toString(), (unsigned & 0xffffffffn).toString()],
        )
      ).rows;
      const owner = ownerOfSession(row?.application_name);
      return owner ? { token: '', ...owner } : null;
    } catch {
      return null;
    }
  }
}
