import { describe, expect, it } from 'vitest';
import { normalizeLabel } from './labels.js';

describe('normalizeLabel', () => {
  it('normalises as the original service did: trimmed, lower-case, spaces to "-"', () => {
    expect(normalizeLabel('  Grace  Hopper ')).toEqual({ ok: true, label: 'grace-hopper' });
    expect(normalizeLabel('ÉLODIE')).toEqual({ ok: true, label: 'élodie' });
  });

  it.each([
    ['..', 'must not start'],
    ['../etc', '/'],
    ['a/b', '/'],
    ['a\\b', '/'],
    ['.hidden', 'must not start'],
    ['a..b', 'must not start'],
    ['tab\there', 'control'],
    ['nul\u0000', 'control'],
    ['bell\u0007', 'control'],
    ['   ', 'empty'],
    ['', 'empty'],
    ['x'.repeat(65), 'at most'],
    ['unknown', 'reserved'],
    ['50%', '%'],
  ])('rejects %j', (raw, why) => {
    const check = normalizeLabel(raw);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toContain(why);
  });

  it('rejects values that are not text', () => {
    expect(normalizeLabel(42).ok).toBe(false);
    expect(normalizeLabel(undefined).ok).toBe(false);
  });
});
