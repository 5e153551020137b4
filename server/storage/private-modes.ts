/**
 * Photos, face templates and features, models, crops and results are biometric data: readable by the service's
 * user only (#35). Files are created 0600 (server/storage/atomic.ts, lock files) and folders 0700 (privateDir), so
 * nothing is readable by others even for a moment, whatever the umask.
 *
 * Files and folders an older version made (0644 and 0755 under the usual umask) are made private once at start
 * (makeDataDirPrivate): a walk of DATA_DIR, then a marker file so later starts skip it. Never through a symbolic
 * link: each entry is opened with O_NOFOLLOW and changed through its descriptor.
 */
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Written once DATA_DIR's older files and folders were made private. */
const MARKER = '.private-modes';

/** Makes a folder (and any missing parents) readable by the service's user only. */
export async function privateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Sets an entry's mode through a descriptor opened without following a link; false when it was a link or gone. */
async function chmodNoFollow(file: string, mode: number, directory: boolean): Promise<boolean> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | (directory ? constants.O_DIRECTORY : 0));
  } catch {
    return false;
  }
  try {
    if (((await handle.stat()).mode & 0o777) === mode) return false;
    await handle.chmod(mode);
    return true;
  } finally {
    await handle.close();
  }
}

/**
 * Makes DATA_DIR private (0700), and once (no marker yet) every file in it 0600 and every folder 0700. A change it
 * is not allowed to make (a volume owned by another user) is logged, never a reason not to start.
 */
export async function makeDataDirPrivate(dataDir: string, log?: Logger): Promise<void> {
  await privateDir(dataDir);
  try {
    await chmodNoFollow(dataDir, PRIVATE_DIR_MODE, true);
    try {
      await fs.access(path.join(dataDir, MARKER));
      return;
    } catch {
      // Not done yet.
    }
    let changed = 0;
    for (const entry of await fs.readdir(dataDir, { recursive: true, withFileTypes: true })) {
      if (!entry.isDirectory() && !entry.isFile()) continue; // links and anything else are left alone
      const file = path.join(entry.parentPath, entry.name);
      const directory = entry.isDirectory();
      if (await chmodNoFollow(file, directory ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE, directory)) changed++;
    }
    await fs.writeFile(path.join(dataDir, MARKER), 'files 0600, folders 0700 (#35)\n', { mode: PRIVATE_FILE_MODE });
    if (changed) log?.info(`made ${changed} files and folders under DATA_DIR readable by this user only (files 0600, folders 0700)`);
  } catch (err) {
    log?.warn(
      `could not make DATA_DIR's files private (files 0600, folders 0700): ${err instanceof Error ? err.message : String(err)}; set them by hand`,
    );
  }
}
