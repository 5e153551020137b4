import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PPE_ALIASES,
  DEFAULT_PPE_EXPECTED,
  evaluatePpe,
  hasPersonClass,
  negatedClassName,
  normalizeClassName,
  type PpeDetection,
  type PpeRuleOptions,
  parseAliases,
} from './rule.js';

// A 640x480 frame; persons are about 120x360.
const det = (class_name: string, confidence: number, x1: number, y1: number, x2: number, y2: number, class_id = 0): PpeDetection => ({
  class_id,
  class_name,
  confidence,
  bbox: { x1, y1, x2, y2 },
});

const options = (expected: readonly string[] = DEFAULT_PPE_EXPECTED): PpeRuleOptions => ({
  expected,
  aliases: parseAliases(DEFAULT_PPE_ALIASES),
});
const ALL = ['hardhat', 'safety-vest', 'goggles'];

// Person A: (100,80)-(220,440). Head region: x 88..232, y 26..206. Torso: x 100..220, y 134..350.
const personA = det('person', 0.92, 100, 80, 220, 440);
const hardhatA = det('Hardhat', 0.85, 130, 60, 190, 110); // sticks out 20px over the box top
const gogglesA = det('Goggles', 0.7, 140, 115, 180, 130);
const vestA = det('Safety Vest', 0.8, 105, 170, 215, 300);
// Person B: (380,90)-(500,450).
const personB = det('Person', 0.9, 380, 90, 500, 450);

const boxA = { x: 100, y: 80, w: 120, h: 360 };
const boxB = { x: 380, y: 90, w: 120, h: 360 };

