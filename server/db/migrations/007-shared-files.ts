/**
 * #37: the files API replicas share (photos, features, models, settings, sighting crops), for `DATABASE_URL` only
 * (server/storage/replication/): PostgreSQL is their state and each replica's DATA_DIR a copy.
 *
 * - `shared_blobs` / `shared_blob_chunks`: file contents in chunks of 1 MB (bytea), written and read a few chunks at
 *   a time, never one value for a whole file (training.yml is about 1.2 GB at 10,000 faces).
 * - `shared_files`: one row per path (relative to DATA_DIR), pointing at its current blob, or a tombstone (`blob_id`
 *   null) once removed. `version` comes from one sequence and only grows: a replica copies the rows past the newest
 *   version it has applied. Writers take one transaction-level advisory lock around the short transaction that
 *   assigns it, so versions become visible in their order and none is skipped.
 */
import type { Migration } from './index.js';

export const sharedFiles: Migration = {
  version: 7,
  name: 'shared-files',
  sql: `
CREATE TABLE shared_blobs (
  id uuid PRIMARY KEY,
  size bigint NOT NULL,
  sha256 text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE shared_blob_chunks (
  blob_id uuid NOT NULL REFERENCES shared_blobs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (blob_id, seq)
);
CREATE SEQUENCE shared_files_version;
CREATE TABLE shared_files (
  path text PRIMARY KEY,
  version bigint NOT NULL,
  blob_id uuid REFERENCES shared_blobs (id) ON DELETE SET NULL,
  size bigint NOT NULL DEFAULT 0,
  sha256 text,
  -- The file's modification time where it was written: copies show it too (a model's training time is its file's).
  mtime timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX shared_files_version_idx ON shared_files (version);
CREATE INDEX shared_files_path_prefix ON shared_files (path text_pattern_ops);
`,
};
