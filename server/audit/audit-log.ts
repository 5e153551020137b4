/**
 * The audit log of biometric operations (enroll, delete, train, verify, template download, sighting access, ...):
 * who did it (a user or a client under AUTH_MODE=oidc, `anonymous` without auth), when, from where, on whom, and
 * how it ended. Rows of the `audit_log` table (server/db/migrations/001-initial.ts), which a trigger keeps
 * append-only: an UPDATE or DELETE is refused by the database itself, except the retention purge, which deletes
 * rows older than AUDIT_RETENTION_DAYS inside a transaction that says so (`lookout.audit_purge`).
 *
 * Never holds an image, a descriptor or a secret: `detail` carries the method, the endpoint, the status and an
 * error code at most.
 */
import type { AuditActionName } from '../../shared/api/audit.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';

/** The operations recorded: one list, in the API's schema (shared/api/audit.ts). */
export type AuditAction = AuditActionName;

/** ok: 2xx or 304; denied: 401/403 (no token, a bad one, a role missing); refused: another 4xx; error: 5xx. */
export type AuditOutcome = 'ok' | 'denied' | 'refused' | 'error';
export type ActorKind = 'user' | 'client' | 'anonymous';

export interface AuditEntry {
  action: AuditAction;
  outcome: AuditOutcome;
  /** The user's name, the client's id, or null (anonymous). */
  actor: string | null;
  actor_kind: ActorKind;
  ip: string | null;
  /** Whom it was about (a label, a sighting id), when one is known. */
  target: string | null;
  detail: Record<string, string | number | boolean | null>;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  at: string;
}

export interface AuditFilter {
  action?: AuditAction;
  actor?: string;
  /** Inclusive lower bound. */
  from?: Date;
  /** Exclusive upper bound. */
  to?: Date;
  limit?: number;
  /** The opaque cursor of the previous page (next_cursor). */
  cursor?: string;
}

export interface AuditPage {
  entries: AuditRecord[];
  next_cursor: string | null;
}

interface Row {
  seq_text: string;
  at: Date;
  action: string;
  outcome: string;
  actor: string | null;
  actor_kind: string;
  ip: string | null;
  target: string | null;
  detail: Record<string, string | number | boolean | null>;
}

export const AUDIT_PAGE_MAX = 200;
export const AUDIT_PAGE_DEFAULT = 50;
/**
 * #35: source addresses that get their own `anonymous_refused` row in one minute; the refusals of any further
 * address that minute are counted in one overflow row (`overflow: true`, no address). So requests refused without a
 * verified principal add at most this many rows plus one a minute, however many are sent or from how many places.
 */
export const ANONYMOUS_ROWS_PER_MINUTE = 50;
const MINUTE_MS = 60_000;
/** The first key of the advisory lock that orders the minute's new rows (the second is the minute). */
const ANONYMOUS_LOCK = 3504;

/** The purge runs at start and then this often. */
export const AUDIT_PURGE_INTERVAL_MS = 60 * 60_000;

const DAY_MS = 86_400_000;

