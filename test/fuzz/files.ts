/**
 * File-system invariants of the fuzz run: the stored files (content hashes, cached by size, mtime and inode so a
 * snapshot per request stays cheap), a watch on everything beside DATA_DIR (its parent, a sibling folder with a
 * canary file, the process's TMPDIR), and the shape of DATA_DIR itself (no links, label folders named as
 * normalised labels).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { normalizeLabel } from '../../shared/api/labels.js';

/** relative path -> sha256 of the content ('dir' for a folder, 'link -> target' for a symbolic link). */
export type Snapshot = Map<string, string>;

const hashes = new Map<string, { key: string; hash: string }>();

function hashFile(file: string, st: fs.Stats): string {
  const key = `${st.size}:${st.mtimeMs}:${st.ino}`;
  const cached = hashes.get(file);
  if (cached?.key === key) return cached.hash;
  const hash = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  hashes.set(file, { key, hash });
  return hash;
}

/**
 * The embedded database's files (DATA_DIR/db and its lock): PostgreSQL writes its log and pages whenever it likes
 * (a checkpoint, the audit row of a refused request), so its rows are checked through the API, not as files.
 */
export function isDatabaseFile(rel: string): boolean {
  return rel === 'db' || rel.startsWith(`db${path.sep}`) || rel === '.lookout-db.lock';
}

/** Every file and folder under `dir` (relative paths), except those `skip` names (the database's by default). */
export function snapshot(dir: string, skip: (rel: string) => boolean = isDatabaseFile): Snapshot {
  const out: Snapshot = new Map();
  const walk = (abs: string) => {
    let names: string[];
    try {
      names = fs.readdirSync(abs);
    } catch {
      return; // removed while we walked (a delete in flight): the next snapshot sees the result
    }
    for (const name of names) {
      const file = path.join(abs, name);
      const rel = path.relative(dir, file);
      if (skip(rel)) continue;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(file);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) out.set(rel, `link -> ${fs.readlinkSync(file)}`);
      else if (st.isDirectory()) {
        out.set(rel, 'dir');
        walk(file);
      } else {
        try {
          out.set(rel, hashFile(file, st));
        } catch {
          // removed between lstat and read
        }
      }
    }
  };
  walk(dir);
  return out;
}

/** What differs between two snapshots, in words (empty: the same). */
export function diff(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const [rel, hash] of before) {
    if (!after.has(rel)) out.push(`removed ${rel}`);
    else if (after.get(rel) !== hash) out.push(`changed ${rel}`);
  }
  for (const rel of after.keys()) if (!before.has(rel)) out.push(`created ${rel}`);
  return out;
}

/**
 * Records every file-system event beside DATA_DIR: in the root holding it (new entries there), in the sibling
 * folder and in TMPDIR (recursively). Events inside DATA_DIR are the service's own business.
 */
export class OutsideWatch {
  readonly events: string[] = [];
  private readonly watchers: fs.FSWatcher[] = [];

  constructor(root: string, dataDirName: string, recursiveDirs: string[]) {
    this.watchers.push(
      fs.watch(root, (type, name) => {
        if (name !== dataDirName) this.events.push(`${type} ${path.join(root, String(name))}`);
      }),
    );
    for (const dir of recursiveDirs) {
      this.watchers.push(fs.watch(dir, { recursive: true }, (type, name) => this.events.push(`${type} ${path.join(dir, String(name))}`)));
    }
  }

  take(): string[] {
    return this.events.splice(0);
  }

  close(): void {
    for (const w of this.watchers) w.close();
  }
}

/** Top-level entries of DATA_DIR the service may make. */
const DATA_LAYOUT = new Set([
  'images',
  'features',
  'models',
  'results',
  'ppe',
  'ppe-dataset',
  'settings',
  'sightings',
  'corrections.version',
  // #35 12: the marker that the modes of older files were made private once (server/storage/private-modes.ts)
  '.private-modes',
]);

/**
 * What is wrong with DATA_DIR's shape: an unexpected top-level entry, a symbolic link, or a label folder whose
 * name is not a normalised label (a file that /api/labels, training and DELETE could never reach).
 */
export function layoutProblems(dataDir: string, snap: Snapshot): string[] {
  const problems: string[] = [];
  for (const [rel, hash] of snap) {
    const parts = rel.split(path.sep);
    if (!DATA_LAYOUT.has(parts[0])) problems.push(`unexpected ${rel} in DATA_DIR`);
    if (hash.startsWith('link -> ')) problems.push(`symbolic link ${rel} (${hash})`);
    // Temporary files and folders being deleted start with a dot; none may be left once no request runs (and, for
    // the sightings' crops, once the sighting recorder is idle: the caller waits for it).
    if ((parts[0] === 'images' || parts[0] === 'sightings') && parts.slice(1).some((p) => p.startsWith('.')))
      problems.push(`left-over temporary ${rel}`);
    if (parts[0] === 'images' && parts.length === 2 && hash === 'dir' && !parts[1].startsWith('.')) {
      const check = normalizeLabel(parts[1]);
      if (!check.ok || check.label !== parts[1]) {
        problems.push(
          `label folder ${JSON.stringify(parts[1])} is not a normalised label (${check.ok ? `normalises to ${JSON.stringify(check.label)}` : check.reason})`,
        );
      }
    }
  }
  return problems.map((p) => `${p} [${dataDir}]`);
}
