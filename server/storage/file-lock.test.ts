import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLock, LockBusyError } from './file-lock.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-lock-'));
  file = path.join(dir, '.test.lock');
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('FileLock', () => {
  it('is exclusive: a second holder is refused with the owner named, until the first releases', async () => {
    const first = await new FileLock(file).acquire();
    const owner = JSON.parse(await fs.readFile(file, 'utf8'));
    expect(owner).toMatchObject({ pid: process.pid, host: os.hostname(), token: first.owner.token });
    const refused = await new FileLock(file).acquire().catch((err) => err);
    expect(refused).toBeInstanceOf(LockBusyError);
    expect(refused.owner.token).toBe(first.owner.token);
    expect(refused.message).toContain(`pid ${process.pid}`);
    await first.release();
    await expect(fs.stat(file)).rejects.toThrow();
    const second = await new FileLock(file).acquire();
    expect(second.held).toBe(true);
    await second.release();
  });

  it('lets exactly one of many concurrent acquirers win', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => new FileLock(file).acquire()));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(LockBusyError);
    await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<FileLock['acquire']>>>).value.release();
  });

  it('keeps a held lock fresh, so it is not taken over while its owner works', async () => {
    const held = await new FileLock(file, { staleMs: 200 }).acquire();
    await new Promise((r) => setTimeout(r, 500));
    await expect(new FileLock(file, { staleMs: 200 }).acquire()).rejects.toBeInstanceOf(LockBusyError);
    expect(held.held).toBe(true);
    await held.release();
  });

  it('takes over a lock not refreshed for staleMs (a crashed owner on another host)', async () => {
    const crashed = { token: 'crashed', pid: 999_999, host: 'another-host', started: '2024-01-01T00:00:00.000Z' };
    await fs.writeFile(file, JSON.stringify(crashed));
    const lock = new FileLock(file, { staleMs: 1000 });
    await expect(lock.acquire()).rejects.toBeInstanceOf(LockBusyError);
    const old = new Date(Date.now() - 5000);
    await fs.utimes(file, old, old);
    const taken = await lock.acquire();
    expect(JSON.parse(await fs.readFile(file, 'utf8')).token).toBe(taken.owner.token);
    expect((await fs.readdir(dir)).filter((n) => n.includes('.stale-'))).toEqual([]);
    await taken.release();
  });

  it('takes over at once a lock whose owner process on this host is gone', async () => {
    const dead = { token: 'dead', pid: 2 ** 22 + 12345, host: os.hostname(), started: new Date().toISOString() };
    await fs.writeFile(file, JSON.stringify(dead));
    const taken = await new FileLock(file).acquire();
    expect(taken.owner.token).not.toBe('dead');
    await taken.release();
  });

  it('takes over within seconds, not staleMs, a lock file with no owner in it (a crash right after creating it)', async () => {
    await fs.writeFile(file, '');
    const lock = new FileLock(file, { staleMs: 60_000 });
    // Fresh, it may be a live acquirer's that has not written its owner yet.
    await expect(lock.acquire()).rejects.toBeInstanceOf(LockBusyError);
    const old = new Date(Date.now() - 6_000);
    await fs.utimes(file, old, old);
    const taken = await lock.acquire();
    expect(JSON.parse(await fs.readFile(file, 'utf8')).token).toBe(taken.owner.token);
    await taken.release();
  });

  // Replicas starting together after a crash all find its lock stale at once: one of them, never two, may take it.
  const staleLocks: [string, () => Promise<void>][] = [
    [
      'whose owner process on this host is gone',
      () =>
        fs.writeFile(file, JSON.stringify({ token: 'dead', pid: 2 ** 22 + 12345, host: os.hostname(), started: new Date().toISOString() })),
    ],
    [
      'with no owner in it',
      async () => {
        await fs.writeFile(file, '');
        const old = new Date(Date.now() - 6_000);
        await fs.utimes(file, old, old);
      },
    ],
  ];
  for (const [what, make] of staleLocks) {
    it(`lets exactly one of many concurrent acquirers take over a stale lock ${what}`, async () => {
      for (let round = 0; round < 20; round++) {
        await make();
        const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => new FileLock(file).acquire()));
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        expect(won, `round ${round}`).toHaveLength(1);
        for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(LockBusyError);
        await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<FileLock['acquire']>>>).value.release();
        expect((await fs.readdir(dir)).sort(), `round ${round}: only the lock's own files, and none left`).toEqual([]);
      }
    });
  }

  it("a takeover's guard file left by a crash holds the lock back for seconds, not for ever", async () => {
    await fs.writeFile(
      file,
      JSON.stringify({ token: 'dead', pid: 2 ** 22 + 12345, host: os.hostname(), started: new Date().toISOString() }),
    );
    await fs.writeFile(`${file}.takeover`, '');
    await expect(new FileLock(file).acquire()).rejects.toBeInstanceOf(LockBusyError);
    const old = new Date(Date.now() - 11_000);
    await fs.utimes(`${file}.takeover`, old, old);
    const taken = await new FileLock(file).acquire();
    await taken.release();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('a holder that was taken over knows it, and its release leaves the new owner alone', async () => {
    const first = await new FileLock(file, { staleMs: 100, refreshMs: 10_000 }).acquire();
    await new Promise((r) => setTimeout(r, 200));
    const second = await new FileLock(file, { staleMs: 100, refreshMs: 10_000 }).acquire();
    await first.release();
    expect(JSON.parse(await fs.readFile(file, 'utf8')).token).toBe(second.owner.token);
    await second.release();
    await expect(fs.stat(file)).rejects.toThrow();
  });

  it('run waits for the lock and serialises the work', async () => {
    const order: string[] = [];
    const work = (name: string) => async () => {
      order.push(`${name}:start`);
      await new Promise((r) => setTimeout(r, 30));
      order.push(`${name}:end`);
    };
    await Promise.all([new FileLock(file).run(work('a')), new FileLock(file).run(work('b'))]);
    expect(order[1]).toBe(`${order[0].split(':')[0]}:end`);
    await expect(fs.stat(file)).rejects.toThrow();
  });
});
