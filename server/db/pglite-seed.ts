/**
 * A prepared data folder for the embedded database (#38). A new PGlite database runs PostgreSQL's initdb in
 * WebAssembly: a second PGlite and the initdb module in the same thread, 3.6-9 s on a 2-core box, and memory the
 * thread keeps afterwards (idle 473 MB against 322 MB for the same database opened again, peak 1.09 GB). initdb's
 * output is the same for every install of one PGlite version, so `npm run build` makes it once
 * (`node dist/server/db/pglite-seed.js`) and a new database is that folder unpacked: no initdb, no second PGlite.
 *
 * The seed is PostgreSQL's own catalog (template databases, `postgres`), nothing of ours: the migrations still run
 * at open. It is named by the PGlite version that made it; another version (or no seed, as when the server runs
 * from its sources) falls back to initdb. Every database unpacked from one seed shares its system identifier,
 * which only physical replication reads, and PGlite has none.
 *
 * The file is a gzipped POSIX tar (`tar tzf` lists it) of a cleanly closed database.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const require = createRequire(import.meta.url);

/** The installed PGlite's version: a seed is only used by the version that made it. */
export function pgliteVersion(): string {
  const main = require.resolve('@electric-sql/pglite');
  // The package's main file is in dist/; its package.json one folder up.
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(main), '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** Where the seed for this PGlite version lives: next to this module (dist/server/db/ once built). */
export function seedPath(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), `pglite-seed-${pgliteVersion()}.tar.gz`);
}

/** The file PostgreSQL reads first: a folder with it is a database. Unpacked last, so a half-unpacked folder is not one. */
const PG_VERSION = 'PG_VERSION';

export interface TarEntry {
  /** A path inside the folder, `/`-separated. */
  name: string;
  dir: boolean;
  body: Uint8Array;
}
type Entry = TarEntry;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function tarHeader(name: string, size: number, dir: boolean): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`a path too long for the seed: ${name}`);
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(dir ? 0o700 : 0o600, 8), 100);
  h.write(octal(0, 8), 108);
  h.write(octal(0, 8), 116);
  h.write(octal(size, 12), 124);
  h.write(octal(0, 12), 136);
  h.write('        ', 148); // the checksum counts its own field as spaces
  h.write(dir ? '5' : '0', 156);
  h.write('ustar\0' + '00', 257);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

function field(block: Uint8Array, offset: number, length: number): string {
  const raw = Buffer.from(block.subarray(offset, offset + length));
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString('utf8');
}

/** The entries of a tar written by tarHeader (or any ustar with plain files and folders); anything else is refused. */
function readTar(tar: Uint8Array): Entry[] {
  const entries: Entry[] = [];
  let at = 0;
  while (at + 512 <= tar.length && tar[at] !== 0) {
    const name = field(tar, at, 100);
    const prefix = field(tar, at + 345, 155);
    const size = Number.parseInt(field(tar, at + 124, 12).trim() || '0', 8);
    const type = field(tar, at + 156, 1) || '0';
    const full = path.posix.normalize((prefix ? `${prefix}/${name}` : name).replace(/^\/+/, ''));
    if (!Number.isFinite(size) || full.startsWith('..') || path.posix.isAbsolute(full)) {
      throw new Error(`the seed has an entry it should not: ${JSON.stringify(full)}`);
    }
    if (type !== '0' && type !== '5') throw new Error(`the seed has an entry of type ${JSON.stringify(type)}: ${full}`);
    at += 512;
    entries.push({ name: full.replace(/\/$/, ''), dir: type === '5', body: tar.subarray(at, at + size) });
    at += Math.ceil(size / 512) * 512;
  }
  return entries;
}

/**
 * Unpacks the seed into `dir` (empty, or left half-unpacked by a crash: every file is written again), PG_VERSION
 * last. False when there is no seed for this PGlite version.
 */
export async function unpackSeed(dir: string, file = seedPath()): Promise<boolean> {
  if (!existsSync(file)) return false;
  const entries = readTar(gunzipSync(await fs.readFile(file)));
  if (!entries.some((e) => e.name === PG_VERSION)) throw new Error(`${file} is not a database folder (no ${PG_VERSION})`);
  for (const e of entries.filter((e) => e.dir)) await fs.mkdir(path.join(dir, e.name), { recursive: true, mode: 0o700 });
  const files = entries.filter((e) => !e.dir && e.name !== PG_VERSION);
  // A few at a time: a thousand small files, written one by one, took over a second on a loaded disk.
  for (let i = 0; i < files.length; i += 32) {
    await Promise.all(files.slice(i, i + 32).map((e) => fs.writeFile(path.join(dir, e.name), e.body, { mode: 0o600 })));
  }
  const version = entries.find((e) => e.name === PG_VERSION) as Entry;
  await fs.writeFile(path.join(dir, PG_VERSION), version.body, { mode: 0o600 });
  return true;
}

/** A gzipped ustar of `entries`, as unpackSeed reads it. */
export function packSeed(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(tarHeader(e.dir ? `${e.name}/` : e.name, e.body.length, e.dir));
    if (!e.dir) {
      parts.push(Buffer.from(e.body));
      parts.push(Buffer.alloc((512 - (e.body.length % 512)) % 512));
    }
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}

async function walk(root: string, rel = ''): Promise<Entry[]> {
  const out: Entry[] = [];
  const items = await fs.readdir(path.join(root, rel), { withFileTypes: true });
  items.sort((a, b) => a.name.localeCompare(b.name));
  for (const item of items) {
    const name = rel ? `${rel}/${item.name}` : item.name;
    if (item.isDirectory()) {
      out.push({ name, dir: true, body: new Uint8Array() });
      out.push(...(await walk(root, name)));
    } else if (item.isFile() && item.name !== 'postmaster.pid') {
      out.push({ name, dir: false, body: await fs.readFile(path.join(root, name)) });
    }
  }
  return out;
}

/** Runs initdb once in a temporary folder, closes the database cleanly and writes it as the seed. */
export async function makeSeed(file = seedPath()): Promise<{ file: string; bytes: number; sha256: string }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-pglite-seed-'));
  try {
    const dir = path.join(tmp, 'db');
    const db = await PGlite.create(dir);
    await db.close();
    const gz = packSeed(await walk(dir));
    await fs.writeFile(`${file}.tmp`, gz);
    await fs.rename(`${file}.tmp`, file);
    return { file, bytes: gz.length, sha256: createHash('sha256').update(gz).digest('hex') };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const made = await makeSeed();
  console.log(`embedded database seed: ${made.file} (${made.bytes} bytes, sha256 ${made.sha256}) in ${Date.now() - started} ms`);
}