describe('evaluatePpe', () => {
  it('finds one fully equipped person compliant', () => {
    const v = evaluatePpe([personA, hardhatA, gogglesA, vestA], options());
    expect(v).toEqual({
      ppe_status: 'compliant',
      person_count: 1,
      expected_ppe: ALL,
      present_ppe: ALL,
      missing_ppe: [],
      persons: [{ ...boxA, status: 'compliant', present: ALL, missing: [] }],
      detections: [
        { ...personA, item: null, absent: false, person: true },
        { ...hardhatA, item: 'hardhat', absent: false, person: false },
        { ...gogglesA, item: 'goggles', absent: false, person: false },
        { ...vestA, item: 'safety-vest', absent: false, person: false },
      ],
    });
  });

  it('decides per person: one equipped and one bare person is a violation, with the unions of both', () => {
    const v = evaluatePpe([personA, personB, hardhatA, gogglesA, vestA], options());
    expect(v.ppe_status).toBe('violation');
    expect(v.person_count).toBe(2);
    expect(v.persons).toEqual([
      { ...boxA, status: 'compliant', present: ALL, missing: [] },
      { ...boxB, status: 'violation', present: [], missing: ALL },
    ]);
    expect(v.present_ppe).toEqual(ALL);
    expect(v.missing_ppe).toEqual(ALL);
    expect(v.expected_ppe).toEqual(ALL);
  });

  it('counts a hardhat on the floor for nobody: not at any head, or outside every person box', () => {
    const atFeet = det('Hardhat', 0.9, 130, 400, 190, 440); // inside A's box, far below the head
    const aside = det('Hardhat', 0.9, 560, 420, 620, 460); // nobody's box
    const v = evaluatePpe([personA, atFeet, aside, gogglesA, vestA], options());
    expect(v.ppe_status).toBe('violation');
    expect(v.persons).toEqual([{ ...boxA, status: 'violation', present: ['safety-vest', 'goggles'], missing: ['hardhat'] }]);
    expect(v.present_ppe).toEqual(['safety-vest', 'goggles']);
    expect(v.missing_ppe).toEqual(['hardhat']);
    expect(v.detections.map((d) => d.item)).toEqual([null, 'hardhat', 'hardhat', 'goggles', 'safety-vest']);
  });

  it('does not count a vest over the head region as a vest', () => {
    const vestOnHead = det('Safety Vest', 0.9, 105, 60, 215, 140); // only 6 of its 80px rows are on the torso
    const v = evaluatePpe([personA, hardhatA, gogglesA, vestOnHead], options());
    expect(v.ppe_status).toBe('violation');
    expect(v.persons).toEqual([{ ...boxA, status: 'violation', present: ['hardhat', 'goggles'], missing: ['safety-vest'] }]);
  });

  it('counts goggles at the neck only when half of them lie in the head region', () => {
    // Head region ends at y 206: 190..220 has 16 of 30 rows in it (counts), 200..230 only 6 (does not).
    const low = evaluatePpe([personA, hardhatA, vestA, det('Goggles', 0.7, 140, 190, 180, 220)], options());
    expect(low.persons[0].present).toEqual(ALL);
    const lower = evaluatePpe([personA, hardhatA, vestA, det('Goggles', 0.7, 140, 200, 180, 230)], options());
    expect(lower.persons[0].missing).toEqual(['goggles']);
  });

  it('counts a hardhat sticking out over the box top or side (head region: 15% above, 10% either side)', () => {
    // 40..100: 20 of its 60 rows are in the box, all in the head region (from y 26).
    const high = evaluatePpe([personA, det('Hardhat', 0.9, 130, 40, 190, 100)], options(['hardhat']));
    expect(high.persons).toEqual([{ ...boxA, status: 'compliant', present: ['hardhat'], missing: [] }]);
    // x 70..120: 20 of 50 columns in the box, 32 in the head region (from x 88).
    const side = evaluatePpe([personA, det('Hardhat', 0.9, 70, 70, 120, 110)], options(['hardhat']));
    expect(side.persons).toEqual([{ ...boxA, status: 'compliant', present: ['hardhat'], missing: [] }]);
    // 0..40: above the box entirely, so nobody's.
    const above = evaluatePpe([personA, det('Hardhat', 0.9, 130, 0, 190, 40)], options(['hardhat']));
    expect(above.persons).toEqual([{ ...boxA, status: 'violation', present: [], missing: ['hardhat'] }]);
  });

  it('says no_persons when nobody is found, items or not', () => {
    expect(evaluatePpe([hardhatA, vestA], options())).toEqual({
      ppe_status: 'no_persons',
      person_count: 0,
      expected_ppe: ALL,
      present_ppe: [],
      missing_ppe: [],
      persons: [],
      detections: [
        { ...hardhatA, item: 'hardhat', absent: false, person: false },
        { ...vestA, item: 'safety-vest', absent: false, person: false },
      ],
    });
    expect(evaluatePpe([], options(), []).ppe_status).toBe('no_persons');
    expect(evaluatePpe([], options()).ppe_status).toBe('no_persons');
  });

  it('uses the given persons when the model has no person class, and only then', () => {
    const dets = [hardhatA, gogglesA, vestA];
    expect(hasPersonClass(dets)).toBe(false);
    expect(hasPersonClass(dets, ['Hardhat', 'Safety Vest'])).toBe(false);
    expect(hasPersonClass(dets, ['Hardhat', 'Person'])).toBe(true);
    expect(hasPersonClass([personA])).toBe(true);
    expect(hasPersonClass([personB], [])).toBe(true);

    const v = evaluatePpe(dets, options(), [
      { x: 100, y: 80, w: 120, h: 360, confidence: 0.9 },
      { x: 380.4, y: 89.6, w: 120, h: 360, confidence: 0.8 },
    ]);
    expect(v.ppe_status).toBe('violation');
    expect(v.persons).toEqual([
      { ...boxA, status: 'compliant', present: ALL, missing: [] },
      { ...boxB, status: 'violation', present: [], missing: ALL },
    ]);
    expect(v.detections).toEqual([
      { ...hardhatA, item: 'hardhat', absent: false, person: false },
      { ...gogglesA, item: 'goggles', absent: false, person: false },
      { ...vestA, item: 'safety-vest', absent: false, person: false },
    ]);

    // With the detector's own person boxes, the given ones are not used.
    const own = evaluatePpe([personB, ...dets], options(), [{ x: 100, y: 80, w: 120, h: 360, confidence: 0.9 }]);
    expect(own.persons).toEqual([{ ...boxB, status: 'violation', present: [], missing: ALL }]);
  });

  it('marks the hardhat missing for the person a NO-Hardhat overlaps; the more confident detection wins, a tie goes to NO-', () => {
    const noHardhat = det('NO-Hardhat', 0.8, 135, 75, 185, 125, 7);
    const v = evaluatePpe([personA, personB, noHardhat, gogglesA, vestA, det('Hardhat', 0.9, 410, 70, 470, 120)], options());
    expect(v.ppe_status).toBe('violation');
    expect(v.persons).toEqual([
      { ...boxA, status: 'violation', present: ['safety-vest', 'goggles'], missing: ['hardhat'] },
      { ...boxB, status: 'violation', present: ['hardhat'], missing: ['safety-vest', 'goggles'] },
    ]);
    expect(v.detections[2]).toEqual({ ...noHardhat, item: 'hardhat', absent: true, person: false });

    const vs = (hardhat: number, no: number) =>
      evaluatePpe([personA, det('Hardhat', hardhat, 130, 60, 190, 110), det('NO-Hardhat', no, 135, 75, 185, 125)], options(['hardhat']))
        .persons[0];
    expect(vs(0.9, 0.8)).toEqual({ ...boxA, status: 'compliant', present: ['hardhat'], missing: [] });
    expect(vs(0.6, 0.8)).toEqual({ ...boxA, status: 'violation', present: [], missing: ['hardhat'] });
    expect(vs(0.8, 0.8)).toEqual({ ...boxA, status: 'violation', present: [], missing: ['hardhat'] });

    // A NO-Safety Vest on A's torso, no_goggles on A's head; a NO-Hardhat on nobody changes nothing.
    const w = evaluatePpe(
      [
        personA,
        hardhatA,
        det('NO-Safety Vest', 0.7, 105, 170, 215, 300),
        det('no_goggles', 0.6, 140, 115, 180, 130),
        det('NO-Hardhat', 0.9, 560, 20, 600, 60),
      ],
      options(),
    );
    expect(w.persons).toEqual([{ ...boxA, status: 'violation', present: ['hardhat'], missing: ['safety-vest', 'goggles'] }]);
    expect(w.detections.map((d) => [d.item, d.absent])).toEqual([
      [null, false],
      ['hardhat', false],
      ['safety-vest', true],
      ['goggles', true],
      ['hardhat', true],
    ]);
  });

  it('maps detector classes through the aliases, tolerant of case and _/-/space', () => {
    const v = evaluatePpe(
      [
        personA,
        det('helmet', 0.8, 130, 60, 190, 110),
        det('glasses', 0.7, 140, 115, 180, 130),
        det('safety_vest', 0.8, 105, 170, 215, 300),
      ],
      options(),
    );
    expect(v.ppe_status).toBe('compliant');
    expect(v.persons).toEqual([{ ...boxA, status: 'compliant', present: ALL, missing: [] }]);
    expect(v.detections.map((d) => d.item)).toEqual([null, 'hardhat', 'goggles', 'safety-vest']);

    const classify = (name: string) => {
      const d = evaluatePpe([det(name, 0.5, 0, 0, 10, 10)], options()).detections[0];
      return [d.item, d.absent, d.person];
    };
    expect(classify('Safety-Vest')).toEqual(['safety-vest', false, false]);
    expect(classify('Safety Vest')).toEqual(['safety-vest', false, false]);
    expect(classify('SAFETY_VEST')).toEqual(['safety-vest', false, false]);
    expect(classify('vest')).toEqual(['safety-vest', false, false]);
    expect(classify('hard hat')).toEqual(['hardhat', false, false]);
    expect(classify('HARDHAT')).toEqual(['hardhat', false, false]);
    expect(classify('goggles')).toEqual(['goggles', false, false]);
    expect(classify('NO-Safety Vest')).toEqual(['safety-vest', true, false]);
    expect(classify('No helmet')).toEqual(['hardhat', true, false]);
    expect(classify('PERSON')).toEqual([null, false, true]);
    // Not expected, not an item: ignored.
    expect(classify('mask')).toEqual([null, false, false]);
    expect(classify('NO-Mask')).toEqual([null, false, false]);
    expect(classify('Safety Cone')).toEqual([null, false, false]);
    expect(classify('nothing')).toEqual([null, false, false]);
  });

  it('follows a custom expected list (hardhat only) and ignores the rest', () => {
    const v = evaluatePpe(
      [personA, personB, hardhatA, det('Hardhat', 0.9, 410, 70, 470, 120), det('mask', 0.9, 140, 120, 180, 150)],
      options(['hardhat']),
    );
    expect(v).toEqual({
      ppe_status: 'compliant',
      person_count: 2,
      expected_ppe: ['hardhat'],
      present_ppe: ['hardhat'],
      missing_ppe: [],
      persons: [
        { ...boxA, status: 'compliant', present: ['hardhat'], missing: [] },
        { ...boxB, status: 'compliant', present: ['hardhat'], missing: [] },
      ],
      detections: [
        { ...personA, item: null, absent: false, person: true },
        { ...personB, item: null, absent: false, person: true },
        { ...hardhatA, item: 'hardhat', absent: false, person: false },
        { ...det('Hardhat', 0.9, 410, 70, 470, 120), item: 'hardhat', absent: false, person: false },
        { ...det('mask', 0.9, 140, 120, 180, 150), item: null, absent: false, person: false },
      ],
    });
    // The vest is not expected: no vest is no violation.
    expect(evaluatePpe([personA, det('Hardhat', 0.9, 130, 60, 190, 110)], options(['hardhat'])).ppe_status).toBe('compliant');
    // An expected item with no alias matches by its own name.
    const mask = evaluatePpe([personA, det('Mask', 0.9, 140, 120, 180, 150)], options(['mask']));
    expect(mask.persons).toEqual([{ ...boxA, status: 'compliant', present: ['mask'], missing: [] }]);
  });

  it('gives an item overlapping two persons to the one whose box contains most of it', () => {
    // A: x 100..220; C: x 200..320. The hardhat (195..255) has 25px of width in A and 55px in C; both heads hold all of it.
    const personC = det('person', 0.9, 200, 80, 320, 440);
    const shared = det('Hardhat', 0.9, 195, 70, 255, 120);
    const v = evaluatePpe([personA, personC, shared], options(['hardhat']));
    expect(v.ppe_status).toBe('violation');
    expect(v.persons).toEqual([
      { ...boxA, status: 'violation', present: [], missing: ['hardhat'] },
      { x: 200, y: 80, w: 120, h: 360, status: 'compliant', present: ['hardhat'], missing: [] },
    ]);
    expect(v.present_ppe).toEqual(['hardhat']);
    expect(v.missing_ppe).toEqual(['hardhat']);
  });

  it('breaks a tie in containment by the nearer region centre', () => {
    // Both boxes hold the whole vest, both torsos too; A's torso centre (160,242) is nearer the vest's (160,235) than D's (160,216).
    const personD = det('person', 0.9, 90, 0, 230, 480);
    const v = evaluatePpe([personD, personA, vestA], options(['safety-vest']));
    expect(v.persons.map((p) => p.present)).toEqual([[], ['safety-vest']]);
  });

  it('rounds person boxes to integers and clamps them at 0', () => {
    const v = evaluatePpe([det('person', 0.9, -3.4, 10.6, 116.6, 370.2)], options([]));
    expect(v).toEqual({
      ppe_status: 'compliant',
      person_count: 1,
      expected_ppe: [],
      present_ppe: [],
      missing_ppe: [],
      persons: [{ x: 0, y: 11, w: 117, h: 359, status: 'compliant', present: [], missing: [] }],
      detections: [{ ...det('person', 0.9, -3.4, 10.6, 116.6, 370.2), item: null, absent: false, person: true }],
    });
  });

  it('does not alias its inputs', () => {
    const expected = ['hardhat'];
    const input = [personA, hardhatA];
    const v = evaluatePpe(input, { expected, aliases: parseAliases(DEFAULT_PPE_ALIASES) });
    expect(v.expected_ppe).not.toBe(expected);
    expect(v.detections[0].bbox).not.toBe(personA.bbox);
    expect(input).toEqual([personA, hardhatA]);
  });
});

