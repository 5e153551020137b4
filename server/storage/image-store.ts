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
 *
 * Symbolic links are never followed (server/storage/no-follow.ts): a label folder that is a link is no label,
 * a file that is a link is not an image, so nothing outside the folder is listed, served, trained on, written
 * through or deleted through.
 *
 * Folders named before labels were NFC-normalised after lower-casing (a name that differs from its label only
 * by its Unicode normalisation form, such as `t` + U+0308 for the label U+1E97) are merged into their label's
 * folder at start, so their images are listed, trained and deleted with the label; nothing is lost.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { StoredImage } from '../../shared/api/index.js';
import { normalizeLabel } from '../../shared/api/labels.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { labelSkeleton } from '../people/confusables.js';
import { TEMP_PREFIX, removeStaleTemps, writeFileAtomicExclusive } from './atomic.js';
import type { FeatureStore, ImageFeatures } from './feature-store.js';
import { KeyedLock } from './keyed-lock.js';
import { isRealDirectory, readFileNoFollow } from './no-follow.js';
import { privateDir } from './private-modes.js';
import type { SharedFiles } from './shared-files.js';
import { localFilesAbove, wroteNew } from './store-hooks.js';

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

/** Held while folders of an older naming are merged into their labels (replicas starting together). */
const MIGRATION_LOCK_FILE = '.label-names.lock';
/** Held while a new label's folder is made, so two look-alike labels are never both created (replicas too). */
const NEW_LABEL_LOCK_FILE = '.new-label.lock';

export class ImageStore {
  private readonly lock = new KeyedLock();

  /**
   * `features`: the training features kept per image (feature-store.ts), removed here with their image or person,
   * under the label's lock. `shared` (#37): told of every file written, removed or moved here, and the source of the
   * locks every replica shares (the embedded default of the folder above `root` when not given).
   */
  constructor(
    readonly root: string,
    private readonly log?: Logger,
    readonly features: FeatureStore | null = null,
    readonly shared: SharedFiles = localFilesAbove(root),
  ) {}

