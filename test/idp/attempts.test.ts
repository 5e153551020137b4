import { describe, expect, it } from 'vitest';
import { AttemptLimiter } from '../../server/idp/attempts.js';

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
});
