/**
 * The files under a data directory, to show that a request changed none of them (a refused upload, a failed
 * training). The embedded database's own files (DATA_DIR/db and its lock, .lookout-db.lock) are left out:
 * PostgreSQL writes its log and pages whenever it likes (a checkpoint, the audit row of a refused request), so
 * the rows it holds are checked through the API, not as files.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Whether a path relative to DATA_DIR is one of the embedded database's files. */
export function isDatabaseFile(rel: string): boolean {
  return rel === 'db' || rel.startsWith(`db${path.sep}`) || rel === '.lookout-db.lock';
}

/** Every file under `dir` (relative path) with what `describe` says of it, the database's files left out. */
async function fileTree<T>(dir: string, describe: (file: string) => Promise<T>): Promise<Record<string, T>> {
  const out: Record<string, T> = {};
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dir, file);
    if (isDatabaseFile(rel)) continue;
    out[rel] = await describe(file);
  }
  return out;
}

/** Every file under `dir` with the SHA-256 of its bytes (the database's files left out). */
export function hashTree(dir: string): Promise<Record<string, string>> {
  return fileTree(dir, async (file) =>
    crypto
      .createHash('sha256')
      .update(await fs.readFile(file))
      .digest('hex'),
  );
}

/** Every file under `dir` with its size (the database's files left out). */
export function sizeTree(dir: string): Promise<Record<string, number>> {
  return fileTree(dir, async (file) => (await fs.stat(file)).size);
}
