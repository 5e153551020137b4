/** A PostgreSQL server (`DATABASE_URL`), shared by API replicas: a small pool, one client per transaction. */
import pg from 'pg';
import type { Driver, Queryable } from './database.js';

export async function connectPostgres(url: string): Promise<Driver> {
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server is dropped by the pool; without a listener the error would end the process.
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw new Error(`DATABASE_URL: PostgreSQL did not answer (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return (await q.query(sql, params as unknown[])).rows as Row[];
    },
    async exec(sql: string) {
      // Without parameters pg uses the simple protocol, which runs several statements.
      await q.query(sql);
    },
  });
  return {
    ...wrap(pool),
    async transaction(fn) {
      const client = await pool.connect();
      // A checked-out client is not the pool's to watch: when its server goes away between two statements (a
      // restart, a failover, an administrator), the client emits 'error', which without a listener ends the process.
      // The transaction's next statement fails with that error anyway; the client is then destroyed, not reused.
      let lost: Error | undefined;
      const onLost = (err: Error) => {
        lost = err;
      };
      client.on('error', onLost);
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        if (!lost) await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.off('error', onLost);
        client.release(lost);
      }
    },
    close: () => pool.end(),
  };
}
