/**
 * The results history: recognition and object results captured on devices (a kiosk that was offline sends
 * them later), kept in the database (table `results`, server/db/migrations), in arrival order.
 *
 * - Bounded: at most `max` records are kept; the oldest received are dropped first.
 * - Deduplicated by the client-made `id`: a re-sent record is not stored twice. Ids are remembered for the
 *   kept records and for up to `max` more dropped ones (`results_forgotten`, the oldest forgotten first), so a
 *   record is recognised as a duplicate as long as it is among the last 2 x `max` records received (and always
 *   while it is kept). The results of a deleted person are forgotten the same way (`forgetPerson`), and a record
 *   naming a person deleted after it was captured (a device that had not heard yet) is not stored either.
 * - Shared: API replicas on one PostgreSQL database (`DATABASE_URL`) see each other's records at once; every
 *   add runs in one transaction holding an advisory lock, so concurrent adds (of any replica) never lose a
 *   record nor store an id twice, and the cap holds.
 * - The history of earlier versions (`DATA_DIR/results/results.jsonl`, the append-only log, and the older
 *   `results.json`) is moved into the database at the first start and the file renamed `<name>.migrated`.
 *   A file that cannot be read (corrupt JSON, wrong shape, a symbolic link) is set aside as
 *   `<name>.corrupt-<time>` with a warning: never a crash. A bad line of the log is skipped with a warning.
 *   Without such a file, the start does not open the database (its first query does: server/db/database.ts).
 *
 * No HTTP here: the routes (server/routes/results.ts) and the deletion of a person use it alike.
 */
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resultRecordInput, type ResultRecord, type ResultRecordInput } from '../../shared/api/index.js';
import type { Database, Queryable } from '../db/database.js';
import type { Logger } from '../logger.js';
import { nameMergedInResults } from '../people/merged-labels.js';

/** The append-only log of the previous version, imported at the first start. */
export const RESULTS_FILE = 'results.jsonl';
/** The single JSON document of the version before it, imported too. */
export const LEGACY_RESULTS_FILE = 'results.json';
const LOG_FORMAT = 'lookout-results-log';
/** Any constant shared by every Lookout process: the advisory lock every change of the results holds. */
const RESULTS_LOCK_KEY = 7_141_907;

const storedRecord = resultRecordInput.and(z.object({ received_at: z.string() }));
const logHeader = z.object({
  format: z.literal(LOG_FORMAT),
  version: z.literal(2),
  forgotten_ids: z.array(z.string()).default([]),
});
const legacyFile = z.object({
  format: z.literal('lookout-results'),
  version: z.literal(1),
  records: z.array(storedRecord),
  forgotten_ids: z.array(z.string()).default([]),
});

export interface AddOutcome {
  accepted: number;
  duplicates: number;
  total: number;
}

export interface ResultQuery {
  limit: number;
  kind?: ResultRecord['kind'];
  /** A face label (recognition) or an object class name (objects). */
  label?: string;
}

export interface ResultPage {
  results: ResultRecord[];
  /** Every record the filters match. */
  matched: number;
  /** Every record kept. */
  total: number;
}

export interface ResultStoreOptions {
  db: Database;
  /** `DATA_DIR/results`: where the files of earlier versions are looked for. */
  dir: string;
  max: number;
  log: Logger;
  /** The server's clock, for received_at (tests pass their own). */
  now?: () => Date;
}

/** One record as the insert statement takes it: the record, what queries filter on, and the faces' labels. */
interface Row {
  record: ResultRecord;
  labels: string[];
  faces: string[];
}

