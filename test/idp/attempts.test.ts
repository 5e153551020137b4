import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AttemptFileError, AttemptLimiter } from '../../server/idp/attempts.js';

describe('AttemptLimiter', () => {
  it('locks a key at max failures in the window, until the oldest leaves it', () => {
    let now = 0;
    const limiter = new AttemptLimiter(3, 1000, () => now);
    for (const t of [0, 100, 200]) {
      now = t;
      expect(limiter.lockedFor('a')).toBe(0);
      limiter.fail('a');
    }
    expect(limiter.lockedFor('a')).toBe(800); // the failure at 0 leaves the window at 1000
    expect(limiter.lockedFor('b')).toBe(0);
    now = 1000;
    expect(limiter.lockedFor('a')).toBe(0);
    limiter.fail('a');
    expect(limiter.lockedFor('a')).toBe(100); // 100, 200, 1000: locked until 1100
  });

  it('forgets a key on success, and bounds the keys it remembers', () => {
    const limiter = new AttemptLimiter(1, 1000, () => 0, 2);
    limiter.fail('a');
    expect(limiter.lockedFor('a')).toBe(1000);
    limiter.succeed('a');
    expect(limiter.lockedFor('a')).toBe(0);
    for (const k of ['x', 'y', 'z']) limiter.fail(k);
    expect(limiter.lockedFor('x')).toBe(0); // the stalest went
    expect(limiter.lockedFor('z')).toBe(1000);
  });

  it('counts an attempt when it begins, refuses to begin beyond the limit, and takes back only a released one', async () => {
    const limiter = new AttemptLimiter(2, 1000, () => 0);
    const first = limiter.begin('a');
    const second = limiter.begin('a');
    // Both in flight, neither decided yet: a third may not begin.
    expect(limiter.begin('a')).toEqual({ lockedForMs: 1000 });
    if (!('attempt' in first) || !('attempt' in second)) throw new Error('not begun');
    await first.attempt.failed();
    await second.attempt.release(); // a success takes back its own attempt, not the failure beside it
    await second.attempt.release(); // once only
    expect(limiter.lockedFor('a')).toBe(0);
    expect('attempt' in limiter.begin('a')).toBe(true);
    expect(limiter.begin('a')).toEqual({ lockedForMs: 1000 });
  });
});

/** Runs `fn` with the path of an attempt file in a fresh directory, removed after. */
async function withFile(fn: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'lookout-attempts-'));
  try {
    await fn(path.join(dir, 'attempts.json'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('AttemptLimiter on a file', () => {
  it('persists failures, loads those still in the window, and drops the rest', async () => {
    await withFile(async (file) => {
      let now = 10_000;
      const limiter = await AttemptLimiter.open(file, 2, 1000, () => now);
      await limiter.fail('a');
      now = 10_500;
      await limiter.fail('a');
      await limiter.fail('b');
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, failures: { a: [10_000, 10_500], b: [10_500] } });

      const reopened = await AttemptLimiter.open(file, 2, 1000, () => now);
      expect(reopened.lockedFor('a')).toBe(500);
      now = 11_200; // a's first failure has left the window: a has one, below the limit
      const later = await AttemptLimiter.open(file, 2, 1000, () => now);
      expect(later.lockedFor('a')).toBe(0);
      // Opening rewrote the file without what left the window.
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, failures: { a: [10_500], b: [10_500] } });
      await later.succeed('b');
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, failures: { a: [10_500] } });
      await expect(later.succeed('nobody')).resolves.toBeUndefined();
    });
  });

  it('refuses a file it did not write, and starts empty without one', async () => {
    await withFile(async (file) => {
      expect((await AttemptLimiter.open(file, 2, 1000)).lockedFor('a')).toBe(0);
      for (const text of ['not json', '{"version":2,"failures":{}}', '{"version":1,"failures":{"a":["x"]}}']) {
        await writeFile(file, text);
        await expect(AttemptLimiter.open(file, 2, 1000)).rejects.toBeInstanceOf(AttemptFileError);
      }
    });
  });

  it('writes changes in order, so the file ends with the last state', async () => {
    await withFile(async (file) => {
      const limiter = await AttemptLimiter.open(file, 5, 60_000);
      await Promise.all(['a', 'b', 'c', 'd'].map((k) => limiter.fail(k)).concat(limiter.succeed('a')));
      await limiter.flushed();
      expect(Object.keys(JSON.parse(await readFile(file, 'utf8')).failures)).toEqual(['b', 'c', 'd']);
    });
  });
});
