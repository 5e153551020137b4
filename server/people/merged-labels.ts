/**
 * #36 2: names that arrive after a merge. Once A is merged into B, a device with an old model (a kiosk that was
 * offline, a browser that has not synced its models, the server's own models until the next training) still names
 * A. While the merge stands (not undone) and nobody is A again (no person row: enrolling someone as A ends it), such
 * a name is the one who stays: B, or whoever B was merged into since. Stored recognition results (the faces' names
 * and the unknown faces' nearest person, as the merge renames them) and sightings (their name and nearest person) are renamed as they
 * arrive, and each rename is written into its merge's action (person_actions.detail, beside the merge's own), so an
 * undo of the merge names them back like the rest.
 *
 * The merge record is the merge's `person_actions` row: no table of its own. Renames run under the results lock
 * (result-store.ts `lockResults`), which a merge and the undo of one hold too, so a rename never lands on a merge
 * being undone.
 */
import type { ResultRecord } from '../../shared/api/index.js';
import type { Database, Queryable } from '../db/database.js';
import { lockResults, type RenamedInResults } from '../storage/result-store.js';

/** Merges followed from one label at most (A into B, B into C ...); a longer chain stops at its last step. */
const MAX_CHAIN = 8;

interface MergeStep {
  /** The merge's action id. */
  action: string;
  into: string;
}

/** The latest merge not undone of each label nobody has again; label -> step. */
async function standingMerges(q: Queryable, labels: readonly string[]): Promise<Map<string, MergeStep>> {
  if (labels.length === 0) return new Map();
  const rows = await q.query<{ id: string; label: string; other_label: string }>(
    `SELECT DISTINCT ON (a.label) a.id, a.label, a.other_label FROM person_actions a
     WHERE a.kind = 'merge' AND a.undone_at IS NULL AND a.label = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM people p WHERE p.label = a.label)
     ORDER BY a.label, a.created_at DESC`,
    [labels],
  );
  return new Map(rows.map((r) => [r.label, { action: r.id, into: r.other_label }]));
}

/** Each label merged away, with the merges it went through to the one who stays (labels not merged away: absent). */
export async function mergePaths(q: Queryable, labels: Iterable<string>): Promise<Map<string, MergeStep[]>> {
  const paths = new Map<string, MergeStep[]>();
  let ends = new Map<string, string>([...new Set(labels)].map((l) => [l, l]));
  for (let i = 0; i < MAX_CHAIN && ends.size > 0; i++) {
    const steps = await standingMerges(q, [...new Set(ends.values())]);
    const next = new Map<string, string>();
    for (const [label, end] of ends) {
      const step = steps.get(end);
      if (!step) continue;
      const path = paths.get(label) ?? [];
      // A merged back and forth (A into B, B re-enrolled as A's merge target ...): never round in a circle.
      if (step.into === label || path.some((s) => s.into === step.into)) continue;
      paths.set(label, [...path, step]);
      next.set(label, step.into);
    }
    ends = next;
  }
  return paths;
}

type Face = NonNullable<ResultRecord['faces']>[number];

/** The people the faces name or are nearest to ("unknown" is nobody: reserved, never a label). */
const namesOf = (records: readonly ResultRecord[]) =>
  records
    .flatMap((r) => (r.faces ?? []).flatMap((f) => [f.label.toLowerCase(), ...(f.candidate ? [f.candidate.label.toLowerCase()] : [])]))
    .filter((l) => l !== 'unknown');

/**
 * Recognition results as they are stored: a face named, or nearest to, someone merged away names the one who stays;
 * each merge's action learns where. Call it in the transaction that stores them, holding the results lock.
 */
export async function nameMergedInResults<R extends ResultRecord>(tx: Queryable, records: R[]): Promise<R[]> {
  const faced = records.filter((r) => r.kind === 'recognition' && r.faces?.length);
  if (faced.length === 0) return records;
  const paths = await mergePaths(tx, namesOf(faced));
  if (paths.size === 0) return records;
  const byAction = new Map<string, RenamedInResults>();
  const note = (steps: MergeStep[], id: string, what: 'label' | 'candidate', index: number) => {
    for (const s of steps) {
      const renamed = byAction.get(s.action) ?? {};
      renamed[id] ??= { label: [], candidate: [] };
      if (!renamed[id][what].includes(index)) renamed[id][what].push(index);
      byAction.set(s.action, renamed);
    }
  };
  const named = records.map((record) => {
    if (record.kind !== 'recognition' || !record.faces?.length) return record;
    let changed = false;
    const faces = record.faces.map((face, i): Face => {
      let next = face;
      const asLabel = paths.get(face.label.toLowerCase());
      if (asLabel) {
        next = { ...next, label: asLabel[asLabel.length - 1].into };
        note(asLabel, record.id, 'label', i);
      }
      const asCandidate = face.candidate ? paths.get(face.candidate.label.toLowerCase()) : undefined;
      if (face.candidate && asCandidate) {
        next = { ...next, candidate: { ...face.candidate, label: asCandidate[asCandidate.length - 1].into } };
        note(asCandidate, record.id, 'candidate', i);
      }
      changed ||= next !== face;
      return next;
    });
    return changed ? { ...record, faces } : record;
  });
  for (const [action, renamed] of byAction) {
    const [row] = await tx.query<{ results: RenamedInResults | null }>(
      `SELECT detail->'results' AS results FROM person_actions WHERE id = $1`,
      [action],
    );
    const all: RenamedInResults = { ...(row?.results ?? {}) };
    for (const [id, at] of Object.entries(renamed)) {
      const before = all[id] ?? { label: [], candidate: [] };
      all[id] = {
        label: [...new Set([...before.label, ...at.label])],
        candidate: [...new Set([...before.candidate, ...at.candidate])],
      };
    }
    await tx.query(`UPDATE person_actions SET detail = jsonb_set(detail, '{results}', $2::jsonb) WHERE id = $1`, [
      action,
      JSON.stringify(all),
    ]);
  }
  return named;
}

