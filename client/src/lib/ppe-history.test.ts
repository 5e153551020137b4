import { describe, expect, it } from 'vitest';
import type { PpePerson } from '../../../shared/events/ppe-events';
import { AVERAGE_WINDOW, appendCheck, bannerText, chartSeries, checksText, listText, mergeChecks, type PpeCheck } from './ppe-history';

const ok: PpePerson = { x: 0, y: 0, w: 10, h: 20, status: 'compliant', present: ['hardhat', 'safety-vest'], missing: [] };
const bad = (...missing: string[]): PpePerson => ({ x: 20, y: 0, w: 10, h: 20, status: 'violation', present: [], missing });

function check(id: string, time: number, persons: PpePerson[]): PpeCheck {
  const status = persons.length === 0 ? 'no_persons' : persons.some((p) => p.status === 'violation') ? 'violation' : 'compliant';
  return { id, time, status, personCount: persons.length, missing: [...new Set(persons.flatMap((p) => p.missing))], persons };
}

describe('mergeChecks and appendCheck', () => {
  it('keeps each check once, oldest first, the newest `limit`', () => {
    const a = check('a', 1000, [ok]);
    const b = check('b', 2000, [bad('hardhat')]);
    const c = check('c', 3000, []);
    // The server's history comes newest first; a live check may be in one list only.
    expect(mergeChecks([a, c], [c, b]).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    expect(mergeChecks([a, b], [c], 2).map((x) => x.id)).toEqual(['b', 'c']);
    expect(appendCheck([a, b], c).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    expect(appendCheck([a, b, c], b).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    // Late (an older timestamp): put in its place.
    expect(appendCheck([a, c], b).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    expect(appendCheck([a, b], c, 2).map((x) => x.id)).toEqual(['b', 'c']);
  });
});

describe('chartSeries', () => {
  it('gives per-check compliance with a moving average that skips checks with nobody in view', () => {
    const s = chartSeries([check('1', 1, [ok]), check('2', 2, [ok, bad('goggles')]), check('3', 3, []), check('4', 4, [ok])], ['hardhat']);
    expect(s.total).toBe(4);
    expect(s.labels).toHaveLength(4);
    expect(s.compliance).toEqual([100, 0, null, 100]);
    expect(s.average).toEqual([100, 50, 50, 66.7]);
    expect(s.withPersons).toBe(3);
    expect(s.compliant).toBe(2);
    expect(s.compliantPersons).toEqual([1, 1, 0, 1]);
    expect(s.violationPersons).toEqual([0, 1, 0, 0]);
    // Expected items come first (even at 0), then any other item found missing.
    expect(s.missingItems).toEqual(['hardhat', 'goggles']);
    expect(s.missingCounts).toEqual([0, 1]);
  });

  it('averages over the last AVERAGE_WINDOW checks with persons', () => {
    const checks = [
      ...Array.from({ length: AVERAGE_WINDOW }, (_, i) => check(`v${i}`, i, [bad('hardhat')])),
      ...Array.from({ length: AVERAGE_WINDOW }, (_, i) => check(`c${i}`, 100 + i, [ok])),
    ];
    const s = chartSeries(checks);
    expect(s.average[AVERAGE_WINDOW - 1]).toBe(0);
    expect(s.average.at(-1)).toBe(100);
    expect(s.missingCounts).toEqual([AVERAGE_WINDOW]);
  });

  it('counts persons missing an item, or the frame\u2019s missing items when a record has no persons', () => {
    const s = chartSeries([
      check('1', 1, [bad('hardhat'), bad('hardhat', 'goggles')]),
      { ...check('2', 2, []), status: 'violation', missing: ['goggles'] },
    ]);
    expect(Object.fromEntries(s.missingItems.map((item, i) => [item, s.missingCounts[i]]))).toEqual({ hardhat: 2, goggles: 2 });
  });
});

describe('words', () => {
  it('says what the banner and captions say', () => {
    expect(checksText(1)).toBe('1 check');
    expect(checksText(3)).toBe('3 checks');
    expect(listText(['hardhat'])).toBe('hardhat');
    expect(listText(['hardhat', 'safety-vest', 'goggles'])).toBe('hardhat, safety-vest and goggles');
    expect(bannerText({ ppe_status: 'no_persons', person_count: 0, persons: [], missing_ppe: [] })).toBe('Nobody in view');
    expect(bannerText({ ppe_status: 'compliant', person_count: 2, persons: [ok, ok], missing_ppe: [] })).toMatch(/^Compliant/);
    expect(bannerText({ ppe_status: 'violation', person_count: 2, persons: [ok, bad('goggles')], missing_ppe: ['goggles'] })).toBe(
      'Violation: 1 of 2 persons missing goggles',
    );
  });
});
