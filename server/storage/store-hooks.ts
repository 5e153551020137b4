/**
 * #37: the stores' side of the SharedFiles seam (shared-files.ts): a change made here is told to the seam, and one
 * the seam could not share is undone here where that is cheap and safe, so that what a caller is told was stored is
 * what every replica gets.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { LocalFiles, type SharedFiles } from './shared-files.js';

/** The embedded seam of the DATA_DIR that holds `folder` (a store's folder, such as DATA_DIR/images): for stores made without one. */
export function localFilesAbove(folder: string): SharedFiles {
  return new LocalFiles(path.dirname(path.resolve(folder)));
}

/** Tells the seam `file` was put in place; when it cannot be shared, `undo` runs (its own failure is not the news) and the error goes on. */
export async function wroteOrUndo(shared: SharedFiles, file: string, undo: () => Promise<unknown>): Promise<void> {
  try {
    await shared.wrote(file);
  } catch (err) {
    await undo().catch(() => {});
    throw err;
  }
}

/** Tells the seam `file` was put in place; when it cannot be shared, the file is removed (it was new: nothing to restore). */
export function wroteNew(shared: SharedFiles, file: string): Promise<void> {
  return wroteOrUndo(shared, file, () => fs.rm(file, { force: true }));
}

/** Removes an empty folder and tells the seam; a folder that is not empty, or gone, is left as it is (no error). */
export async function removeEmptyFolder(shared: SharedFiles, dir: string): Promise<boolean> {
  try {
    await fs.rmdir(dir);
  } catch {
    return false;
  }
  await shared.removed(dir);
  return true;
}
