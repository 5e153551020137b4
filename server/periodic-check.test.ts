import { describe, expect, it } from 'vitest';
import { PeriodicCheck } from './periodic-check.js';

describe('PeriodicCheck', () => {
  it('checks at start and then every interval, one check at a time, with a timer that does not keep the process alive', async () => {
    let runs = 0;
    let running = 0;
    let overlapped = false;
    const check = new PeriodicCheck(30, async () => {
      runs++;
      running++;
      if (running > 1) overlapped = true;
      await new Promise((r) => setTimeout(r, 50));
      running--;
    });
    await check.start();
    expect(runs).toBe(1);
    expect(check['timer']?.hasRef()).toBe(false);
    // Callers during a check share it.
    await Promise.all([check.now(), check.now(), check.now()]);
    await new Promise((r) => setTimeout(r, 200));
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(overlapped).toBe(false);
    check.stop();
    expect(check['timer']).toBeNull();
    await new Promise((r) => setTimeout(r, 80));
    const after = runs;
    await new Promise((r) => setTimeout(r, 100));
    expect(runs).toBe(after);
  });

  it('never rejects, and runs again after a failed check', async () => {
    let runs = 0;
    const check = new PeriodicCheck(1000, async () => {
      runs++;
      throw new Error('down');
    });
    await expect(check.now()).resolves.toBeUndefined();
    await expect(check.now()).resolves.toBeUndefined();
    expect(runs).toBe(2);
  });
});
