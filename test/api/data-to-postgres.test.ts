/**
 * #37: moving an embedded DATA_DIR into PostgreSQL (`npm run data:to-postgres`): a server with DATABASE_URL and an
 * empty disk then answers as the embedded one did (people, photos, the trained model, the audit log); the move run
 * again moves nothing and says so; a server pointed at an unmoved DATA_DIR refuses to start and says what to run.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../server/db/database.js';
import { createLogger } from '../../server/logger.js';
import { moveDataDirToPostgres } from '../../server/storage/replication/move-to-postgres.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { base64, rescaled, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, REPO_ROOT, startTestServer, uploadImage } from '../helpers/test-server.js';

const run = promisify(execFile);
const log = createLogger('silent');
let embeddedDir: string;
let url: string;
const temps: string[] = [];

beforeAll(async () => {
  embeddedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-move-'));
  temps.push(embeddedDir);
  url = await freshPostgresDatabase();
  // An embedded Lookout with two people, a trained model and an audit log.
  const server = await startTestServer({ EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false' }, embeddedDir);
  for (const person of ['grace', 'eileen'] as const) {
    for (const capture of await trainingCaptures(person)) {
      for (let copy = 0; copy < 2; copy++) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
  }
  expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
  await server.close();
}, 120_000);

afterAll(async () => {
  for (const dir of temps) await fs.rm(dir, { recursive: true, force: true });
});

describe('npm run data:to-postgres', () => {
  it('a server with DATABASE_URL refuses the unmoved DATA_DIR and names the command', async () => {
    await expect(
      startTestServer({ DATABASE_URL: url, EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false' }, embeddedDir),
    ).rejects.toThrow(/data:to-postgres/);
  });

  it('moves files and rows; a replica on an empty disk then answers as the embedded server did', async () => {
    const before = await fs.readdir(path.join(embeddedDir, 'images', 'grace'));
    const target = createDatabase({ url, embeddedDir: path.join(embeddedDir, 'db'), log });
    const source = createDatabase({ url: '', embeddedDir: path.join(embeddedDir, 'db'), log });
    const report = await moveDataDirToPostgres({ dataDir: embeddedDir, target, source });
    await Promise.all([target.close(), source.close()]);
    expect(report.files.moved).toBeGreaterThan(before.length);
    expect(report.files.different).toEqual([]);
    expect(report.rows.find((r) => r.table === 'audit_log')?.copied).toBeGreaterThan(0);
    expect(report.rows.filter((r) => r.refused)).toEqual([]);
    // Nothing in DATA_DIR was changed.
    expect(await fs.readdir(path.join(embeddedDir, 'images', 'grace'))).toEqual(before);

    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-move-replica-'));
    temps.push(empty);
    const replica = await startTestServer({ DATABASE_URL: url, EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false' }, empty);
    try {
      const labels = await getJson(`${replica.url}/api/labels`);
      expect(labels.status).toBe(200);
      expect(JSON.stringify(labels.body)).toContain('grace');
      expect(JSON.stringify(labels.body)).toContain('eileen');
      expect((await fs.readdir(path.join(empty, 'images', 'grace'))).sort()).toEqual([...before].sort());
      const recognized = await postJson(`${replica.url}/api/recognize`, { image: base64(await rescaled('eileen', 0.7)) });
      expect(recognized.status).toBe(200);
      expect(recognized.body.faces[0]?.label).toBe('eileen');
      const audit = await getJson(`${replica.url}/api/audit?limit=50`);
      expect(audit.status).toBe(200);
      expect(JSON.stringify(audit.body)).toContain('grace');
    } finally {
      await replica.close();
    }
  }, 120_000);

  it('run again, it moves nothing, reports everything as already there, and exits 0', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'server/data-to-postgres.ts')], {
      env: { ...process.env, DATA_DIR: embeddedDir, DATABASE_URL: url, LOG_LEVEL: 'silent' },
      cwd: REPO_ROOT,
    }).catch((err) => {
      throw new Error(`exit ${err.code}:\n${err.stdout}\n${err.stderr}`);
    });
    expect(stdout).toMatch(/files: 0 moved \(0\.0 MB\), \d+ already there/);
    expect(stdout).toMatch(/rows: audit_log: 0 copied, \d+ already there/);
    expect(stdout).toContain('done: everything is in PostgreSQL');
  }, 60_000);
});
