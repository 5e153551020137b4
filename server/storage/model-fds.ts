/**
 * File descriptors for the model files (model-store.ts, lbph-source-file.ts): they are streamed with positional
 * reads and writes, never read whole, and opened without following a link.
 */
import fsCallback, { constants } from 'node:fs';
import { promisify } from 'node:util';

export const openFd = promisify(fsCallback.open);
const fstat = promisify(fsCallback.fstat);
export const closeFd = promisify(fsCallback.close);
export const writeFd = promisify(fsCallback.write);
export const readFd = promisify(fsCallback.read);
export const fsyncFd = promisify(fsCallback.fsync);

/** Opens a regular file read-only without following a link; null when there is none (or a link, or a folder). */
export async function openNoFollow(file: string): Promise<{ fd: number; stat: fsCallback.Stats } | null> {
  let fd: number;
  try {
    fd = await openFd(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  const stat = await fstat(fd).catch(() => null);
  if (!stat?.isFile()) {
    await closeFd(fd).catch(() => {});
    return null;
  }
  return { fd, stat };
}
