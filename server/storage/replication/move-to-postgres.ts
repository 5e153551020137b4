/**
 * Moving a DATA_DIR into PostgreSQL (#37; `npm run data:to-postgres`): its shared files (photos, features, models,
 * settings, sighting crops) and, when it ran embedded, the rows of its PGlite database (sightings, people, results,
 * the audit log...). Idempotent and resumable: each file is its own transaction and one already there with the same
 * sha256 is skipped; rows are inserted with ON CONFLICT DO NOTHING. Nothing in DATA_DIR is changed or removed, and
 * nothing PostgreSQL holds is overwritten: a file it holds with other bytes, or one it removed since an earlier
 * move, is reported and left as PostgreSQL has it. Run it with every server stopped (the embedded database is one
 * process's).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Database, Queryable } from '../../db/database.js';
import { SHARED_ROOTS, sharedPath } from '../shared-files.js';
import { PgBlobStore } from './blob-store.js';
import { filesUnder } from './pg-shared-files.js';
import { type FileRow, SharedWrites } from './shared-writes.js';

export interface MoveReport {
  files: { moved: number; bytes: number; alreadyThere: number; different: string[]; removedThere: string[] };
  rows: { table: string; copied: number; alreadyThere: number; refused?: string }[];
}

/** Tables that are not data to move: the schema's own bookkeeping and the shared files themselves. */
const NOT_MOVED = new Set(['schema_migrations', 'shared_files', 'shared_blobs', 'shared_blob_chunks']);
const ROW_BATCH = 500;

export async function moveDataDirToPostgres(opts: {
  dataDir: string;
  target: Database;
  /** The embedded database of that DATA_DIR, when it has one. */
  source: Database | null;
  progress?: (line: string) => void;
}): Promise<MoveReport> {
  const say = opts.progress ?? (() => {});
  await opts.target.open();
  const report: MoveReport = { files: { moved: 0, bytes: 0, alreadyThere: 0, different: [], removedThere: [] }, rows: [] };
  const writes = new SharedWrites(opts.target, new PgBlobStore(opts.target));
  const rows = new Map(
    (
      await opts.target.query<FileRow>(
        'SELECT path, version::text AS version, blob_id, size::text AS size, sha256, mtime FROM shared_files',
      )
    ).map((r) => [r.path, r]),
  );
  const dataDir = path.resolve(opts.dataDir);
  let seen = 0;
  for (const root of SHARED_ROOTS) {
    for (const file of await filesUnder(path.join(dataDir, root))) {
      const rel = sharedPath(dataDir, file);
      if (!rel) continue;
      if (++seen % 500 === 0) say(`files: ${seen} looked at, ${report.files.moved} moved`);
      const there = rows.get(rel);
      // A tombstone for the file or a folder above it: removed in PostgreSQL since an earlier move; not brought back.
      const removed = [...ancestors(rel)].some((p) => {
        const row = rows.get(p);
        return row !== undefined && row.blob_id === null;
      });
      if (there?.blob_id) {
        if ((await fileDigest(file)).sha256 === there.sha256) report.files.alreadyThere++;
        else report.files.different.push(rel);
        continue;
      }
      if (removed) {
        report.files.removedThere.push(rel);
        continue;
      }
      await writes.putFile(rel, file);
      report.files.moved++;
      report.files.bytes += (await fileDigest(file)).size;
    }
  }
  if (opts.source) {
    await opts.source.open();
    for (const table of await movableTables(opts.target)) {
      const moved = await moveRows(opts.source, opts.target, table);
      report.rows.push(moved);
    }
  }
  return report;
}

/** The path itself and each folder above it. */
function* ancestors(rel: string): Generator<string> {
  const parts = rel.split('/');
  for (let n = parts.length; n > 0; n--) yield parts.slice(0, n).join('/');
}

async function fileDigest(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const piece of createReadStream(file, { highWaterMark: 1 << 20 })) {
    hash.update(piece as Buffer);
    size += (piece as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

async function movableTables(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
  );
  return rows.map((r) => r.table_name).filter((t) => !NOT_MOVED.has(t));
}

interface Column {
  name: string;
  type: string;
  serial: boolean;
}

async function columnsOf(db: Queryable, table: string): Promise<Column[]> {
  return db.query<Column>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            pg_get_serial_sequence(quote_ident($1), a.attname) IS NOT NULL AS serial
       FROM pg_attribute a WHERE a.attrelid = quote_ident($1)::regclass AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [table],
  );
}

async function primaryKeyOf(db: Queryable, table: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
      WHERE i.indrelid = quote_ident($1)::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
    [table],
  );
  return rows.map((r) => r.name);
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A value as the target's parameter: JSON as its text (pg would send a JS array as a PostgreSQL array), bytes as a Buffer. */
function param(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'jsonb' || type === 'json') return JSON.stringify(value);
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

function sameRow(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  // The two drivers differ in form, not value: PGlite gives bigints as numbers, pg as text.
  const norm = (v: unknown): string =>
    typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string'
      ? String(v)
      : v instanceof Date
        ? v.toISOString()
        : v instanceof Uint8Array
          ? Buffer.from(v).toString('base64')
          : JSON.stringify(v ?? null);
  return Object.keys(a).every((k) => norm(a[k]) === norm(b[k]));
}

async function moveRows(source: Queryable, target: Queryable, table: string): Promise<MoveReport['rows'][number]> {
  const columns = await columnsOf(target, table);
  const key = await primaryKeyOf(target, table);
  const order = (key.length ? key : columns.map((c) => c.name)).map(quote).join(', ');
  const names = columns.map((c) => quote(c.name)).join(', ');
  const serial = columns.filter((c) => c.serial);
  // Rows numbered by a sequence (results, the audit log) keep their numbers; into a table that already holds other
  // rows they would collide with them, so they are moved only into an empty table or one this move began to fill.
  if (serial.length) {
    const [{ n }] = await target.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quote(table)}`);
    const [first] = await source.query<Record<string, unknown>>(`SELECT ${names} FROM ${quote(table)} ORDER BY ${order} LIMIT 1`);
    if (n > 0 && first) {
      const where = key.map((k, i) => `${quote(k)} = $${i + 1}`).join(' AND ');
      const [there] = await target.query<Record<string, unknown>>(
        `SELECT ${names} FROM ${quote(table)} WHERE ${where}`,
        key.map((k) => first[k]),
      );
      if (!there || !sameRow(first, there)) {
        return { table, copied: 0, alreadyThere: 0, refused: `PostgreSQL's ${table} already holds other rows numbered by its sequence` };
      }
    }
  }
  let copied = 0;
  let total = 0;
  for (let offset = 0; ; offset += ROW_BATCH) {
    const rows = await source.query<Record<string, unknown>>(
      `SELECT ${names} FROM ${quote(table)} ORDER BY ${order} LIMIT ${ROW_BATCH} OFFSET ${offset}`,
    );
    if (!rows.length) break;
    total += rows.length;
    const params: unknown[] = [];
    const tuples = rows.map(
      (row) =>
        `(${columns
          .map((c) => {
            params.push(param(row[c.name], c.type));
            return `$${params.length}::${c.type}`;
          })
          .join(', ')})`,
    );
    const inserted = await target.query(
      `INSERT INTO ${quote(table)} (${names}) VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING RETURNING 1`,
      params,
    );
    copied += inserted.length;
    if (rows.length < ROW_BATCH) break;
  }
  for (const c of serial) {
    await target.query(`SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT max(${quote(c.name)}) FROM ${quote(table)}), 1))`, [
      quote(table),
      c.name,
    ]);
  }
  return { table, copied, alreadyThere: total - copied };
}