  async init(): Promise<void> {
    await privateDir(this.root);
    await this.mergeLegacyFolders();
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
        await this.labelFolderOf(label);
        for (;;) {
          const filename = `${Date.now()}-${randomUUID().slice(0, 8)}.${ext}`;
          try {
            await writeFileAtomicExclusive(path.join(dir, filename), bytes);
          } catch (err) {
            // Another upload (here or on another replica) took this name in the same millisecond: a new one.
            if (errCode(err) !== 'EEXIST') throw err;
            continue;
          }
          // Not shared (503): not stored either, so what is acknowledged is what every replica has.
          await wroteNew(this.shared, path.join(dir, filename));
          return filename;
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
        await this.labelFolderOf(label);
        try {
          await writeFileAtomicExclusive(path.join(dir, filename), bytes);
        } catch (err) {
          // The same capture stored meanwhile by another replica: stored once.
          if (errCode(err) === 'EEXIST') return { filename, duplicate: true };
          throw err;
        }
        await wroteNew(this.shared, path.join(dir, filename));
        return { filename, duplicate: false };
      }),
    );
  }

  /**
   * The folder of a label an image is stored under. A label that has none yet is a new person: refused when it looks
   * like a label that exists (the same UTS #39 skeleton, #35), checked and made under one lock every replica shares,
   * so two look-alikes uploaded at once are never both created.
   */
  private async labelFolderOf(label: string): Promise<void> {
    const dir = path.join(this.root, label);
    if (await isRealDirectory(dir)) return;
    await this.shared.lock(path.join(this.root, NEW_LABEL_LOCK_FILE)).run(async () => {
      if (!(await isRealDirectory(dir))) {
        const skeleton = labelSkeleton(label);
        const twin = (await this.labelDirs()).find((other) => other !== label && labelSkeleton(other) === skeleton);
        if (twin !== undefined) {
          throw new ApiError(
            'label_confusable',
            `label "${label}" looks like the existing label "${twin}" (Unicode confusables, UTS #39): add the images to "${twin}", or choose a name that cannot be mistaken for it`,
            { existing_label: twin },
          );
        }
      }
      await this.labelFolder(dir);
    });
  }

  /** Makes a label's folder; refuses to write through a link standing where the folder should be. */
  private async labelFolder(dir: string): Promise<void> {
    await privateDir(dir);
    if (!(await isRealDirectory(dir))) {
      throw new Error(`${dir} is not a folder (a symbolic link?): images are not written through it`);
    }
  }

  /** The stored file of a capture id in a label folder (any extension), or null. */
  private async captureFile(dir: string, captureId: string): Promise<string | null> {
    let names: string[];
    try {
      if (!(await isRealDirectory(dir))) return null;
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
      if (!(await isRealDirectory(dir))) return null;
      names = await fs.readdir(dir);
    } catch {
      return null;
    }
    const images: StoredImage[] = [];
    for (const filename of names) {
      if (filename.startsWith(TEMP_PREFIX) || filename.startsWith('.')) continue;
      try {
        // lstat: a link is not an image, whatever it points at.
        const st = await fs.lstat(path.join(dir, filename));
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
      if (!(await isRealDirectory(path.join(this.root, label)))) return null;
      return (await fs.lstat(file)).isFile() ? file : null;
    } catch {
      return null;
    }
  }

  /** One stored image's bytes, or null when it does not exist, the name is not one of ours, or it is a link. */
  async read(label: string, filename: string): Promise<Uint8Array | null> {
    const file = await this.find(label, filename);
    if (!file) return null;
    try {
      const bytes = await readFileNoFollow(file);
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    } catch {
      // Deleted, or replaced by a link, since find.
      return null;
    }
  }

  /** The bytes of an image of a training snapshot (all()); throws when it is gone or was replaced by a link. */
  async readRef(ref: ImageRef): Promise<Uint8Array> {
    const bytes = await readFileNoFollow(ref.path);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** Removes a label and all its images; returns how many images were removed (0: the label was unknown). */
  async remove(label: string): Promise<number> {
    return this.lock.run(label, async () => {
      // A link where the folder should be is no label: left alone, nothing is deleted through it.
      if (!(await isRealDirectory(path.join(this.root, label)))) return 0;
      const aside = `${DELETED_PREFIX}${randomUUID()}`;
      try {
        await fs.rename(path.join(this.root, label), path.join(this.root, aside));
      } catch (err) {
        if (errCode(err) === 'ENOENT') return 0;
        throw err;
      }
      // The label is gone under its name from here on (the aside folder is nobody's): told now, so a crash before
      // the folder is removed cannot keep it in the shared state; when it cannot be told, the label comes back.
      try {
        await this.shared.removed(path.join(this.root, label));
      } catch (err) {
        await fs.rename(path.join(this.root, aside), path.join(this.root, label)).catch(() => {});
        throw err;
      }
      const images = await this.list(aside);
      // An upload on another replica may still link a file into the renamed folder: retried until empty.
      await fs.rm(path.join(this.root, aside), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
      await this.features?.removeLabel(label);
      return images?.length ?? 0;
    });
  }

  /**
   * Removes one stored image (unlink: atomic, never half a file). Returns the images the label has left, or null
   * when there is no such image: the name is not one of ours, the folder or the file is a link (a link is left
   * alone, nothing is deleted through it), or it is already gone. The label's last image takes its folder along,
   * as deleting the label would; an upload racing that finds the folder gone writes it anew (retryVanished).
   */
  async removeOne(label: string, filename: string): Promise<number | null> {
    return this.lock.run(label, async () => {
      const file = await this.find(label, filename);
      if (!file) return null;
      try {
        await fs.unlink(file);
      } catch (err) {
        if (errCode(err) === 'ENOENT') return null;
        throw err;
      }
      await this.shared.removed(file);
      await this.features?.remove(label, filename);
      const left = (await this.list(label))?.length ?? 0;
      if (left === 0) {
        try {
          await fs.rmdir(path.join(this.root, label));
          await this.shared.removed(path.join(this.root, label));
        } catch (err) {
          // Not empty after all (a temporary file of an upload on another replica): the folder stays, harmless.
          if (errCode(err) !== 'ENOTEMPTY' && errCode(err) !== 'EEXIST' && errCode(err) !== 'ENOENT') throw err;
        }
      }
      return left;
    });
  }

  /**
   * #36 2: copies images of `from` into `to` (merge, move photos) as hard links, keeping each name unless `to` has it
   * (then a new one), with their training features; the originals stay until the caller has recorded the move and
   * calls removeMoved, so a crash midway leaves a photo twice, never nowhere. `to` is made a label as an upload would
   * (a new look-alike label is refused, 409 `label_confusable`). Both labels' locks are held, in name order.
   * Answers the new name of each image copied; an image that is not there is left out.
   */
  async copyInto(from: string, to: string, filenames: readonly string[]): Promise<Map<string, string>> {
    const [first, second] = from < to ? [from, to] : [to, from];
    return this.lock.run(first, () =>
      this.lock.run(second, async () => {
        const copied = new Map<string, string>();
        const present: string[] = [];
        for (const filename of filenames) if (await this.find(from, filename)) present.push(filename);
        if (present.length === 0) return copied;
        await this.labelFolderOf(to);
        try {
          for (const filename of present) {
            const ext = path.extname(filename);
            for (let target = filename; ; target = `${Date.now()}-${randomUUID().slice(0, 8)}${ext}`) {
              try {
                await fs.link(path.join(this.root, from, filename), path.join(this.root, to, target));
                copied.set(filename, target);
              } catch (err) {
                if (errCode(err) === 'ENOENT') break;
                if (errCode(err) !== 'EEXIST') throw err;
                continue;
              }
              await this.shared.wrote(path.join(this.root, to, target));
              break;
            }
            const target = copied.get(filename);
            const features = target ? await this.features?.read(from, filename).catch(() => null) : null;
            if (target && features) await this.features?.write(to, target, features);
          }
        } catch (err) {
          // Nothing of a failed copy stays under `to`.
          for (const target of copied.values()) {
            const copy = path.join(this.root, to, target);
            await fs.unlink(copy).then(
              () => this.shared.removed(copy),
              () => null,
            );
          }
          throw err;
        }
        return copied;
      }),
    );
  }

  /** Removes the originals of images copyInto copied (or the copies, when what they were for failed); how many. */
  async removeMoved(label: string, filenames: readonly string[]): Promise<number> {
    let removed = 0;
    for (const filename of filenames) if ((await this.removeOne(label, filename)) !== null) removed++;
    return removed;
  }

  /**
   * Keeps a training image's features, under the label's lock and only while the image is still the one they were
   * made from: a delete here that ran meanwhile took the image, and its features must not come back.
   */
  async keepFeatures(ref: ImageRef, features: ImageFeatures): Promise<boolean> {
    const store = this.features;
    if (!store) return false;
    return this.lock.run(ref.label, async () => {
      if (!(await this.find(ref.label, ref.filename))) return false;
      await store.write(ref.label, ref.filename, features);
      return true;
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

  /**
   * Sub-folders whose names are valid labels (anything else in the folder is not ours and is ignored). A Dirent
   * of a symbolic link is not a directory, so links are never label folders.
   */
  private async labelDirs(): Promise<string[]> {
    return (await this.folders())
      .filter((name) => {
        const check = normalizeLabel(name);
        return check.ok && check.label === name;
      })
      .sort();
  }

  /** The real sub-folders of the root, by name. */
  private async folders(): Promise<string[]> {
    try {
      return (await fs.readdir(this.root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
  }

  /**
   * Merges folders whose names differ from their label only by Unicode normalisation (what the label rules before
   * NFC-after-lower-casing could create, or a copy through a file system that decomposes names) into the label's
   * folder; says which other folders are not labels and are left alone.
   */
  private async mergeLegacyFolders(): Promise<void> {
    const legacy: { name: string; label: string }[] = [];
    for (const name of await this.folders()) {
      if (name.startsWith('.')) continue;
      const check = normalizeLabel(name);
      if (check.ok && check.label === name) continue;
      if (check.ok && name.normalize('NFC') === check.label) legacy.push({ name, label: check.label });
      else
        this.log?.warn(
          `images/${JSON.stringify(name)} is not a label folder (${check.ok ? `the label would be ${JSON.stringify(check.label)}` : check.reason}); it is left as it is and not used`,
        );
    }
    if (legacy.length === 0) return;
    // One replica merges; another starting at the same time waits, then finds nothing left to do.
    await this.shared.lock(path.join(this.root, MIGRATION_LOCK_FILE)).run(async () => {
      for (const { name, label } of legacy) await this.lock.run(label, () => this.mergeFolder(name, label));
    }, 120_000);
  }

  /** Moves every image of folder `name` into the folder of `label` (a new name where its own is taken), then removes it. */
  private async mergeFolder(name: string, label: string): Promise<void> {
    const from = path.join(this.root, name);
    if (!(await isRealDirectory(from))) return;
    const to = path.join(this.root, label);
    await this.labelFolder(to);
    let moved = 0;
    for (const entry of await fs.readdir(from, { withFileTypes: true })) {
      if (!entry.isFile() || entry.name.startsWith(TEMP_PREFIX) || entry.name.startsWith('.')) continue;
      const ext = path.extname(entry.name);
      for (let target = entry.name; ; target = `${Date.now()}-${randomUUID().slice(0, 8)}${ext}`) {
        try {
          // link + unlink: never replaces an image the label already has.
          await fs.link(path.join(from, entry.name), path.join(to, target));
        } catch (err) {
          if (errCode(err) !== 'EEXIST') throw err;
          continue;
        }
        await this.shared.wrote(path.join(to, target));
        await fs.unlink(path.join(from, entry.name));
        await this.shared.removed(path.join(from, entry.name));
        moved++;
        break;
      }
    }
    await removeStaleTemps(from);
    try {
      await fs.rmdir(from);
      await this.shared.removed(from);
    } catch (err) {
      // Something that is not an image (a sub-folder, a link, a hidden file) stays where it is.
      if (errCode(err) !== 'ENOTEMPTY' && errCode(err) !== 'EEXIST') throw err;
      this.log?.warn(`images/${JSON.stringify(name)} still holds entries that are not images; they are left as they are`);
    }
    this.log?.info(
      `moved ${moved} images from folder ${JSON.stringify(name)} to label ${JSON.stringify(label)} (labels are NFC-normalised); train again to use them under it`,
    );
  }
}
