/**
 * The database: rows that are filtered, paged and purged by time (sightings, review actions and corrections,
 * recognition results, the audit log, people's display names and image metadata), shared by API replicas.
 *
 * - Embedded by default: PGlite (PostgreSQL compiled to WebAssembly) in `DATA_DIR/db`, no service to start, run in
 *   a worker thread so that it never stalls requests. It is one process's database: a lock file keeps a second
 *   process off it, and replicas share `DATABASE_URL`.
 * - `DATABASE_URL=postgres://...`: a PostgreSQL server, for replicas that share state.
 * - One SQL dialect (PostgreSQL's) for both, and one set of versioned migrations (migrations/index.ts).
 *
 * Opened by its first use or by open(): the API server (server/main.ts) calls open() at start, in the background,
 * and other processes and tools pay only when they store a row. A new embedded database is the build's seed
 * unpacked (pglite-seed.ts, about 1 s), or PostgreSQL's initdb where there is none (4-10 s on 2 cores, and the
 * thread keeps about 150 MB more afterwards).
 *
 * Values come back as each driver gives them: timestamptz as Date, bytea as Uint8Array (Buffer from pg), jsonb
 * parsed, double precision as number. Cast counts and bigints in SQL (`count(*)::int`), so both agree.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { migrate } from './migrate.js';

export interface Queryable {
  /** Runs one statement with $1.. parameters; the rows it returns. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a script of several statements, without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type DatabaseKind = 'embedded' | 'postgresql';

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Opens and migrates now (the first query does it anyway); rejects with why it cannot. */
  open(): Promise<void>;
  /** Whether the database answers now (readiness); false, never a throw. Does not open a closed embedded one. */
  ping(): Promise<boolean>;
  /** Whether it was opened (a query ran or open() was called). */
  readonly opened: boolean;
  /**
   * Whether there may be rows without opening it: a PostgreSQL server always, the embedded one once its folder was
   * made. Timers that purge old rows at start ask this, so a fresh process that stores nothing opens nothing.
   */
  hasData(): Promise<boolean>;
  close(): Promise<void>;
}

/** What a driver gives: its own connection handling; database.ts adds lazy opening and migrations. */
export interface Driver extends Queryable {
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `DATABASE_URL`: empty for the embedded database. */
  url: string;
  /** Where the embedded database lives (`DATA_DIR/db`). */
  embeddedDir: string;
  /** The embedded database's page cache in MB (`EMBEDDED_DB_BUFFERS_MB`); PGlite's driver default when absent. */
  embeddedBuffersMb?: number;
  log: Logger;
}

/** Removes credentials from a connection string before it is logged or shown. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(a connection string that is not a URL)';
  }
}

/**
 * Whether `err` says the database server cannot be reached or went away (refused, reset, shut down, starting up), as
 * opposed to a query it refused: the request answers 503 `storage_unavailable`, not 500 (#37: a PostgreSQL restart).
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'EPIPE'].includes(code)) return true;
    // SQLSTATE class 08 (connection exception), 57P01-03 (shut down by an administrator, a crash, starting up).
    if (/^08...$/.test(code) || ['57P01', '57P02', '57P03'].includes(code)) return true;
  }
  // pg's own words for a connection that ended or never came; a wrapped error (the driver's "did not answer") by its cause.
  return /Connection terminated|timeout exceeded when trying to connect/.test(err.message) || isDatabaseUnreachable(err.cause);
}

class LazyDatabase implements Database {
  private driver: Promise<Driver> | null = null;
  private closed = false;

  constructor(
    readonly kind: DatabaseKind,
    private readonly connect: () => Promise<Driver>,
    private readonly log: Logger,
    private readonly embeddedDir: string | null = null,
  ) {}

  async hasData(): Promise<boolean> {
    if (this.opened || this.embeddedDir === null) return true;
    return existsSync(path.join(this.embeddedDir, 'PG_VERSION'));
  }

  get opened(): boolean {
    return this.driver !== null;
  }

  private use(): Promise<Driver> {
    if (this.closed) return Promise.reject(new Error('the database is closed'));
    if (!this.driver) {
      const opening = (async () => {
        const started = Date.now();
        const driver = await this.connect();
        try {
          const applied = await migrate(driver);
          const seeded = (driver as { seeded?: boolean }).seeded ? ", a new database from the build's seed" : '';
          this.log.info(
            `database (${this.kind}) open in ${Date.now() - started} ms${seeded}${applied.length ? `, migrations applied: ${applied.join(', ')}` : ''}`,
          );
        } catch (err) {
          await driver.close().catch(() => {});
          throw err;
        }
        return driver;
      })();
      // A failed open is tried again by the next use (a PostgreSQL server that was still starting).
      opening.catch(() => {
        if (this.driver === opening) this.driver = null;
      });
      this.driver = opening;
    }
    return this.driver;
  }

  async open(): Promise<void> {
    await this.use();
  }

  async query<Row = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.use()).query<Row>(sql, params);
  }

  async exec(sql: string): Promise<void> {
    await (await this.use()).exec(sql);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return (await this.use()).transaction(fn);
  }

  async ping(): Promise<boolean> {
    if (!this.driver) return this.kind === 'embedded';
    try {
      await (await this.driver).query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const driver = this.driver;
    this.driver = null;
    if (driver) await (await driver.catch(() => null))?.close();
  }
}

/** The database the settings name, not yet opened (the first query opens and migrates it). */
export function createDatabase(opts: DatabaseOptions): Database {
  if (opts.url) {
    return new LazyDatabase('postgresql', async () => (await import('./postgres-driver.js')).connectPostgres(opts.url), opts.log);
  }
  return new LazyDatabase(
    'embedded',
    async () => (await import('./pglite-driver.js')).openPglite(opts.embeddedDir, { buffersMb: opts.embeddedBuffersMb }),
    opts.log,
    opts.embeddedDir,
  );
}