/** A cursor is the last row's sequence number, base64url so it reads as opaque. */
function encodeCursor(seq: number): string {
  return Buffer.from(`a${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^a(\d{1,18})$/.exec(text);
  return m ? Number(m[1]) : null;
}

export class InvalidCursorError extends Error {}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching U+0000 is this pattern's purpose
const UNSTORABLE = /\u0000|[\ud800-\udfff]/gu;

/**
 * Text as the database can hold it: U+0000 (refused by PostgreSQL's text and jsonb) and half of a surrogate pair
 * (refused by jsonb) become U+FFFD. They come from the request's path (`DELETE /api/images/%00`), and an entry
 * that cannot be stored would be lost, so the attempt is recorded with the character replaced.
 */
function storable<T extends string | number | boolean | null>(value: T): T {
  return (typeof value === 'string' ? value.replace(UNSTORABLE, '\ufffd') : value) as T;
}

export class AuditLog {
  private timer: ReturnType<typeof setInterval> | null = null;
  private purgeAfterFirstRecord = false;

  constructor(
    private readonly db: Database,
    private readonly options: { retentionDays: number; log: Logger; anonymousRowsPerMinute?: number },
  ) {}

  /**
   * #35: counts one request refused without a verified principal (no token, a bad or expired one) in the row of its
   * source address and minute (`at` the minute's start, `detail.count`, and the latest refusal's endpoint and
   * status), made by the first such request; past ANONYMOUS_ROWS_PER_MINUTE addresses in a minute, in the minute's
   * overflow row. Replicas share the rows (a unique index on minute and address); the count is the one update the
   * table's trigger allows, asked for by a setting of this transaction (migration 004).
   */
  async recordAnonymousRefusal(refusal: { ip: string | null; endpoint: string; status: number }, at: Date = new Date()): Promise<void> {
    const minute = new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);
    const cap = this.options.anonymousRowsPerMinute ?? ANONYMOUS_ROWS_PER_MINUTE;
    const latest = { last_endpoint: storable(refusal.endpoint), last_status: refusal.status };
    await this.db.transaction(async (tx) => {
      await tx.query("SELECT set_config('lookout.audit_count', 'on', true)");
      const count = async () =>
        (
          await tx.query(
            `UPDATE audit_log SET detail = detail || jsonb_build_object('count', (detail->>'count')::bigint + 1) || $3::jsonb
             WHERE action = 'anonymous_refused' AND at = $1 AND ip IS NOT DISTINCT FROM $2 AND detail->>'overflow' IS NULL RETURNING 1`,
            [minute, refusal.ip, JSON.stringify(latest)],
          )
        ).length > 0;
      if (await count()) return;
      // A new row: one transaction at a time per minute (replicas included), so the cap holds; the address's row
      // may have been made while this one waited.
      await tx.query('SELECT pg_advisory_xact_lock($1::int, $2::int)', [ANONYMOUS_LOCK, (minute.getTime() / MINUTE_MS) % 2 ** 31]);
      if (await count()) return;
      const [{ n }] = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_log WHERE action = 'anonymous_refused' AND at = $1 AND detail->>'overflow' IS NULL",
        [minute],
      );
      const overflow = n >= cap;
      await tx.query(
        `INSERT INTO audit_log (at, action, outcome, actor, actor_kind, ip, target, detail)
         VALUES ($1, 'anonymous_refused', $2, NULL, 'anonymous', $3, NULL, $4::jsonb)
         ON CONFLICT (at, (coalesce(ip, '')), (coalesce(detail->>'overflow', ''))) WHERE action = 'anonymous_refused'
         DO UPDATE SET detail = audit_log.detail || jsonb_build_object('count', (audit_log.detail->>'count')::bigint + 1) || $5::jsonb`,
        [
          minute,
          refusal.status === 401 || refusal.status === 403 ? 'denied' : 'refused',
          overflow ? null : refusal.ip,
          JSON.stringify({ count: 1, ...(overflow ? { overflow: true } : {}), ...latest }),
          JSON.stringify(latest),
        ],
      );
    });
    if (this.purgeAfterFirstRecord && this.timer !== null) this.runPurge();
  }

  /** Appends one entry. */
  async record(entry: AuditEntry, at: Date = new Date()): Promise<void> {
    await this.db.query(
      'INSERT INTO audit_log (at, action, outcome, actor, actor_kind, ip, target, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [
        at,
        entry.action,
        entry.outcome,
        storable(entry.actor),
        entry.actor_kind,
        entry.ip,
        storable(entry.target),
        JSON.stringify(Object.fromEntries(Object.entries(entry.detail).map(([k, v]) => [storable(k), storable(v)]))),
      ],
    );
    if (this.purgeAfterFirstRecord && this.timer !== null) this.runPurge();
  }

  /** Entries newest first, filtered, one page at a time. Throws InvalidCursorError for a cursor it did not make. */
  async list(filter: AuditFilter = {}): Promise<AuditPage> {
    const limit = Math.min(Math.max(1, filter.limit ?? AUDIT_PAGE_DEFAULT), AUDIT_PAGE_MAX);
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.action) add('action = ?', filter.action);
    if (filter.actor) add('actor = ?', filter.actor);
    if (filter.from) add('at >= ?', filter.from);
    if (filter.to) add('at < ?', filter.to);
    if (filter.cursor) {
      const seq = decodeCursor(filter.cursor);
      if (seq === null) throw new InvalidCursorError('the cursor is not one this API gave (use next_cursor of the previous page)');
      add('seq < ?', seq);
    }
    params.push(limit + 1);
    const rows = await this.db.query<Row>(
      `SELECT seq::text AS seq_text, at, action, outcome, actor, actor_kind, ip, target, detail FROM audit_log
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit).map((r) => ({
      id: Number(r.seq_text),
      at: new Date(r.at).toISOString(),
      action: r.action as AuditAction,
      outcome: r.outcome as AuditOutcome,
      actor: r.actor,
      actor_kind: r.actor_kind as ActorKind,
      ip: r.ip,
      target: r.target,
      detail: r.detail ?? {},
    }));
    return { entries: page, next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null };
  }

  /** Deletes the entries older than the retention; how many. The one delete the table's trigger lets through. */
  async purge(now: Date = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.options.retentionDays * DAY_MS);
    return this.db.transaction(async (tx) => {
      await tx.query("SELECT set_config('lookout.audit_purge', 'on', true)");
      const rows = await tx.query<{ n: number }>(
        'WITH gone AS (DELETE FROM audit_log WHERE at < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
        [before],
      );
      return rows[0]?.n ?? 0;
    });
  }

  /**
   * Purges at start and every hour (the timer does not keep the process alive); stop() ends it. The database is
   * opened by its first use, not at start (server/db/database.ts): while it holds nothing yet, the start's purge
   * waits for the first entry recorded and the hourly one is skipped, so a process that stores nothing opens nothing.
   */
  start(intervalMs: number = AUDIT_PURGE_INTERVAL_MS): void {
    this.stop();
    // A database with rows already (a restart) is purged now; a fresh one after its first entry.
    void this.db.hasData().then((has) => {
      if (has) this.runPurge();
      else this.purgeAfterFirstRecord = true;
    });
    this.timer = setInterval(() => {
      void this.db.hasData().then((has) => has && this.runPurge());
    }, intervalMs);
    this.timer.unref();
  }

  private runPurge(): void {
    this.purgeAfterFirstRecord = false;
    this.purge().then(
      (n) => {
        if (n > 0) this.options.log.info(`audit log: ${n} entries older than ${this.options.retentionDays} days purged`);
      },
      (err: unknown) => this.options.log.warn(`audit log: the purge failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.purgeAfterFirstRecord = false;
  }
}
