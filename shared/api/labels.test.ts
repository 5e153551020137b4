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

  it('applies NFC first, and again after lower-casing, so every spelling of a name is one label', () => {
    // T + U+0308 has no precomposed capital; lower-cased it composes to U+1E97 (ẗ).
    expect(normalizeLabel('T\u0308')).toEqual({ ok: true, label: '\u1e97' });
    expect(normalizeLabel('t\u0308')).toEqual({ ok: true, label: '\u1e97' });
    expect(normalizeLabel('\u1e97')).toEqual({ ok: true, label: '\u1e97' });
    expect(normalizeLabel('Zoe\u0308')).toEqual({ ok: true, label: 'zoë' });
    expect(normalizeLabel('J\u030c')).toEqual({ ok: true, label: '\u01f0' });
    // NFC maps the Kelvin sign to K before lower-casing.
    expect(normalizeLabel('\u212a')).toEqual({ ok: true, label: 'k' });
  });

  it('makes case variants one label by lower-casing, without full case folding (ß stays ß)', () => {
    for (const name of ['Anna', 'ANNA', 'anna']) expect(normalizeLabel(name)).toEqual({ ok: true, label: 'anna' });
    expect(normalizeLabel('STRAẞE')).toEqual({ ok: true, label: 'straße' });
    expect(normalizeLabel('STRASSE')).toEqual({ ok: true, label: 'strasse' });
    expect(normalizeLabel('ΟΔΥΣΣΕΑΣ')).toEqual({ ok: true, label: 'οδυσσεας' });
  });

  it('is stable: a label normalises to itself, for every code point alone and with combining marks', () => {
    let unstable = 0;
    for (let cp = 0x20; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      for (const mark of ['', '\u0308', '\u0301', '\u0307', '\u0345', '\u030c']) {
        const check = normalizeLabel(String.fromCodePoint(cp) + mark);
        if (!check.ok) continue;
        const again = normalizeLabel(check.label);
        if (!again.ok || again.label !== check.label) unstable++;
      }
    }
    expect(unstable).toBe(0);
  });

  it.each([
    ['\u200b', 'visible'],
    ['\u200d\u200c', 'visible'],
    ['\ufe0f', 'visible'],
    ['\u{e0041}', 'visible'],
    ['\u00ad', 'visible'],
    ['\u3164', 'visible'],
    ['\u2800', 'visible'],
    ['\u0301\u0308', 'visible'],
    [' \u200b ', 'visible'],
    ['\ufeff', 'empty'],
    ['ann\u202ea', 'bidirectional'],
    ['\u202b', 'bidirectional'],
    ['a\u200f', 'bidirectional'],
    ['a\u200e', 'bidirectional'],
    ['a\u061c', 'bidirectional'],
    ['a\u2066b\u2069', 'bidirectional'],
    ['a\u2067', 'bidirectional'],
    ['a\u2068', 'bidirectional'],
    ['a\ud800', 'surrogate'],
    ['\udc00a', 'surrogate'],
    // #35: look-alikes of "alice", and what a decoder makes of bytes that are not UTF-8.
    ['alice\u2800', 'blank Braille'],
    ['ali\u2800ce', 'blank Braille'],
    ['a\u0336lice', 'overlay'],
    ['a\u0338lice', 'overlay'],
    ['a\u20e0lice', 'overlay'],
    ['anna\ufffd', 'valid Unicode'],
  ])('rejects %j (invisible only, bidi control, lone surrogate)', (raw, why) => {
    const check = normalizeLabel(raw);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toContain(why);
  });

  it.each([
    ['a\u200db', 'a zero-width joiner'],
    ['a\u{e0041}b', 'a tag character'],
    ['a\u200bb', 'a zero-width space'],
    ['ann\u00ada', 'a soft hyphen'],
    ['a\u2060b', 'a word joiner'],
    ['a\ufeffb', 'a zero-width no-break space inside'],
    ['anna\ufe0f', 'a variation selector'],
    ['a\u034fb', 'a combining grapheme joiner'],
    ['a\u3164b', 'a Hangul filler'],
    ['a\u{1d173}b', 'a musical format character'],
    ['a\u0600b', 'an Arabic number sign (format)'],
    ['\u{e0001}anna', 'a language tag'],
    ['می\u200cخواهم', 'a Persian zero-width non-joiner'],
    ['👩\u200d🔬', 'an emoji joined by ZWJ'],
  ])('refuses %j inside a visible name (%s): it would look like another label (#28)', (raw) => {
    const check = normalizeLabel(raw);
    expect(check).toEqual({
      ok: false,
      reason: 'label must not contain invisible or format characters (zero-width joiners or spaces, tags, soft hyphens, ...)',
    });
  });

  it('refuses every default-ignorable and format code point inside a name, and keeps visible emoji', () => {
    const accepted: string[] = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (/[\p{Default_Ignorable_Code_Point}\p{Cf}]/u.test(c) && normalizeLabel(`a${c}b`).ok) accepted.push(cp.toString(16));
    }
    expect(accepted).toEqual([]);
    expect(normalizeLabel('😀😀')).toEqual({ ok: true, label: '😀😀' });
    expect(normalizeLabel('ab')).toEqual({ ok: true, label: 'ab' });
  });
});
