/**
 * Atomic writes (temporary file, flushed, renamed over the target, as server/storage/atomic.ts) of files only
 * their owner may read: password hashes, private keys, sessions and refresh tokens. The temporary file is
 * created with mode 0600, so the secret is never readable by others, not even for the moment before a chmod.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { TEMP_PREFIX } from '../storage/atomic.js';

export async function writePrivateFileAtomic(target: string, text: string): Promise<void> {
  const temp = path.join(path.dirname(target), `${TEMP_PREFIX}${randomUUID()}-${path.basename(target)}`);
  const handle = await fs.open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
    await handle.close();
    await fs.rename(temp, target);
  } catch (err) {
    await handle.close().catch(() => {});
    await fs.rm(temp, { force: true });
    throw err;
  }
}