describe('parseAliases', () => {
  it('parses the default aliases', () => {
    expect([...parseAliases(DEFAULT_PPE_ALIASES)]).toEqual([
      ['hardhat', 'hardhat'],
      ['helmet', 'hardhat'],
      ['hard-hat', 'hardhat'],
      ['safety vest', 'safety-vest'],
      ['vest', 'safety-vest'],
      ['goggles', 'goggles'],
      ['glasses', 'goggles'],
    ]);
  });

  it('trims around names and items, keeps spaces inside names, lower-cases keys', () => {
    expect([...parseAliases('Hardhat=hardhat, Safety Vest = safety-vest')]).toEqual([
      ['hardhat', 'hardhat'],
      ['safety vest', 'safety-vest'],
    ]);
    expect(parseAliases('').size).toBe(0);
    expect(parseAliases('   ').size).toBe(0);
    expect([...parseAliases('Hardhat=hardhat,')]).toEqual([['hardhat', 'hardhat']]);
  });

  it('throws naming the bad entry', () => {
    expect(() => parseAliases('Hardhat=hardhat,vest')).toThrow(new Error('PPE_CLASS_ALIASES: "vest" is not name=item'));
    expect(() => parseAliases(' =hardhat')).toThrow(new Error('PPE_CLASS_ALIASES: "=hardhat" is not name=item'));
    expect(() => parseAliases('helmet = ')).toThrow(new Error('PPE_CLASS_ALIASES: "helmet =" is not name=item'));
    expect(() => parseAliases('a=b=c')).toThrow(new Error('PPE_CLASS_ALIASES: "a=b=c" is not name=item'));
  });
});

describe('class name helpers', () => {
  it('normalizes and recognizes NO- classes', () => {
    expect(normalizeClassName(' Safety_ Vest ')).toBe('safety-vest');
    expect(negatedClassName('NO-Hardhat')).toBe('Hardhat');
    expect(negatedClassName('no_mask')).toBe('mask');
    expect(negatedClassName('No Safety Vest')).toBe('Safety Vest');
    expect(negatedClassName('nothing')).toBeNull();
    expect(negatedClassName('no-')).toBeNull();
  });
});
