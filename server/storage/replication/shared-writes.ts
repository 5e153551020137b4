/**
 * Changes to the shared files in PostgreSQL (#37), for the replicas (pg-shared-files.ts) and the move of a DATA_DIR
 * (move-to-postgres.ts): a file's bytes become a blob, then one short transaction points its path at it with a new
 * version (or leaves a tombstone) and sends NOTIFY. Those transactions take one advisory lock while they assign
 * the version and commit, so versions become visible in their order and a replica copying "everything past the
 * newest version I applied" never skips one committed late.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { Database, Queryable } from '../../db/database.js';
import { advisoryKey } from './advisory-locks.js';
import type { BlobStore } from './blob-store.js';

export const CHANGES_CHANNEL = 'lookout_shared_files';
const VERSION_LOCK_KEY = advisoryKey('shared_files_version');

/** A row of shared_files as read back (bigints as text). */
export interface FileRow {
  path: string;
  version: string;
  blob_id: string | null;
  size: string;
  sha256: string | null;
  mtime: Date | null;
}

export class SharedWrites {
  constructor(
    private readonly db: Database,
    private readonly blobs: BlobStore,
  ) {}

  /** Stores the file at `file` as the shared path `rel` (streamed), with its modification time; its new version. */
  async putFile(rel: string, file: string): Promise<bigint> {
    const { mtime } = await fs.stat(file);
    // Opened only once put reads it: a stream opened before a put that fails at once (the database away) raised
    // ENOENT with no listener when the store then undid its file, and the process died (test/api/replicas.test.ts).
    const blob = await this.blobs.put(
      (async function* () {
        yield* createReadStream(file, { highWaterMark: 1 << 20 });
      })(),
    );
    try {
      return await this.commit(async (tx, v) => {
        const old = await tx.query<{ blob_id: string | null }>('SELECT blob_id FROM shared_files WHERE path = $1 FOR UPDATE', [rel]);
        await tx.query(
          `INSERT INTO shared_files (path, version, blob_id, size, sha256, mtime, updated_at) VALUES ($1, $2, $3, $4, $5, $6, now())
           ON CONFLICT (path) DO UPDATE SET version = excluded.version, blob_id = excluded.blob_id, size = excluded.size,
             sha256 = excluded.sha256, mtime = excluded.mtime, updated_at = now()`,
          [rel, v, blob.id, blob.size, blob.sha256, mtime],
        );
        await this.blobs.drop(liveIds(old), tx);
      });
    } catch (err) {
      await this.blobs.drop([blob.id]).catch(() => {});
      throw err;
    }
  }

  /** Removes the shared path `rel` and everything under it (tombstones, the folder's own too); its new version. */
  async remove(rel: string): Promise<bigint> {
    const pattern = `${rel.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`;
    return this.commit(async (tx, v) => {
      const old = await tx.query<{ blob_id: string | null }>(
        'SELECT blob_id FROM shared_files WHERE (path = $1 OR path LIKE $2) AND blob_id IS NOT NULL FOR UPDATE',
        [rel, pattern],
      );
      await tx.query(
        `UPDATE shared_files SET version = $3, blob_id = NULL, size = 0, sha256 = NULL, updated_at = now()
          WHERE (path = $1 OR path LIKE $2) AND blob_id IS NOT NULL`,
        [rel, pattern, v],
      );
      // The folder's own tombstone: a replica that copied it removes the folder, not only the files it knew of.
      await tx.query(
        `INSERT INTO shared_files (path, version) VALUES ($1, $2)
         ON CONFLICT (path) DO UPDATE SET version = excluded.version, blob_id = NULL, size = 0, sha256 = NULL, updated_at = now()`,
        [rel, v],
      );
      await this.blobs.drop(liveIds(old), tx);
    });
  }

  /** Runs `fn` in the transaction that gives the change its version, serialized with every other writer's. */
  private async commit(fn: (tx: Queryable, version: string) => Promise<void>): Promise<bigint> {
    const version = await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [VERSION_LOCK_KEY]);
      const [{ v }] = await tx.query<{ v: string }>("SELECT nextval('shared_files_version')::text AS v");
      await fn(tx, v);
      await tx.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, v]);
      return v;
    });
    return BigInt(version);
  }
}

function liveIds(rows: { blob_id: string | null }[]): string[] {
  return rows.map((r) => r.blob_id).filter((id): id is string => id !== null);
}