function rowOf(record: ResultRecord): Row {
  const faces = [...new Set((record.faces ?? []).map((f) => f.label.toLowerCase()))];
  const objects = [...new Set((record.objects ?? []).map((o) => o.class_name))];
  return { record, labels: [...new Set([...faces, ...objects])], faces };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

export class ResultStore {
  /** Records kept, as of the last add, refresh or query. */
  private count = 0;
  private readonly now: () => Date;

  constructor(private readonly opts: ResultStoreOptions) {
    if (!Number.isInteger(opts.max) || opts.max < 1) throw new RangeError('ResultStore: max must be a positive integer');
    this.now = opts.now ?? (() => new Date());
  }

  get max(): number {
    return this.opts.max;
  }

  /** Records kept, as of the last add, refresh or query (`refresh()` first for the current count). */
  get size(): number {
    return this.count;
  }

  /**
   * Imports the files of earlier versions, when there are any (only then is the database opened now), and
   * applies a lowered RESULTS_MAX.
   */
  async init(): Promise<void> {
    const found = [];
    for (const name of [LEGACY_RESULTS_FILE, RESULTS_FILE]) {
      const file = path.join(this.opts.dir, name);
      if (
        await fs.lstat(file).then(
          () => true,
          () => false,
        )
      )
        found.push(file);
    }
    for (const file of found) await this.importFile(file);
  }

  /** Reads the current count of records (the records themselves are read by `query`). */
  async refresh(): Promise<void> {
    const [row] = await this.opts.db.query<{ n: number }>('SELECT count(*)::int AS n FROM results');
    this.count = row.n;
  }

  /** Whether a record with this id is kept or still remembered as dropped. */
  async has(id: string): Promise<boolean> {
    const rows = await this.opts.db.query(
      'SELECT 1 FROM results WHERE id = $1 UNION ALL SELECT 1 FROM results_forgotten WHERE id = $1 LIMIT 1',
      [id],
    );
    return rows.length > 0;
  }

  /**
   * Stores the records not seen before (a repeated id, also within the same batch, is a duplicate), in the
   * order the devices captured them, and resolves once they are committed.
   */
  async add(inputs: readonly ResultRecordInput[]): Promise<AddOutcome> {
    const receivedAt = this.now().toISOString();
    const fresh: ResultRecord[] = [];
    const ids = new Set<string>();
    for (const input of inputs) {
      if (ids.has(input.id)) continue;
      ids.add(input.id);
      fresh.push({ ...input, received_at: receivedAt });
    }
    fresh.sort((a, b) => Date.parse(a.captured_at) - Date.parse(b.captured_at));
    const { accepted, total } = await this.opts.db.transaction(async (tx) => {
      await lockResults(tx);
      // #36 2: a device with an old model still naming someone merged away names the one who stays.
      const stored = await insert(tx, (await nameMergedInResults(tx, fresh)).map(rowOf));
      return { accepted: stored, total: await this.trim(tx) };
    });
    this.count = total;
    return { accepted, duplicates: inputs.length - accepted, total };
  }

  /** Newest received first, filtered; `matched` counts every record the filters match. */
  async query(q: ResultQuery): Promise<ResultPage> {
    const kind = q.kind ?? null;
    const label = q.label === undefined ? null : q.label.toLowerCase();
    const where = '($1::text IS NULL OR kind = $1) AND ($2::text IS NULL OR $2 = ANY(labels))';
    const [counts, rows] = await Promise.all([
      this.opts.db.query<{ matched: number; total: number }>(
        `SELECT count(*) FILTER (WHERE ${where})::int AS matched, count(*)::int AS total FROM results`,
        [kind, label],
      ),
      this.opts.db.query<{ record: ResultRecord }>(`SELECT record FROM results WHERE ${where} ORDER BY seq DESC LIMIT $3`, [
        kind,
        label,
        q.limit,
      ]),
    ]);
    this.count = counts[0].total;
    return { results: rows.map((r) => r.record), matched: counts[0].matched, total: counts[0].total };
  }

  /**
   * Removes every recognition result naming `label` (a person deleted); their ids are remembered as dropped
   * ones, so a device re-sending one does not bring it back. Returns how many were removed.
   */
  async forgetPerson(label: string): Promise<number> {
    const wanted = label.toLowerCase();
    const removed = await this.opts.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [RESULTS_LOCK_KEY]);
      const gone = await tx.query<{ n: number }>(
        `WITH gone AS (
           DELETE FROM results WHERE kind = 'recognition' AND $1 = ANY(labels) RETURNING id, seq
         ), remembered AS (
           INSERT INTO results_forgotten (id, forgotten_at) SELECT id, now() FROM gone ORDER BY seq ON CONFLICT (id) DO NOTHING
         )
         SELECT count(*)::int AS n FROM gone`,
        [wanted],
      );
      this.count = await this.trim(tx);
      return gone[0].n;
    });
    return removed;
  }

  /**
   * Drops the oldest records beyond `max` (their ids remembered), and forgets the oldest remembered ids beyond
   * `max`; returns the records kept. Called in a transaction holding the results lock.
   */
  private async trim(tx: Queryable): Promise<number> {
    await tx.query(
      `WITH over AS (
         SELECT seq FROM results ORDER BY seq LIMIT greatest((SELECT count(*) FROM results) - $1, 0)
       ), dropped AS (
         DELETE FROM results r USING over WHERE r.seq = over.seq RETURNING r.id, r.seq
       )
       INSERT INTO results_forgotten (id, forgotten_at) SELECT id, now() FROM dropped ORDER BY seq ON CONFLICT (id) DO NOTHING`,
      [this.opts.max],
    );
    await tx.query('DELETE FROM results_forgotten WHERE seq IN (SELECT seq FROM results_forgotten ORDER BY seq DESC OFFSET $1)', [
      this.opts.max,
    ]);
    const [row] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM results');
    return row.n;
  }

  /**
   * Moves a file of an earlier version into the database (records in their order, remembered ids first), then
   * renames it `<name>.migrated`. Replicas starting together may both import it: ids make the second a no-op.
   */
  private async importFile(file: string): Promise<void> {
    const name = path.basename(file);
    let parsed: { records: ResultRecord[]; forgotten: string[]; bad: number };
    try {
      const text = await readNoFollow(file);
      if (text === null) return; // another replica imported it meanwhile
      parsed = name === RESULTS_FILE ? parseLog(text) : parseLegacy(text);
    } catch (err) {
      return this.setAside(file, messageOf(err));
    }
    if (parsed.bad > 0) this.opts.log.warn(`${name}: skipped ${parsed.bad} lines that are not results records`);
    const accepted = await this.opts.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [RESULTS_LOCK_KEY]);
      if (parsed.forgotten.length > 0) {
        await tx.query(
          `INSERT INTO results_forgotten (id, forgotten_at)
           SELECT id, now() FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY AS f(id, ord)
           WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.id = f.id)
           ORDER BY ord ON CONFLICT (id) DO NOTHING`,
          [JSON.stringify(parsed.forgotten)],
        );
      }
      let stored = 0;
      for (let i = 0; i < parsed.records.length; i += 500) stored += await insert(tx, parsed.records.slice(i, i + 500).map(rowOf));
      this.count = await this.trim(tx);
      return stored;
    });
    await fs.rename(file, `${file}.migrated`).catch((err: unknown) => {
      if (code(err) !== 'ENOENT') throw err;
    });
    this.opts.log.info(`results history: moved ${accepted} records from ${name} into the database (the file is now ${name}.migrated)`);
  }

  private async setAside(file: string, why: string): Promise<void> {
    const aside = `${file}.corrupt-${this.now().toISOString().replace(/[:.]/g, '-')}`;
    await fs.rename(file, aside).catch((err: unknown) => {
      if (code(err) !== 'ENOENT') throw err;
    });
    this.opts.log.warn(
      `${path.basename(file)} could not be read (${why}); set aside as ${path.basename(aside)}, its results are not imported`,
    );
  }
}

