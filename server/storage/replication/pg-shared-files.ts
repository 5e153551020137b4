/**
 * Shared state in PostgreSQL, each replica's DATA_DIR a copy of it (#37; the seam is server/storage/shared-files.ts).
 *
 * - A store's write reaches PostgreSQL before its request is answered (`wrote`: the file's bytes as a blob, then a
 *   short transaction that points the path at it with a new version and sends NOTIFY). A removal leaves a tombstone
 *   with a new version, so replicas that copied the file remove it too.
 * - Every replica LISTENs and copies the rows past the newest version it applied into its own DATA_DIR (temporary
 *   file + rename: a reader sees the old file or the new one); the stores' own watches (model files every 500 ms,
 *   settings) then load them as if another process had written them. A check every few seconds catches a missed
 *   notification; a lost connection is followed by a whole comparison.
 * - At start the copy is made whole before anything is served: files PostgreSQL does not have are removed (they were
 *   deleted while this replica was away), missing or different ones are fetched. A DATA_DIR with files and a database
 *   without any is refused: that is a move (`npm run data:to-postgres`), not a cache to empty.
 * - Locks are advisory locks (advisory-locks.ts); taking one first brings the copy up to date.
 *
 * Same-path writes from two replicas happen only under a cluster lock (models, settings) or cannot collide (photos
 * and crops have fresh names, features are a function of their photo): the last version wins.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type Database, isDatabaseUnreachable } from '../../db/database.js';
import type { Logger } from '../../logger.js';
import { TEMP_PREFIX } from '../atomic.js';
import type { FileLockOptions } from '../file-lock.js';
import { PRIVATE_FILE_MODE, privateDir } from '../private-modes.js';
import { type ClusterLock, SHARED_ROOTS, type SharedFiles, StateUnavailableError, sharedPath } from '../shared-files.js';
import { AdvisoryLocks } from './advisory-locks.js';
import { PgBlobStore } from './blob-store.js';
import { PgSession } from './pg-session.js';
import { CHANGES_CHANNEL, type FileRow, SharedWrites } from './shared-writes.js';

/** Rows copied per query. */
const SYNC_BATCH = 500;

export interface PgSharedFilesOptions {
  db: Database;
  /** DATABASE_URL: the listener and the locks have their own connections. */
  url: string;
  dataDir: string;
  log: Logger;
  /** The safety-net check for missed notifications (default 5 s). */
  checkEveryMs?: number;
}

export class PgSharedFiles implements SharedFiles {
  readonly kind = 'postgresql' as const;
  readonly dataDir: string;
  private readonly blobs: PgBlobStore;
  private readonly writes: SharedWrites;
  private readonly lockSession: PgSession;
  private readonly listenSession: PgSession;
  private readonly locks: AdvisoryLocks;
  /** The newest version applied. */
  private applied = 0n;
  /** What this DATA_DIR holds, by shared path: the version it is a copy of. */
  private readonly known = new Map<string, bigint>();
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private wholeNext = false;
  private started = false;
  private lastCheckOk = false;
  private timer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private listening = false;
  private closed = false;

  constructor(private readonly opts: PgSharedFilesOptions) {
    this.dataDir = path.resolve(opts.dataDir);
    this.blobs = new PgBlobStore(opts.db);
    this.writes = new SharedWrites(opts.db, this.blobs);
    this.lockSession = new PgSession(opts.url, 'locks', opts.log, () => this.locks.connectionLost());
    this.locks = new AdvisoryLocks(this.lockSession, () => this.syncNow());
    this.listenSession = new PgSession(opts.url, 'changes', opts.log, () => {
      this.listening = false;
      // Notifications sent while the connection was away are lost: compare everything at the next pass.
      this.wholeNext = true;
    });
  }

