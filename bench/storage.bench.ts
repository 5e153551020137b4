/**
 * `npm run bench storage` (#37): where file contents are kept, measured: files in DATA_DIR (the embedded default,
 * written as the stores write them: temporary file, fsync, rename), blobs in the embedded PGlite, and in a
 * PostgreSQL server as 1 MB bytea chunks (what replicas use) or as large objects. Photos (60 KB) one at a time, as
 * uploads arrive, and one 64 MB model file; written, then read back. Ratios are against files, in the same run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, type Database } from '../server/db/database.js';
import { createLogger } from '../server/logger.js';
import { writeFileAtomic } from '../server/storage/atomic.js';
import { PgBlobStore } from '../server/storage/replication/blob-store.js';
import { postgresInstalled, startPostgresCluster } from '../test/helpers/postgres-cluster.js';
import { median, type BenchRow } from './types.js';

const PHOTOS = 200;
const PHOTO_BYTES = 60_000;
const MODEL_BYTES = 64 << 20;
const log = createLogger('silent');

interface Backend {
  name: string;
  /** Stores the bytes; a handle to read them back. */
  put(bytes: Buffer): Promise<string>;
  get(handle: string): Promise<number>;
  close(): Promise<void>;
}

async function* pieces(bytes: Buffer): AsyncIterable<Uint8Array> {
  for (let at = 0; at < bytes.length; at += 1 << 20) yield bytes.subarray(at, at + (1 << 20));
}

function filesBackend(dir: string): Backend {
  let n = 0;
  return {
    name: 'files in DATA_DIR',
    async put(bytes) {
      const file = path.join(dir, `${n++}.bin`);
      await writeFileAtomic(file, bytes);
      return file;
    },
    async get(file) {
      return (await fs.readFile(file)).length;
    },
    async close() {},
  };
}

function blobBackend(name: string, db: Database): Backend {
  const blobs = new PgBlobStore(db);
  return {
    name,
    async put(bytes) {
      return (await blobs.put(pieces(bytes))).id;
    },
    async get(id) {
      let size = 0;
      for await (const piece of blobs.read(id)) size += piece.length;
      return size;
    },
    close: () => db.close(),
  };
}

/** Large objects, written and read 1 MB at a time in one transaction each (they are transactional). */
function largeObjectBackend(db: Database): Backend {
  return {
    name: 'PostgreSQL large objects',
    async put(bytes) {
      return db.transaction(async (tx) => {
        const [{ oid }] = await tx.query<{ oid: number }>("SELECT lo_from_bytea(0, ''::bytea) AS oid");
        for (let at = 0; at < bytes.length; at += 1 << 20) {
          await tx.query('SELECT lo_put($1, $2, $3)', [oid, at, bytes.subarray(at, at + (1 << 20))]);
        }
        return String(oid);
      });
    },
    async get(oid) {
      return db.transaction(async (tx) => {
        let size = 0;
        for (let at = 0; ; at += 1 << 20) {
          const [{ data }] = await tx.query<{ data: Buffer }>('SELECT lo_get($1, $2, $3) AS data', [Number(oid), at, 1 << 20]);
          size += data.length;
          if (data.length < 1 << 20) return size;
        }
      });
    },
    close: () => db.close(),
  };
}

interface Figures {
  photoWriteMs: number;
  photoReadMs: number;
  modelWriteMBs: number;
  modelReadMBs: number;
}

async function measure(backend: Backend): Promise<Figures> {
  const photos = Array.from({ length: PHOTOS }, () => randomBytes(PHOTO_BYTES));
  const writes: number[] = [];
  const handles: string[] = [];
  for (const photo of photos) {
    const t0 = performance.now();
    handles.push(await backend.put(photo));
    writes.push(performance.now() - t0);
  }
  const reads: number[] = [];
  for (const handle of handles) {
    const t0 = performance.now();
    await backend.get(handle);
    reads.push(performance.now() - t0);
  }
  const model = randomBytes(MODEL_BYTES);
  let t0 = performance.now();
  const handle = await backend.put(model);
  const modelWriteMBs = MODEL_BYTES / 1e6 / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  await backend.get(handle);
  const modelReadMBs = MODEL_BYTES / 1e6 / ((performance.now() - t0) / 1000);
  return { photoWriteMs: median(writes), photoReadMs: median(reads), modelWriteMBs, modelReadMBs };
}

export async function benchStorage(): Promise<BenchRow[]> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-storage-'));
  let cluster: { url: string; stop(): Promise<void> } | null = null;
  const found: [string, Figures][] = [];
  try {
    await fs.mkdir(path.join(dir, 'files'));
    const backends: Backend[] = [filesBackend(path.join(dir, 'files'))];
    const embedded = createDatabase({ url: '', embeddedDir: path.join(dir, 'db'), log });
    await embedded.open();
    backends.push(blobBackend('embedded PGlite, 1 MB bytea chunks', embedded));
    if (postgresInstalled()) {
      cluster = await startPostgresCluster();
      const server = createDatabase({ url: cluster.url, embeddedDir: path.join(dir, 'unused'), log });
      await server.open();
      backends.push(blobBackend('PostgreSQL, 1 MB bytea chunks', server));
      const lo = createDatabase({ url: cluster.url, embeddedDir: path.join(dir, 'unused'), log });
      await lo.open();
      backends.push(largeObjectBackend(lo));
    } else console.log('  storage: no PostgreSQL installed (apt-get install -y postgresql): only files and PGlite are measured');
    for (const backend of backends) {
      found.push([backend.name, await measure(backend)]);
      await backend.close();
    }
  } finally {
    await cluster?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
  const [, files] = found[0];
  const figures: [keyof Figures, string, string][] = [
    ['photoWriteMs', 'write a 60 KB photo', 'ms'],
    ['photoReadMs', 'read a 60 KB photo', 'ms'],
    ['modelWriteMBs', 'write a 64 MB model', 'MB/s'],
    ['modelReadMBs', 'read a 64 MB model', 'MB/s'],
  ];
  const rows: BenchRow[] = [];
  for (const [name, f] of found.slice(1)) {
    for (const [key, what, unit] of figures) {
      rows.push({
        name: `storage: ${what}, ${name}`,
        unit,
        lookout: f[key],
        reference: files[key],
        referenceName: 'files',
        ratio: f[key] / files[key],
      });
    }
  }
  return rows;
}
