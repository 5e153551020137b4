/**
 * Reading DATA_DIR without following symbolic links. A link planted inside DATA_DIR (by whoever can write there)
 * must not make the server read, serve, train on or delete a file elsewhere, so files are opened with O_NOFOLLOW
 * (the open fails on a link) and folders are checked with lstat (a link to a folder is not a folder).
 */
import { constants } from 'node:fs';
import fs from 'node:fs/promises';

/** Opens for reading; refuses a symbolic link (ELOOP) and anything that is not a regular file (EISDIR-like). */
async function openRegularFile(file: string): Promise<fs.FileHandle> {
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (!(await handle.stat()).isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOTFILE' });
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** A regular file's bytes; throws (ELOOP, ENOTFILE, ENOENT, ...) for a link, a folder or a missing file. */
export async function readFileNoFollow(file: string): Promise<Buffer> {
  const handle = await openRegularFile(file);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** A regular file's bytes and stat, from one open (so they describe the same file). */
export async function readFileAndStatNoFollow(file: string): Promise<{ bytes: Buffer; stat: import('node:fs').Stats }> {
  const handle = await openRegularFile(file);
  try {
    const stat = await handle.stat();
    return { bytes: await handle.readFile(), stat };
  } finally {
    await handle.close();
  }
}

/** True when the path is a real folder (not a link to one). */
export async function isRealDirectory(dir: string): Promise<boolean> {
  try {
    return (await fs.lstat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** True when the path is a regular file (not a link to one). */
export async function isRegularFile(file: string): Promise<boolean> {
  try {
    return (await fs.lstat(file)).isFile();
  } catch {
    return false;
  }
}