  /**
   * Opens the copy: made whole from PostgreSQL (see the module comment), then kept up to date. When PostgreSQL does
   * not answer yet, the copy opens not ready (readiness 503; every write and lock refused with 503, nothing served
   * from a copy that may be stale to a change) and is made whole as soon as it answers, tried every `retryMs`.
   * A DATA_DIR that was never moved into PostgreSQL is refused at once (an error, not a wait).
   */
  static async open(opts: PgSharedFilesOptions & { retryMs?: number }): Promise<PgSharedFiles> {
    const files = new PgSharedFiles(opts);
    try {
      await files.start();
    } catch (err) {
      if (!isDatabaseUnreachable(err)) throw err;
      opts.log.warn(`shared files: PostgreSQL does not answer (${message(err)}); not ready until it does`);
      files.startWhenReachable(opts.retryMs ?? 2_000);
    }
    return files;
  }

  private startWhenReachable(retryMs: number): void {
    const attempt = () => {
      if (this.closed) return;
      this.start().then(
        () => this.opts.log.info('shared files: PostgreSQL answers; the copy is whole and ready'),
        (err) => {
          if (isDatabaseUnreachable(err)) {
            this.retry = setTimeout(attempt, retryMs);
            this.retry.unref();
          } else this.opts.log.error(`shared files: cannot start: ${message(err)}`);
        },
      );
    };
    this.retry = setTimeout(attempt, retryMs);
    this.retry.unref();
  }

  private async start(): Promise<void> {
    await this.opts.db.open();
    const started = Date.now();
    await this.refuseUnmovedDataDir();
    await this.blobs.sweep(60 * 60_000).catch(() => 0);
    await this.listen().catch((err) => this.opts.log.warn(`shared files: LISTEN failed, checking every few seconds (${message(err)})`));
    const { fetched, removed } = await this.syncWhole();
    this.started = true;
    this.lastCheckOk = true;
    this.opts.log.info(
      `shared files: DATA_DIR is a copy of PostgreSQL's (version ${this.applied}; ${fetched} fetched, ${removed} removed, ${this.known.size} files) in ${Date.now() - started} ms`,
    );
    this.timer = setInterval(() => {
      if (!this.listening) this.listen().catch(() => {});
      this.requestSync();
    }, this.opts.checkEveryMs ?? 5_000);
    this.timer.unref();
  }

  /** Whether the copy was made whole at start and the last check reached PostgreSQL (readiness). */
  inSync(): boolean {
    return this.started && this.lastCheckOk;
  }

  lock(lockFile: string, _opts?: FileLockOptions): ClusterLock {
    return this.locks.lock(path.relative(this.dataDir, lockFile).split(path.sep).join('/'));
  }

  async wrote(file: string): Promise<void> {
    const rel = sharedPath(this.dataDir, file);
    if (!rel) return;
    this.refuseUntilStarted();
    try {
      this.known.set(rel, await this.writes.putFile(rel, file));
    } catch (err) {
      throw new StateUnavailableError(`${rel} could not be stored in PostgreSQL: ${message(err)}`, { cause: err });
    }
  }

  async removed(target: string): Promise<void> {
    const rel = sharedPath(this.dataDir, target);
    if (!rel) return;
    this.refuseUntilStarted();
    try {
      await this.writes.remove(rel);
      // Nothing is left under the path here; what is re-created later gets a newer version than the tombstones.
      for (const known of [...this.known.keys()]) if (known === rel || known.startsWith(`${rel}/`)) this.known.delete(known);
    } catch (err) {
      throw new StateUnavailableError(`the removal of ${rel} could not be stored in PostgreSQL: ${message(err)}`, { cause: err });
    }
  }

  async moved(from: string, to: string): Promise<void> {
    if (sharedPath(this.dataDir, from)) await this.removed(from);
    if (!sharedPath(this.dataDir, to)) return;
    for (const file of await filesUnder(to)) await this.wrote(file);
  }

  /** No change is made on a copy that was never made whole (PostgreSQL away since the start). */
  private refuseUntilStarted(): void {
    if (!this.started)
      throw new StateUnavailableError(
        'PostgreSQL has not answered since this server started: its copy of the shared state is not made yet',
      );
  }

