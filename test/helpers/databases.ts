/**
 * The two databases every database test runs against: the embedded PGlite (a fresh folder) and PostgreSQL (a fresh
 * database on the run's server, test/global-setup.ts). `describe.each(DATABASES)` runs a suite on both.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, type Database } from '../../server/db/database.js';
import { createLogger } from '../../server/logger.js';

export interface TestDatabase {
  db: Database;
  /** The DATABASE_URL a server under test would be given ('' for the embedded one). */
  url: string;
  /** The DATA_DIR the embedded database lives in (a temporary folder either way). */
  dataDir: string;
  dispose(): Promise<void>;
}

/** A new, empty database on the run's PostgreSQL server; its URL. */
export async function freshPostgresDatabase(): Promise<string> {
  const server = inject('postgresUrl');
  const name = `lookout_${randomUUID().replaceAll('-', '')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

async function open(kind: 'embedded' | 'postgresql'): Promise<TestDatabase> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-db-test-'));
  const url = kind === 'postgresql' ? await freshPostgresDatabase() : '';
  const db = createDatabase({ url, embeddedDir: path.join(dataDir, 'db'), log: createLogger('silent') });
  return {
    db,
    url,
    dataDir,
    async dispose() {
      await db.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const DATABASES = [
  ['embedded (PGlite)', () => open('embedded')],
  ['PostgreSQL', () => open('postgresql')],
] as const;
