/**
 * File contents kept outside the replicas (#37): put a file, read it back in pieces, drop it. PostgreSQL holds them
 * today (no S3-compatible server can run where Lookout is tested); an object store would be a second implementation
 * of BlobStore, the rest of the replication unchanged.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../../db/database.js';

export interface BlobInfo {
  id: string;
  size: number;
  sha256: string;
}

export interface BlobStore {
  /** Stores the pieces as one new blob (written as they come, never joined whole); its id, size and sha256. */
  put(pieces: AsyncIterable<Uint8Array>): Promise<BlobInfo>;
  /** The blob's bytes in pieces of about a chunk, in order; ends early (short) when the blob was dropped meanwhile. */
  read(id: string): AsyncIterable<Uint8Array>;
  /** Drops blobs (in the caller's transaction when given). */
  drop(ids: readonly string[], tx?: Queryable): Promise<void>;
  /** Drops blobs no file points at that are older than `olderThanMs` (a writer that died between put and commit). */
  sweep(olderThanMs: number): Promise<number>;
}

/** Bytes per stored chunk: small enough to stream, large enough that a 1 GB file is a thousand rows. */
export const CHUNK_BYTES = 1 << 20;
/** Chunks fetched per query when reading. */
const CHUNKS_PER_READ = 4;

/** Blobs as rows of 1 MB chunks in PostgreSQL (bytea: measured against large objects in bench/RESULTS.md). */
export class PgBlobStore implements BlobStore {
  constructor(private readonly db: Database) {}

  async put(pieces: AsyncIterable<Uint8Array>): Promise<BlobInfo> {
    const id = randomUUID();
    const hash = createHash('sha256');
    let size = 0;
    let seq = 0;
    // The blob row first (chunks reference it); a put that fails midway is dropped here, or swept later.
    await this.db.query('INSERT INTO shared_blobs (id, size, sha256) VALUES ($1, 0, $2)', [id, '']);
    try {
      let pending: Uint8Array[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        if (!pendingBytes) return;
        const chunk = Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        await this.db.query('INSERT INTO shared_blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)', [id, seq++, chunk]);
      };
      for await (const piece of pieces) {
        hash.update(piece);
        size += piece.length;
        let at = 0;
        while (at < piece.length) {
          const take = Math.min(piece.length - at, CHUNK_BYTES - pendingBytes);
          pending.push(piece.subarray(at, at + take));
          pendingBytes += take;
          at += take;
          if (pendingBytes === CHUNK_BYTES) await flush();
        }
      }
      await flush();
      const sha256 = hash.digest('hex');
      await this.db.query('UPDATE shared_blobs SET size = $2, sha256 = $3 WHERE id = $1', [id, size, sha256]);
      return { id, size, sha256 };
    } catch (err) {
      await this.db.query('DELETE FROM shared_blobs WHERE id = $1', [id]).catch(() => {});
      throw err;
    }
  }

  async *read(id: string): AsyncIterable<Uint8Array> {
    for (let seq = 0; ; ) {
      const rows = await this.db.query<{ seq: number; data: Uint8Array }>(
        'SELECT seq, data FROM shared_blob_chunks WHERE blob_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3',
        [id, seq, CHUNKS_PER_READ],
      );
      for (const row of rows) {
        if (row.seq !== seq) return;
        yield row.data;
        seq++;
      }
      if (rows.length < CHUNKS_PER_READ) return;
    }
  }

  async drop(ids: readonly string[], tx: Queryable = this.db): Promise<void> {
    if (ids.length) await tx.query('DELETE FROM shared_blobs WHERE id = ANY($1::uuid[])', [ids]);
  }

  async sweep(olderThanMs: number): Promise<number> {
    const rows = await this.db.query<{ id: string }>(
      `DELETE FROM shared_blobs b WHERE b.created_at < now() - ($1::double precision * interval '1 millisecond')
         AND NOT EXISTS (SELECT 1 FROM shared_files f WHERE f.blob_id = b.id) RETURNING id`,
      [olderThanMs],
    );
    return rows.length;
  }
}