/** A sighting's names: the person it was named (null: unknown) and its nearest person when unknown. */
export interface SightingNames {
  label: string | null;
  candidate: string | null;
}

/**
 * A sighting's names as it is stored: someone merged away, as its name or as its nearest person, is the one who
 * stays, and the merges' actions list the sighting with those they renamed. `store` inserts the row (in the same
 * transaction) and says whether it did. Without a merge standing for either name, no transaction and no lock: the
 * common case costs one indexed query.
 */
export async function nameMergedInSighting<T>(
  db: Database,
  id: string,
  names: SightingNames,
  store: (q: Queryable, names: SightingNames) => Promise<T | null>,
): Promise<T | null> {
  const asked = [names.label, names.candidate].filter((n): n is string => n !== null);
  if (asked.length === 0 || (await mergePaths(db, asked)).size === 0) return store(db, names);
  return db.transaction(async (tx) => {
    await lockResults(tx);
    // Again under the lock: the merge may have been undone meanwhile.
    const paths = await mergePaths(tx, asked);
    const asLabel = names.label === null ? undefined : paths.get(names.label);
    const asCandidate = names.candidate === null ? undefined : paths.get(names.candidate);
    const end = (steps: MergeStep[] | undefined, name: string | null) => (steps ? steps[steps.length - 1].into : name);
    const stored = await store(tx, { label: end(asLabel, names.label), candidate: end(asCandidate, names.candidate) });
    if (stored === null) return null;
    if (asLabel) await noteInMerges(tx, asLabel, 'recognised', [id]);
    if (asCandidate) await noteInMerges(tx, asCandidate, 'candidates', [id]);
    return stored;
  });
}

/**
 * The name a correction ("not this person") asked under a name merged away is kept under: the one who stays, as of
 * now (under the results lock); its merges note its rows, so their undo names it back. Call it in the transaction
 * that stores the correction.
 */
export async function nameMergedInCorrection(tx: Queryable, asked: string, rowIds: readonly string[]): Promise<string> {
  await lockResults(tx);
  const steps = (await mergePaths(tx, [asked])).get(asked);
  if (!steps) return asked;
  await noteInMerges(tx, steps, 'corrections', rowIds);
  return steps[steps.length - 1].into;
}

/**
 * Adds ids to a list in each merge's detail (`recognised`: sightings named, `candidates`: sightings nearest to,
 * `corrections`: correction rows).
 */
async function noteInMerges(
  tx: Queryable,
  steps: readonly MergeStep[],
  list: 'recognised' | 'candidates' | 'corrections',
  ids: readonly string[],
) {
  for (const s of steps) {
    await tx.query(
      `UPDATE person_actions SET detail = jsonb_set(detail, $2::text[], coalesce(detail->$3, '[]'::jsonb) || $4::jsonb) WHERE id = $1`,
      [s.action, [list], list, JSON.stringify(ids)],
    );
  }
}

/**
 * The labels merged into `label` (also by way of others) and still standing: the same person under their old names.
 * Deleting `label` deletes those too, so a late result naming one is not stored after the deletion.
 */
export async function labelsMergedInto(q: Queryable, label: string): Promise<string[]> {
  const found = new Set<string>();
  let frontier = [label];
  for (let i = 0; i < MAX_CHAIN && frontier.length > 0; i++) {
    const rows = await q.query<{ label: string }>(
      `SELECT DISTINCT a.label FROM person_actions a
       WHERE a.kind = 'merge' AND a.undone_at IS NULL AND a.other_label = ANY($1::text[])
         AND NOT EXISTS (SELECT 1 FROM people p WHERE p.label = a.label)`,
      [frontier],
    );
    frontier = rows.map((r) => r.label).filter((l) => l !== label && !found.has(l));
    for (const l of frontier) found.add(l);
  }
  // Only those whose latest merge still leads here (a label merged here, then elsewhere, is the other person's now).
  const paths = await mergePaths(q, found);
  return [...found].filter((l) => paths.get(l)?.some((s) => s.into === label));
}
