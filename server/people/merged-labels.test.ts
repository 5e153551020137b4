/**
 * #36 2: which merge a late name follows. Only a merge not undone, of a label nobody has again; the latest one; a
 * chain to its end, never round a circle; a late result's faces renamed with each merge on the way noting where; and
 * the old names a person's deletion takes along.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import type { ResultRecord } from '../../shared/api/index.js';
import { labelsMergedInto, mergePaths, nameMergedInResults } from './merged-labels.js';

describe.each(DATABASES)('merged labels on %s', (_name, open) => {
  let t: TestDatabase;
  let seq = 0;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(async () => {
    await t?.dispose();
  });

  async function merged(label: string, into: string, opts: { undone?: boolean } = {}): Promise<string> {
    const id = `p-${seq++}`;
    await t.db.query(
      `INSERT INTO person_actions (id, kind, created_at, actor, label, other_label, detail, undone_at)
       VALUES ($1, 'merge', $2, 'root', $3, $4, '{"files":{},"recognised":[],"assigned":{},"corrections":[]}', $5)`,
      [id, new Date(Date.now() + seq * 1000), label, into, opts.undone ? new Date() : null],
    );
    return id;
  }
  const ends = async (...labels: string[]) =>
    Object.fromEntries([...(await mergePaths(t.db, labels))].map(([l, steps]) => [l, steps.map((s) => s.into)]));

  it('follows a standing merge to its end, not an undone one, nor a label enrolled again', async () => {
    await merged('a', 'b');
    await merged('b', 'c');
    await merged('x', 'y', { undone: true });
    await merged('r', 's');
    await t.db.query(`INSERT INTO people (label, display_name) VALUES ('r', 'R again')`);
    expect(await ends('a', 'b', 'x', 'r', 'c')).toEqual({ a: ['b', 'c'], b: ['c'] });
  });

  it("finds a person's old names: the labels merged into them, also by way of others, that still lead to them", async () => {
    await merged('a', 'b');
    await merged('b', 'c');
    await merged('x', 'c', { undone: true });
    await merged('m', 'c');
    await merged('m', 'z');
    await merged('r', 'c');
    await t.db.query(`INSERT INTO people (label, display_name) VALUES ('r', 'R again')`);
    expect((await labelsMergedInto(t.db, 'c')).sort()).toEqual(['a', 'b']);
    expect(await labelsMergedInto(t.db, 'z')).toEqual(['m']);
    expect(await labelsMergedInto(t.db, 'a')).toEqual([]);
  });

  it('takes the latest merge of a label, and never goes round a circle', async () => {
    await merged('a', 'b', { undone: true });
    await merged('a', 'd');
    await merged('p', 'q');
    await merged('q', 'p');
    expect((await ends('a')).a).toEqual(['d']);
    expect((await ends('p')).p).toEqual(['q']);
  });

  it("renames a late result's faces and candidates, whatever their case, and notes them in each merge on the way", async () => {
    const ab = await merged('a', 'b');
    const bc = await merged('b', 'c');
    const face = (label: string, extra: object = {}) => ({ x: 1, y: 1, w: 5, h: 5, label, confidence: 70, ...extra });
    const records = [
      {
        id: 'r-1',
        kind: 'recognition',
        captured_at: new Date().toISOString(),
        received_at: new Date().toISOString(),
        faces: [face('A'), face('someone'), face('unknown', { candidate: { label: 'b', confidence: 30, distance: 0.8 } })],
      },
      { id: 'r-2', kind: 'recognition', captured_at: new Date().toISOString(), received_at: new Date().toISOString(), faces: [face('z')] },
    ] as unknown as ResultRecord[];
    const [one, two] = await t.db.transaction((tx) => nameMergedInResults(tx, records));
    expect(one.faces?.map((f) => [f.label, f.candidate?.label])).toEqual([
      ['c', undefined],
      ['someone', undefined],
      ['unknown', 'c'],
    ]);
    expect(two).toBe(records[1]);
    const noted = async (id: string) =>
      (await t.db.query<{ results: unknown }>(`SELECT detail->'results' AS results FROM person_actions WHERE id = $1`, [id]))[0].results;
    expect(await noted(ab)).toEqual({ 'r-1': { label: [0], candidate: [] } });
    expect(await noted(bc)).toEqual({ 'r-1': { label: [0], candidate: [2] } });
  });
});