  /** Resolves once a sync pass that started after this call has ended (rejects when it could not reach PostgreSQL). */
  syncNow(): Promise<void> {
    if (!this.started) {
      try {
        this.refuseUntilStarted();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (!this.queued) {
      // One pass at a time; callers that arrive while one runs share the next one.
      const after = this.running ?? Promise.resolve();
      const next = after
        .catch(() => {})
        .then(async () => {
          this.queued = null;
          this.running = next;
          try {
            await this.syncPass();
            this.lastCheckOk = true;
          } catch (err) {
            this.lastCheckOk = false;
            throw err;
          } finally {
            if (this.running === next) this.running = null;
          }
        });
      this.queued = next;
    }
    return this.queued;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    await this.running?.catch(() => {});
    await Promise.all([this.listenSession.close(), this.lockSession.close()]);
  }

  private requestSync(): void {
    if (this.closed) return;
    this.syncNow().catch((err) => this.opts.log.warn(`shared files: PostgreSQL check failed (${message(err)})`));
  }

  private async listen(): Promise<void> {
    const client = await this.listenSession.client();
    if (this.listening) return;
    client.removeAllListeners('notification');
    client.on('notification', () => this.requestSync());
    await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    this.listening = true;
    // Whatever was sent before LISTEN took effect is fetched by this pass.
    this.requestSync();
  }

  private async syncPass(): Promise<void> {
    if (this.wholeNext) {
      this.wholeNext = false;
      await this.syncWhole();
      return;
    }
    for (;;) {
      const rows = await this.opts.db.query<FileRow>(
        `SELECT path, version::text AS version, blob_id, size::text AS size, sha256, mtime FROM shared_files
          WHERE version > $1 ORDER BY version, path LIMIT ${SYNC_BATCH}`,
        [this.applied.toString()],
      );
      for (const row of rows) await this.apply(row);
      if (rows.length) {
        this.applied = BigInt(rows[rows.length - 1].version);
      }
      if (rows.length < SYNC_BATCH) break;
    }
  }

  /** Makes the copy whole: fetch what is missing or different, remove what PostgreSQL no longer has. */
  private async syncWhole(): Promise<{ fetched: number; removed: number }> {
    // The newest version first: a change committed while the rows are read is applied again by the next pass.
    const [{ v }] = await this.opts.db.query<{ v: string }>('SELECT coalesce(max(version), 0)::text AS v FROM shared_files');
    const rows = await this.opts.db.query<FileRow>(
      'SELECT path, version::text AS version, blob_id, size::text AS size, sha256, mtime FROM shared_files WHERE blob_id IS NOT NULL',
    );
    const live = new Map(rows.map((r) => [r.path, r]));
    let removed = 0;
    let fetched = 0;
    for (const file of await this.localFiles()) {
      const row = live.get(file);
      if (!row) {
        await fs.rm(path.join(this.dataDir, file), { force: true });
        this.known.delete(file);
        removed++;
        continue;
      }
      const version = BigInt(row.version);
      if (this.known.get(file) === version) continue;
      if (await sameContent(path.join(this.dataDir, file), row)) this.known.set(file, version);
    }
    for (const [file] of this.known) if (!live.has(file)) this.known.delete(file);
    for (const row of rows) {
      if (this.known.get(row.path) === BigInt(row.version)) continue;
      if (await this.fetch(row)) fetched++;
      if (fetched && fetched % 1000 === 0) this.opts.log.info(`shared files: ${fetched} of about ${rows.length} fetched`);
    }
    const newest = BigInt(v);
    if (newest > this.applied) this.applied = newest;
    return { fetched, removed };
  }

  private async apply(row: FileRow): Promise<void> {
    const version = BigInt(row.version);
    const mine = this.known.get(row.path);
    if (mine !== undefined && mine >= version) return;
    if (row.blob_id) {
      await this.fetch(row);
      return;
    }
    await this.removeOlderThan(row.path, version);
  }

  /** Removes the path (a file, or a folder with what is under it) except what this copy holds at a newer version. */
  private async removeOlderThan(rel: string, version: bigint): Promise<void> {
    const target = path.join(this.dataDir, ...rel.split('/'));
    const newer = [...this.known].filter(([p, v]) => (p === rel || p.startsWith(`${rel}/`)) && v > version);
    if (!newer.length) {
      await fs.rm(target, { recursive: true, force: true });
      for (const p of [...this.known.keys()]) if (p === rel || p.startsWith(`${rel}/`)) this.known.delete(p);
      return;
    }
    const keep = new Set(newer.map(([p]) => p));
    for (const file of await filesUnder(target)) {
      const p = path.relative(this.dataDir, file).split(path.sep).join('/');
      if (keep.has(p)) continue;
      await fs.rm(file, { force: true });
      this.known.delete(p);
    }
  }

  /** Copies the row's blob into place (temporary file + rename); false when it changed meanwhile (a newer row follows). */
  private async fetch(row: FileRow): Promise<boolean> {
    if (!row.blob_id) return false;
    const target = path.join(this.dataDir, ...row.path.split('/'));
    await privateDir(path.dirname(target));
    const temp = path.join(path.dirname(target), `${TEMP_PREFIX}${randomUUID()}-${path.basename(target)}`);
    const handle = await fs.open(temp, 'wx', PRIVATE_FILE_MODE);
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const piece of this.blobs.read(row.blob_id)) {
        hash.update(piece);
        size += piece.length;
        await handle.write(piece);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    const version = BigInt(row.version);
    const mine = this.known.get(row.path);
    if (size !== Number(row.size) || hash.digest('hex') !== row.sha256 || (mine !== undefined && mine >= version)) {
      await fs.rm(temp, { force: true });
      return false;
    }
    // The original's time: a model's training time is its file's (model-store.ts), the same on every replica.
    if (row.mtime) await fs.utimes(temp, row.mtime, row.mtime);
    await fs.rename(temp, target);
    this.known.set(row.path, version);
    return true;
  }

  /** Every shared file in DATA_DIR, as shared paths. */
  private async localFiles(): Promise<string[]> {
    const out: string[] = [];
    for (const root of SHARED_ROOTS) {
      for (const file of await filesUnder(path.join(this.dataDir, root))) {
        const rel = sharedPath(this.dataDir, file);
        if (rel) out.push(rel);
      }
    }
    return out;
  }

  /** A DATA_DIR with shared files and a database that never had any: refused, with what to run. */
  private async refuseUnmovedDataDir(): Promise<void> {
    const [{ any }] = await this.opts.db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM shared_files) AS any');
    if (any) return;
    const local = await this.localFiles();
    if (!local.length) return;
    throw new Error(
      `DATA_DIR (${this.dataDir}) holds ${local.length} photos, models or settings files and the database at DATABASE_URL has none: move them first with \`npm run data:to-postgres\` (docs/operations.md, "Several replicas"); starting would treat them as a stale copy`,
    );
  }
}

/** Every file under `target` (itself when it is a file), dot-names skipped; [] when it is gone. */
export async function filesUnder(target: string): Promise<string[]> {
  let stat: import('node:fs').Stats;
  try {
    stat = await fs.lstat(target);
  } catch {
    return [];
  }
  if (stat.isFile()) return [target];
  if (!stat.isDirectory()) return [];
  const out: string[] = [];
  for (const entry of await fs.readdir(target, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(target, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

async function sameContent(file: string, row: FileRow): Promise<boolean> {
  try {
    if ((await fs.stat(file)).size !== Number(row.size)) return false;
    const hash = createHash('sha256');
    for await (const piece of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(piece as Buffer);
    return hash.digest('hex') === row.sha256;
  } catch {
    return false;
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
