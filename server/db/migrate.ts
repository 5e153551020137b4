/**
 * Versioned migrations: each runs once, in order, in its own transaction, recorded in `schema_migrations`.
 * Replicas starting together on one PostgreSQL server take an advisory lock first, so one applies and the
 * others find it done. A database migrated by a newer Lookout (a version this one does not know) is refused.
 */
import type { Driver } from './database.js';
import { MIGRATIONS } from './migrations/index.js';

/** Any constant shared by every Lookout process: the key of the advisory lock migrations hold. */
const MIGRATION_LOCK_KEY = 7_141_906;

export async function migrate(db: Driver): Promise<string[]> {
  return db.transaction(async (tx) => {
    // Held to the end of this transaction: one process migrates at a time.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const newest = MIGRATIONS.at(-1)?.version ?? 0;
    const unknown = [...done].filter((v) => v > newest);
    if (unknown.length) {
      throw new Error(
        `the database was migrated by a newer Lookout (schema versions ${unknown.join(', ')}); this one knows up to ${newest}`,
      );
    }
    const applied: string[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(`${m.version} ${m.name}`);
    }
    return applied;
  });
}