/**
 * Inserts rows in their order, skipping ids kept or remembered as dropped, and records naming a person deleted
 * after they were captured; returns how many were stored.
 */
async function insert(tx: Queryable, rows: Row[]): Promise<number> {
  if (rows.length === 0) return 0;
  const stored = await tx.query(
    `WITH batch AS (
       SELECT e->'record' AS record, e->'record'->>'id' AS id, e->'labels' AS labels, e->'faces' AS faces, ord
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS b(e, ord)
     )
     INSERT INTO results (id, kind, received_at, captured_at, labels, record)
     SELECT id, record->>'kind', (record->>'received_at')::timestamptz, (record->>'captured_at')::timestamptz,
            ARRAY(SELECT jsonb_array_elements_text(labels)), record
     FROM batch
     WHERE NOT EXISTS (SELECT 1 FROM results_forgotten f WHERE f.id = batch.id)
       AND NOT EXISTS (
         SELECT 1 FROM deleted_people d
         WHERE d.label IN (SELECT jsonb_array_elements_text(batch.faces)) AND d.deleted_at >= (record->>'captured_at')::timestamptz
       )
     ORDER BY ord
     ON CONFLICT (id) DO NOTHING
     RETURNING id`,
    [JSON.stringify(rows)],
  );
  return stored.length;
}

/** Holds the lock every change of the results holds, until the transaction ends (merges and their undo take it too). */
export async function lockResults(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [RESULTS_LOCK_KEY]);
}

/** Where a merge renamed a person in the stored results: per record id, the faces (indexes) named them, and those whose nearest person (`candidate`) they were. */
export type RenamedInResults = Record<string, { label: number[]; candidate: number[] }>;

type StoredFace = NonNullable<ResultRecord['faces']>[number];

