/**
 * One dedicated PostgreSQL connection that comes back by itself (#37): LISTEN and session advisory locks live on a
 * connection, not in a pool. When it drops, `onLost` runs (locks taken on it are gone, notifications may have been
 * missed); the next `client()` connects again, and a listener reconnects in the background.
 */
import os from 'node:os';
import pg from 'pg';
import type { Logger } from '../../logger.js';

export class PgSession {
  private current: Promise<pg.Client> | null = null;
  private closed = false;

  constructor(
    private readonly url: string,
    /** Shown in pg_stat_activity: which process holds what (a busy lock names its owner). */
    private readonly role: string,
    private readonly log: Logger,
    private readonly onLost: () => void = () => {},
  ) {}

  /** The connection, opened now when there is none. Rejects when PostgreSQL does not answer. */
  client(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the connection is closed'));
    if (!this.current) {
      const opening = (async () => {
        const client = new pg.Client({
          connectionString: this.url,
          connectionTimeoutMillis: 5_000,
          application_name: sessionName(this.role),
          // Dead peers are noticed within about 20 s even when nothing is sent (a listener only receives).
          keepAlive: true,
          keepAliveInitialDelayMillis: 10_000,
        });
        const lost = (why: string) => {
          if (this.current !== opening) return;
          this.current = null;
          client.end().catch(() => {});
          if (!this.closed) {
            this.log.warn(`PostgreSQL ${this.role} connection lost (${why})`);
            this.onLost();
          }
        };
        client.on('error', (err) => lost(err.message));
        client.on('end', () => lost('closed by the server'));
        await client.connect();
        return client;
      })();
      opening.catch(() => {
        if (this.current === opening) this.current = null;
      });
      this.current = opening;
    }
    return this.current;
  }

  /** Whether a connection is open now. */
  get connected(): boolean {
    return this.current !== null;
  }

  async close(): Promise<void> {
    this.closed = true;
    const current = this.current;
    this.current = null;
    if (current) await (await current.catch(() => null))?.end().catch(() => {});
  }
}

/** `lookout <role> pid=<pid> host=<host> started=<iso>`, at most 63 bytes (PostgreSQL cuts the rest). */
export function sessionName(role: string): string {
  return `lookout ${role} pid=${process.pid} host=${os.hostname()} started=${new Date().toISOString()}`.slice(0, 63);
}

/** The owner a session name gives (see sessionName); null when it is not one of ours. */
export function ownerOfSession(name: string | null | undefined): { pid: number; host: string; started: string } | null {
  const m = /pid=(\d+) host=(\S+) started=(\S+)/.exec(name ?? '');
  return m ? { pid: Number(m[1]), host: m[2], started: m[3] } : null;
}
