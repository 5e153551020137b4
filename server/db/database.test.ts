import { afterEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { createDatabase } from './database.js';
import { createLogger } from '../logger.js';
import { MIGRATIONS } from './migrations/index.js';

describe.each(DATABASES)('the database on %s', (_name, open) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it('opens on first use and applies every migration once', async () => {
    t = await open();
    expect(t.db.opened).toBe(false);
    const rows = await t.db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(t.db.opened).toBe(true);
    expect(await t.db.ping()).toBe(true);
  });

  it('gives back timestamps as Date, bytea as bytes, jsonb parsed and counts as numbers', async () => {
    t = await open();
    const bytes = new Uint8Array(new Float32Array([0.25, -1.5]).buffer);
    await t.db.query(
      `INSERT INTO sightings (id, seen_at, source, recognizer, box, crop, descriptor) VALUES ($1, $2, 'api', 'lbph', $3, 'a.jpg', $4)`,
      ['s1', new Date('2026-01-02T03:04:05.678Z'), JSON.stringify({ x: 1, y: 2, w: 3, h: 4 }), bytes],
    );
    const [row] = await t.db.query<{ seen_at: Date; box: object; descriptor: Uint8Array; n: number }>(
      'SELECT seen_at, box, descriptor, (SELECT count(*)::int FROM sightings) AS n FROM sightings',
    );
    expect(row.seen_at).toBeInstanceOf(Date);
    expect(row.seen_at.toISOString()).toBe('2026-01-02T03:04:05.678Z');
    expect(row.box).toEqual({ x: 1, y: 2, w: 3, h: 4 });
    expect([...new Float32Array(new Uint8Array(row.descriptor).buffer)]).toEqual([0.25, -1.5]);
    expect(row.n).toBe(1);
  });

  it('rolls a failed transaction back whole', async () => {
    t = await open();
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO people (label, display_name) VALUES ('ada', 'Ada')`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await t.db.query('SELECT * FROM people')).toEqual([]);
  });

  it('keeps the audit log append-only: no update, no delete but the retention purge', async () => {
    t = await open();
    await t.db.query(`INSERT INTO audit_log (action, actor_kind) VALUES ('enroll', 'anonymous')`);
    await expect(t.db.query(`UPDATE audit_log SET action = 'nothing'`)).rejects.toThrow(/append-only/);
    await expect(t.db.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    const purged = await t.db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('lookout.audit_purge', 'on', true)`);
      return tx.query('DELETE FROM audit_log RETURNING seq');
    });
    expect(purged).toHaveLength(1);
  });

  it('reopens an existing database without migrating again', async () => {
    t = await open();
    await t.db.query(`INSERT INTO people (label, display_name) VALUES ('ada', 'Ada Lovelace')`);
    await t.db.close();
    const again = createDatabase({ url: t.url, embeddedDir: `${t.dataDir}/db`, log: createLogger('silent') });
    try {
      expect(await again.query('SELECT display_name FROM people')).toEqual([{ display_name: 'Ada Lovelace' }]);
    } finally {
      await again.close();
    }
  });
});

describe('the embedded database', () => {
  it('refuses a second process-level opener of the same folder with the reason', async () => {
    const [, open] = DATABASES[0];
    const t = await open();
    try {
      await t.db.open();
      const second = createDatabase({ url: '', embeddedDir: `${t.dataDir}/db`, log: createLogger('silent') });
      await expect(second.open()).rejects.toThrow(/DATABASE_URL/);
      await second.close();
    } finally {
      await t.dispose();
    }
  });
});
