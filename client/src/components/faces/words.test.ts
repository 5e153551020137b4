import { describe, expect, it } from 'vitest';
import { actionText, checksText, rangeOf, seenText, sourcesText, timeText } from './words';

// Local times: the page shows the viewer's clock.
const now = new Date(2025, 4, 3, 18, 30);
const at = (d: number, h: number, m: number, y = 2025) => new Date(y, 4, d, h, m).toISOString();

describe('Faces page words', () => {
  it('says how often and when, with the date only for another day', () => {
    // Always with the date (#36: "last at 14:02" left the day to guess), in the viewer's language.
    expect(seenText(10, at(3, 14, 2), now, 'en-GB')).toBe('Seen 10 times, last on 3 May, 14:02');
    expect(seenText(1, at(3, 9, 5), now, 'en-GB')).toBe('Seen once, on 3 May, 09:05');
    expect(seenText(3, at(1, 23, 59), now, 'en-GB')).toBe('Seen 3 times, last on 1 May, 23:59');
    expect(timeText(at(1, 7, 0, 2024), now, 'en-GB')).toBe('1 May 2024, 07:00');
    expect(timeText(at(3, 14, 2), now, 'en-US')).toBe('May 3, 02:02 PM');
    expect(timeText(at(3, 14, 2), now, 'de-DE')).toBe('3. Mai, 14:02');
    expect(timeText('not a time', now)).toBe('not a time');
  });

  it('names the sources in words, each once', () => {
    expect(sourcesText(['api'])).toBe('by another program');
    expect(sourcesText(['camera', 'api', 'camera', 'verify'])).toBe('by a camera, another program and a sign-in check');
    // Not "by a browser and a live page" (#36): what happened, in plain words.
    expect(sourcesText(['browser', 'page'])).toBe('by a device that recognises faces itself and a photo on a Lookout page');
    expect(sourcesText([])).toBe('');
  });

  it('puts actions in the past tense', () => {
    expect(actionText({ kind: 'assign', name: 'Ada Lovelace', count: 3 })).toBe('Assigned 3 faces to Ada Lovelace');
    expect(actionText({ kind: 'dismiss', count: 1 })).toBe('Dismissed 1 face');
    expect(actionText({ kind: 'correct', name: 'grace-hopper', count: 1 })).toBe('Marked a face as not grace-hopper');
    expect(actionText({ kind: 'apart', count: 1 })).toBe('Split 1 face off as someone else');
  });

  it("says when assigned faces' photo checks found problems, and nothing when all are good", () => {
    const c = (verdict: string | null) => ({ filename: 'f.jpg', check: verdict ? { verdict, message: '' } : null });
    expect(checksText([c('ok'), c('ok')])).toBe('');
    expect(checksText([c(null), c(null)])).toBe('');
    expect(checksText([c('ok'), c('blurred'), c('ok')])).toBe(
      '1 of 3 photos has a problem (below): it teaches Lookout little. Delete it on the Training page, or add better photos.',
    );
    expect(checksText([c('no_face'), c('too_small'), c(null)])).toBe(
      'Both photos have a problem (below): they teach Lookout little. Delete them on the Training page, or add better photos.',
    );
    expect(checksText([c('no_face')])).toMatch(/^The photo has a problem/);
  });

  it('turns a time range into from/to', () => {
    expect(rangeOf('hour', now, { from: '', to: '' })).toEqual({ from: new Date(2025, 4, 3, 17, 30).toISOString() });
    expect(rangeOf('all', now, { from: '', to: '' })).toEqual({});
    expect(rangeOf('custom', now, { from: '2025-05-01T08:00', to: 'x' })).toEqual({
      from: new Date(2025, 4, 1, 8, 0).toISOString(),
      to: undefined,
    });
  });
});
