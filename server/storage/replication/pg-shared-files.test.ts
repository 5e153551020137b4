/**
 * #37: DATA_DIRs as copies of the state in a real PostgreSQL (the run's server, test/global-setup.ts): a write on
 * one copy reaches another by NOTIFY, removals follow, a fresh copy is made whole at open, an unmoved DATA_DIR is
 * refused, locks are advisory locks that end with their connection, and taking one first brings the copy up to date.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../../../test/helpers/databases.js';
import { startPostgresCluster } from '../../../test/helpers/postgres-cluster.js';
import { createDatabase, type Database } from '../../db/database.js';
import { createLogger } from '../../logger.js';
import { LockBusyError } from '../file-lock.js';
import { StateUnavailableError } from '../shared-files.js';
import { PgSharedFiles } from './pg-shared-files.js';

const log = createLogger('silent');
let url: string;
const open: { files: PgSharedFiles; db: Database; dir: string }[] = [];

async function replica(dir?: string, checkEveryMs = 60_000): Promise<{ files: PgSharedFiles; dir: string }> {
  const dataDir = dir ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-shared-')));
  const db = createDatabase({ url, embeddedDir: path.join(dataDir, 'db'), log });
  const files = await PgSharedFiles.open({ db, url, dataDir, log, checkEveryMs });
  open.push({ files, db, dir: dataDir });
  return { files, dir: dataDir };
}

async function put(dir: string, rel: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(dir, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, bytes);
  return file;
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const readOrNull = (file: string) => fs.readFile(file).catch(() => null);
const sha = (b: Uint8Array | null) => (b ? createHash('sha256').update(b).digest('hex') : null);

beforeEach(async () => {
  url = await freshPostgresDatabase();
});

afterEach(async () => {
  for (const { files, db, dir } of open.splice(0)) {
    await files.close();
    await db.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

describe('DATA_DIRs as copies of PostgreSQL', () => {
  it('a file written on one copy reaches the other by NOTIFY, then its removal does', async () => {
    const a = await replica();
    const b = await replica();
    const photo = randomBytes(3_500_000); // four chunks
    const written = await put(a.dir, 'images/ada/one.jpg', photo);
    const trainedAt = new Date('2026-01-02T03:04:05.678Z');
    await fs.utimes(written, trainedAt, trainedAt);
    await a.files.wrote(written);
    const there = path.join(b.dir, 'images/ada/one.jpg');
    // checkEveryMs is a minute: only the notification can bring it this soon.
    expect(
      sha(
        await eventually(
          () => readOrNull(there),
          (v) => v !== null,
        ),
      ),
    ).toBe(sha(photo));
    expect(((await fs.stat(there)).mode & 0o777).toString(8)).toBe('600');
    // The copy shows the original's time (a model's training time is its file's).
    expect((await fs.stat(there)).mtime.toISOString()).toBe(trainedAt.toISOString());

    await fs.rm(path.join(a.dir, 'images/ada'), { recursive: true });
    await a.files.removed(path.join(a.dir, 'images/ada'));
    const gone = await eventually(
      () =>
        fs.access(path.join(b.dir, 'images/ada')).then(
          () => false,
          () => true,
        ),
      (v) => v,
    );
    expect(gone).toBe(true);
  });

  it('temporary and private names are not shared, nor anything outside the shared folders', async () => {
    const a = await replica();
    await a.files.wrote(await put(a.dir, 'images/ada/.tmp-x.jpg', Buffer.from('x')));
    await a.files.wrote(await put(a.dir, 'db/PG_VERSION', Buffer.from('x')));
    const c = await replica();
    expect(await readOrNull(path.join(c.dir, 'images/ada/.tmp-x.jpg'))).toBeNull();
    expect(await readOrNull(path.join(c.dir, 'db/PG_VERSION'))).toBeNull();
  });

  it('a copy opened later on an empty disk is whole at once; files deleted while it was away are removed', async () => {
    const a = await replica();
    await a.files.wrote(await put(a.dir, 'models/training.lbph', Buffer.from('model v1')));
    await a.files.wrote(await put(a.dir, 'settings/runtime.json', Buffer.from('{"a":1}')));
    await a.files.wrote(await put(a.dir, 'images/bob/1.jpg', Buffer.from('bob')));
    const late = await replica();
    expect((await readOrNull(path.join(late.dir, 'models/training.lbph')))?.toString()).toBe('model v1');
    expect((await readOrNull(path.join(late.dir, 'settings/runtime.json')))?.toString()).toBe('{"a":1}');
    await late.files.close();
    open.splice(
      open.findIndex((o) => o.files === late.files),
      1,
    );

    // While it is away: bob is deleted, the model replaced.
    await fs.rm(path.join(a.dir, 'images/bob'), { recursive: true });
    await a.files.removed(path.join(a.dir, 'images/bob'));
    await a.files.wrote(await put(a.dir, 'models/training.lbph', Buffer.from('model v2')));
    const back = await replica(late.dir);
    expect(await readOrNull(path.join(back.dir, 'images/bob/1.jpg'))).toBeNull();
    expect((await readOrNull(path.join(back.dir, 'models/training.lbph')))?.toString()).toBe('model v2');
  });

  it('refuses a DATA_DIR with files when the database has none (a move, not a stale copy)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-shared-'));
    await put(dir, 'images/ada/one.jpg', Buffer.from('ada'));
    const db = createDatabase({ url, embeddedDir: path.join(dir, 'db'), log });
    await expect(PgSharedFiles.open({ db, url, dataDir: dir, log })).rejects.toThrow(/data:to-postgres/);
    expect((await readOrNull(path.join(dir, 'images/ada/one.jpg')))?.toString()).toBe('ada');
    await db.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('a lock is one holder over every copy, named; it ends the moment its connection does', async () => {
    const a = await replica();
    const b = await replica();
    const held = await a.files.lock(path.join(a.dir, 'models/.training.lock')).acquire();
    const busy = await b.files
      .lock(path.join(b.dir, 'models/.training.lock'))
      .acquire()
      .catch((e) => e);
    expect(busy).toBeInstanceOf(LockBusyError);
    expect((busy as LockBusyError).owner?.pid).toBe(process.pid);
    // Also within one process: PostgreSQL would let the same session take it twice.
    await expect(a.files.lock(path.join(a.dir, 'models/.training.lock')).acquire()).rejects.toBeInstanceOf(LockBusyError);

    // A crash: the server ends the holder's connection; the lock is free at once, no stale-file wait.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'lookout locks%' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)",
    );
    await admin.end();
    const taken = await b.files.lock(path.join(b.dir, 'models/.training.lock')).acquireWithin(2_000);
    await eventually(
      async () => held.held,
      (v) => !v,
    );
    expect(held.held).toBe(false);
    await taken.release();
  });

  it('taking a lock first brings the copy up to date (no read-modify-write on a stale file)', async () => {
    const a = await replica();
    const b = await replica();
    // b takes the lock right after a's write is committed, before a notification could be handled.
    await a.files.wrote(await put(a.dir, 'settings/runtime.json', Buffer.from('{"from":"a"}')));
    const lock = await b.files.lock(path.join(b.dir, 'settings/.runtime.lock')).acquire();
    expect((await readOrNull(path.join(b.dir, 'settings/runtime.json')))?.toString()).toBe('{"from":"a"}');
    await lock.release();
  });

  it('a write PostgreSQL cannot take is an error the caller can answer 503 with', async () => {
    const a = await replica();
    const file = await put(a.dir, 'images/ada/one.jpg', Buffer.from('ada'));
    const entry = open.find((o) => o.files === a.files);
    await entry?.db.close();
    await expect(a.files.wrote(file)).rejects.toBeInstanceOf(StateUnavailableError);
  });

  it('opens not ready while PostgreSQL is away at start, refuses writes and locks (503), and is made whole once it answers', async () => {
    const cluster = await startPostgresCluster();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-shared-'));
    try {
      // Something to copy, written while the server is up.
      const db0 = createDatabase({ url: cluster.url, embeddedDir: path.join(dir, 'db0'), log });
      const writer = await PgSharedFiles.open({ db: db0, url: cluster.url, dataDir: path.join(dir, 'writer'), log });
      await writer.wrote(await put(path.join(dir, 'writer'), 'models/training.lbph', Buffer.from('model')));
      await writer.close();
      await db0.close();
      await cluster.pause();

      const db = createDatabase({ url: cluster.url, embeddedDir: path.join(dir, 'db'), log });
      const files = await PgSharedFiles.open({ db, url: cluster.url, dataDir: path.join(dir, 'replica'), log, retryMs: 200 });
      try {
        expect(files.inSync()).toBe(false);
        const photo = await put(path.join(dir, 'replica'), 'images/ada/one.jpg', Buffer.from('ada'));
        await expect(files.wrote(photo)).rejects.toBeInstanceOf(StateUnavailableError);
        await expect(files.lock(path.join(dir, 'replica', 'models/.training.lock')).acquire()).rejects.toBeInstanceOf(
          StateUnavailableError,
        );

        await cluster.resume();
        expect(
          await eventually(
            async () => files.inSync(),
            (v) => v,
            20_000,
          ),
        ).toBe(true);
        expect((await readOrNull(path.join(dir, 'replica', 'models/training.lbph')))?.toString()).toBe('model');
        const lock = await files.lock(path.join(dir, 'replica', 'models/.training.lock')).acquire();
        await lock.release();
      } finally {
        await files.close();
        await db.close();
      }
    } finally {
      await cluster.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
