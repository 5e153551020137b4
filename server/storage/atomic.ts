/**
 * Crash-safe file writes: the bytes go to a temporary file in the same directory, are flushed to disk, and
 * the temporary file is renamed over the target. A reader (or a restart after a crash) sees either the old
 * file or the new one, never a torn one. Temporary names start with `.tmp-` so listings can skip them.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from './private-modes.js';

export const TEMP_PREFIX = '.tmp-';

/** What a file is written from: bytes, text, or text or bytes in pieces (written one after the other, never joined). */
export type FileData = Uint8Array | string | Iterable<string | Uint8Array>;

/** `mtime`: the modification time the new file shows (a model rewritten without a person keeps its training time). */
export async function writeFileAtomic(target: string, data: FileData, opts: { mtime?: Date } = {}): Promise<void> {
  const temp = await writeTemp(target, data);
  try {
    if (opts.mtime) await fs.utimes(temp, opts.mtime, opts.mtime);
    await fs.rename(temp, target);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}

/**
 * Like writeFileAtomic, but never replaces a file: the complete temporary file is hard-linked to the target,
 * which fails with EEXIST when the name is taken (also by another process on a shared volume).
 */
export async function writeFileAtomicExclusive(target: string, data: FileData): Promise<void> {
  const temp = await writeTemp(target, data);
  try {
    await fs.link(temp, target);
  } finally {
    await fs.rm(temp, { force: true });
  }
}

/** The data in a flushed temporary file beside the target; returns its path. */
async function writeTemp(target: string, data: FileData): Promise<string> {
  const temp = path.join(path.dirname(target), `${TEMP_PREFIX}${randomUUID()}-${path.basename(target)}`);
  // Private from the start (#35): photos, templates and crops are biometric data (server/storage/private-modes.ts).
  const handle = await fs.open(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) await handle.writeFile(data);
    else for (const piece of data) await (typeof piece === 'string' ? handle.write(piece) : handle.write(piece));
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await fs.rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  return temp;
}

/** Removes temporary files a crash left behind in a directory (they were never renamed, so never valid). */
export async function removeStaleTemps(dir: string): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (name.startsWith(TEMP_PREFIX)) {
      await fs.rm(path.join(dir, name), { force: true });
      removed++;
    }
  }
  return removed;
}