/** Renames `from` to `to` on the faces of one record (where `at` says, or wherever named `from`); where it did. */
function renameFaces(record: ResultRecord, from: string, to: string, at?: { label: number[]; candidate: number[] }) {
  const done = { label: [] as number[], candidate: [] as number[] };
  const faces: StoredFace[] = (record.faces ?? []).map((face, i) => {
    let next = face;
    if ((at ? at.label.includes(i) : true) && face.label.toLowerCase() === from) {
      next = { ...next, label: to };
      done.label.push(i);
    }
    if ((at ? at.candidate.includes(i) : true) && face.candidate && face.candidate.label.toLowerCase() === from) {
      next = { ...next, candidate: { ...face.candidate, label: to } };
      done.candidate.push(i);
    }
    return next;
  });
  return { record: { ...record, faces }, done };
}

/**
 * #36 2: a merge of `from` into `to` renames them in the stored recognition results too (the faces named them, and
 * the unknown faces whose nearest person they were), so the results history names the one who stays. In the
 * merge's transaction, under the results lock. Answers where it renamed, for `restorePersonInResults` (its undo).
 */
export async function renamePersonInResults(tx: Queryable, from: string, to: string): Promise<RenamedInResults> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [RESULTS_LOCK_KEY]);
  const rows = await tx.query<{ id: string; record: ResultRecord }>(
    `SELECT id, record FROM results WHERE kind = 'recognition' AND ($1 = ANY(labels)
       OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(record->'faces', '[]'::jsonb)) f WHERE lower(f->'candidate'->>'label') = $1))`,
    [from],
  );
  const renamed: RenamedInResults = {};
  for (const row of rows) {
    const { record, done } = renameFaces(row.record, from, to);
    if (done.label.length + done.candidate.length === 0) continue;
    await storeRecord(tx, row.id, record);
    renamed[row.id] = done;
  }
  return renamed;
}

/** Undoes `renamePersonInResults`: the faces it renamed `to` are named `from` again (records dropped since: skipped). */
export async function restorePersonInResults(tx: Queryable, renamed: RenamedInResults, from: string, to: string): Promise<number> {
  const ids = Object.keys(renamed);
  if (ids.length === 0) return 0;
  await tx.query('SELECT pg_advisory_xact_lock($1)', [RESULTS_LOCK_KEY]);
  const rows = await tx.query<{ id: string; record: ResultRecord }>('SELECT id, record FROM results WHERE id = ANY($1::text[])', [ids]);
  let restored = 0;
  for (const row of rows) {
    const { record, done } = renameFaces(row.record, to, from, renamed[row.id]);
    if (done.label.length + done.candidate.length === 0) continue;
    await storeRecord(tx, row.id, record);
    restored++;
  }
  return restored;
}

/** A record written back with the labels its queries filter on. */
async function storeRecord(tx: Queryable, id: string, record: ResultRecord): Promise<void> {
  await tx.query('UPDATE results SET record = $2::jsonb, labels = $3::text[] WHERE id = $1', [
    id,
    JSON.stringify(record),
    rowOf(record).labels,
  ]);
}

/** A file's text without following a symbolic link (refused: ELOOP); null when it is gone. */
async function readNoFollow(file: string): Promise<string | null> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if (code(err) === 'ENOENT') return null;
    if (code(err) === 'ELOOP') throw new Error('it is a symbolic link');
    throw err;
  }
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** The append-only log: a header line, then one record per line; a torn last line and bad lines are skipped. */
function parseLog(text: string): { records: ResultRecord[]; forgotten: string[]; bad: number } {
  const firstEnd = text.indexOf('\n');
  let head: z.output<typeof logHeader>;
  try {
    const result = logHeader.safeParse(JSON.parse(firstEnd < 0 ? text : text.slice(0, firstEnd)));
    if (!result.success) throw new Error();
    head = result.data;
  } catch {
    throw new Error('its first line is not the results log header');
  }
  const records: ResultRecord[] = [];
  let bad = 0;
  // Only complete lines: one without its newline was torn by a crash.
  const body = text.slice(firstEnd + 1, text.lastIndexOf('\n') + 1);
  for (const line of body.split('\n')) {
    if (line === '') continue;
    try {
      const result = storedRecord.safeParse(JSON.parse(line));
      if (!result.success) throw new Error();
      records.push(result.data as ResultRecord);
    } catch {
      bad++;
    }
  }
  return { records, forgotten: head.forgotten_ids, bad };
}

function parseLegacy(text: string): { records: ResultRecord[]; forgotten: string[]; bad: number } {
  const result = legacyFile.safeParse(JSON.parse(text));
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`${issue.path.join('.') || 'the file'}: ${issue.message}`);
  }
  return { records: result.data.records as ResultRecord[], forgotten: result.data.forgotten_ids, bad: 0 };
}
