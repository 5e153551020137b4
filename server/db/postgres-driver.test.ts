/**
 * The PostgreSQL driver when its server goes away in the middle of a transaction (a restart, a failover): the
 * transaction fails, the process lives on, and the pool serves the next statement on a new connection. A CI run lost
 * a replica this way: a client checked out for a transaction had no 'error' listener, so the server's goodbye
 * ("terminating connection") ended the process.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../../test/helpers/databases.js';
import type { Driver } from './database.js';
import { connectPostgres } from './postgres-driver.js';

describe('the PostgreSQL driver', () => {
  const opened: Driver[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((d) => d.close()));
  });

  it('fails a transaction whose connection the server ends, keeps the process alive, and reconnects for the next statement', async () => {
    const url = await freshPostgresDatabase();
    const driver = await connectPostgres(url);
    opened.push(driver);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    // Vitest reports uncaught errors only at the end of the file; this catches them where they happen.
    const vitestListeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      const outcome = await driver
        .transaction(async (q) => {
          const [{ pid }] = await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          // The server ends this connection while no statement of it is running (the transaction is doing its file work).
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          await new Promise((r) => setTimeout(r, 300));
          await q.query('SELECT 1');
          return 'committed';
        })
        .then(
          (v) => v,
          (err: Error) => `failed: ${err.message}`,
        );
      expect(outcome).toMatch(/^failed: /);
      expect(uncaught).toEqual([]);
      // The pool's next statement runs on a fresh connection.
      expect(await driver.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', onUncaught);
      for (const l of vitestListeners) process.on('uncaughtException', l);
      await admin.end();
    }
  });
});
