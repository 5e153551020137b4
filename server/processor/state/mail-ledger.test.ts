import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MailLedger } from './mail-ledger.js';

let root: string;
let dir: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-ledger-'));
  dir = path.join(root, 'ledger');
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function opened(): Promise<MailLedger> {
  const ledger = new MailLedger(dir);
  await ledger.open();
  return ledger;
}

describe('MailLedger', () => {
  it('records an event once: true the first time, false after, and has() tells', async () => {
    const ledger = await opened();
    expect(await ledger.has('evt-1')).toBe(false);
    expect(await ledger.record('evt-1', 'mailed')).toBe(true);
    expect(await ledger.has('evt-1')).toBe(true);
    expect(await ledger.record('evt-1', 'mailed')).toBe(false);
    expect(await ledger.record('evt-1', 'dead_lettered')).toBe(false);
    expect(await ledger.has('evt-2')).toBe(false);
    const entry = JSON.parse(await fs.readFile(path.join(dir, 'evt-1'), 'utf8'));
    expect(entry).toMatchObject({ event_id: 'evt-1', outcome: 'mailed' });
  });

  it('lets only one of concurrent records of one event win', async () => {
    const ledger = await opened();
    const other = await opened(); // another processor sharing the state directory
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => ledger.record('evt-race', 'mailed')),
      ...Array.from({ length: 5 }, () => other.record('evt-race', 'mailed')),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('survives a restart', async () => {
    await (await opened()).record('evt-1', 'dead_lettered');
    expect(await (await opened()).has('evt-1')).toBe(true);
  });

  it('keeps odd ids inside its directory, each distinct', async () => {
    const ledger = await opened();
    const odd = ['../x', 'a/b', '..', '.', '.hidden', '/etc/passwd', 'a\\b', 'x'.repeat(300), 'ü', ''];
    for (const id of odd) expect(await ledger.record(id, 'mailed'), JSON.stringify(id)).toBe(true);
    for (const id of odd) expect(await ledger.has(id), JSON.stringify(id)).toBe(true);
    for (const id of odd) expect(await ledger.record(id, 'mailed'), JSON.stringify(id)).toBe(false);
    // Nothing was written outside, no sub-directory was made.
    expect((await fs.readdir(root)).sort()).toEqual(['ledger']);
    const names = await fs.readdir(dir);
    expect(names).toHaveLength(odd.length);
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/);
      expect((await fs.stat(path.join(dir, name))).isFile()).toBe(true);
    }
    // An id that was never recorded is still unknown.
    expect(await ledger.has('x')).toBe(false);
  });

  it('prunes entries older than the kept days when opened, by modification time', async () => {
    const ledger = await opened();
    await ledger.record('old', 'mailed');
    await ledger.record('recent', 'mailed');
    const days = (n: number) => new Date(Date.now() - n * 86_400_000);
    await fs.utimes(path.join(dir, 'old'), days(31), days(31));
    await fs.utimes(path.join(dir, 'recent'), days(29), days(29));

    await new MailLedger(dir).open();
    expect(await ledger.has('old')).toBe(false);
    expect(await ledger.has('recent')).toBe(true);

    await new MailLedger(dir).open(7);
    expect(await ledger.has('recent')).toBe(false);
  });
});
