/**
 * Training images on disk: `<root>/<label>/<filename>`. Labels are already normalised and validated
 * (shared/api/labels.ts) before they reach this module. Writes are atomic and per-label serialised, so
 * concurrent uploads never lose an image and a delete never races an upload into a half-removed folder.
 *
 * API replicas on one DATA_DIR: a file is linked into place only under a name nobody has (EEXIST: a new
 * name, or for a capture id "already stored"), so no upload replaces another's. A delete first renames the
 * label folder aside (`.deleted-<uuid>`, atomic), then removes it: an upload that finished before the rename
 * goes with the label (and is counted); one still running when it happens finds its folder gone (ENOENT),
 * writes again into a new folder of the label, and is kept. An upload never fails or leaves a torn file
 * because of a delete.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { StoredImage } from '../../shared/api/index.js';
import { normalizeLabel } from '../../shared/api/labels.js';
import { TEMP_PREFIX, removeStaleTemps, writeFileAtomicExclusive } from './atomic.js';
import { KeyedLock } from './keyed-lock.js';

/** Label folders being deleted are renamed to this prefix first (never a valid label: it starts with a dot). */
const DELETED_PREFIX = '.deleted-';

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/**
 * Runs a write into a label folder, again when the folder vanished under it (a delete of the label on another
 * replica, or a replica starting up removing what looked like a leftover temporary file).
 */
async function retryVanished<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (errCode(err) !== 'ENOENT' || attempt >= 5) throw err;
    }
  }
}

const EXTENSIONS: Record<string, string> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  tiff: 'tif',
  avif: 'avif',
  heif: 'heic',
};

export interface ImageRef {
  label: string;
  filename: string;
  path: string;
}

export class ImageStore {
  private readonly lock = new KeyedLock();

  constructor(readonly root: string) {}

  async init(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    for (const label of await this.labelDirs()) await removeStaleTemps(path.join(this.root, label));
    // Deletes a crash interrupted (by this or another replica: the folder was already renamed aside).
    for (const name of await fs.readdir(this.root)) {
      if (name.startsWith(DELETED_PREFIX)) await fs.rm(path.join(this.root, name), { recursive: true, force: true, maxRetries: 5 });
    }
  }

  /** Stores one image under a label and returns its new file name (unique across every replica). */
  async save(label: string, bytes: Uint8Array, format: string): Promise<string> {
    const ext = EXTENSIONS[format] ?? 'img';
    const dir = path.join(this.root, label);
    return this.lock.run(label, () =>
      retryVanished(async () => {
        await fs.mkdir(dir, { recursive: true });
        for (;;) {
          const filename = `${Date.now()}-${randomUUID().slice(0, 8)}.${ext}`;
          try {
            await writeFileAtomicExclusive(path.join(dir, filename), bytes);
            return filename;
          } catch (err) {
            // Another upload (here or on another replica) took this name in the same millisecond: a new one.
            if (errCode(err) !== 'EEXIST') throw err;
          }
        }
      }),
    );
  }

  /**
   * Stores an image under its capture id (an idempotency key, already validated as [A-Za-z0-9_-]{8,64}) as
   * `<captureId>.<ext>`, once: when the label already has a file of that capture id, nothing is written and
   * that file's name comes back with `duplicate: true`. The check and the write run under the label's lock,
   * so two concurrent uploads of one capture store it once.
   */
  async saveCapture(
    label: string,
    bytes: Uint8Array,
    format: string,
    captureId: string,
  ): Promise<{ filename: string; duplicate: boolean }> {
    const ext = EXTENSIONS[format] ?? 'img';
    const dir = path.join(this.root, label);
    return this.lock.run(label, () =>
      retryVanished(async () => {
        const existing = await this.captureFile(dir, captureId);
        if (existing) return { filename: existing, duplicate: true };
        const filename = `${captureId}.${ext}`;
        await fs.mkdir(dir, { recursive: true });
        try {
          await writeFileAtomicExclusive(path.join(dir, filename), bytes);
        } catch (err) {
          // The same capture stored meanwhile by another replica: stored once.
          if (errCode(err) === 'EEXIST') return { filename, duplicate: true };
          throw err;
        }
        return { filename, duplicate: false };
      }),
    );
  }

  /** The stored file of a capture id in a label folder (any extension), or null. */
  private async captureFile(dir: string, captureId: string): Promise<string | null> {
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return null;
    }
    return names.find((name) => name.slice(0, name.lastIndexOf('.')) === captureId) ?? null;
  }

  /** The images of a label, oldest first (by the time stored, then name); null when the label has none. */
  async list(label: string): Promise<StoredImage[] | null> {
    const dir = path.join(this.root, label);
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      return null;
    }
    const images: StoredImage[] = [];
    for (const filename of names) {
      if (filename.startsWith(TEMP_PREFIX) || filename.startsWith('.')) continue;
      try {
        const st = await fs.stat(path.join(dir, filename));
        if (st.isFile()) images.push({ filename, bytes: st.size, created: st.mtime.toISOString() });
      } catch {
        // Deleted between readdir and stat: not there any more.
      }
    }
    if (images.length === 0) return null;
    // Names from capture ids do not sort by time, so the time stored decides.
    return images.sort((a, b) => a.created.localeCompare(b.created) || a.filename.localeCompare(b.filename));
  }

  /** Absolute path of one stored image, or null when it does not exist or the name is not one of ours. */
  async find(label: string, filename: string): Promise<string | null> {
    if (!/^[A-Za-z0-9._-]+$/.test(filename) || filename.startsWith('.')) return null;
    const file = path.join(this.root, label, filename);
    try {
      return (await fs.stat(file)).isFile() ? file : null;
    } catch {
      return null;
    }
  }

  /** Removes a label and all its images; returns how many images were removed (0: the label was unknown). */
  async remove(label: string): Promise<number> {
    return this.lock.run(label, async () => {
      const aside = `${DELETED_PREFIX}${randomUUID()}`;
      try {
        await fs.rename(path.join(this.root, label), path.join(this.root, aside));
      } catch (err) {
        if (errCode(err) === 'ENOENT') return 0;
        throw err;
      }
      const images = await this.list(aside);
      // An upload on another replica may still link a file into the renamed folder: retried until empty.
      await fs.rm(path.join(this.root, aside), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      return images?.length ?? 0;
    });
  }

  /** Every label that has at least one image, with its image count, sorted by label. */
  async labels(): Promise<{ label: string; images: number }[]> {
    const out: { label: string; images: number }[] = [];
    for (const label of await this.labelDirs()) {
      const images = await this.list(label);
      if (images) out.push({ label, images: images.length });
    }
    return out;
  }

  /** A snapshot of every stored image, for a training run. */
  async all(): Promise<ImageRef[]> {
    const refs: ImageRef[] = [];
    for (const { label } of await this.labels()) {
      for (const image of (await this.list(label)) ?? []) {
        refs.push({ label, filename: image.filename, path: path.join(this.root, label, image.filename) });
      }
    }
    return refs;
  }

  /** Sub-folders whose names are valid labels (anything else in the folder is not ours and is ignored). */
  private async labelDirs(): Promise<string[]> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(this.root, { withFileTypes: true });
    } catch {
      return [];
    }
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .filter((name) => {
        const check = normalizeLabel(name);
        return check.ok && check.label === name;
      })
      .sort();
  }
}
