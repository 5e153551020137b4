/**
 * The PPE compliance rule, decided per person (the original decided for the whole image: one hardhat anywhere
 * and one vest anywhere made a crew of five "compliant"). Pure and shared: the server and the browser run it.
 *
 * - Detector class names map to expected items through aliases (`Hardhat`, `helmet` -> `hardhat`; ...);
 *   `NO-<item>`-style classes mark that item as missing for the person they overlap.
 * - Persons come from the detector's `person` class, or (when its model has none) from boxes given by the
 *   caller (Lookout's own object detector).
 * - An item belongs to the person whose box contains most of it; a hardhat and goggles count only in the head
 *   region of that person (the top part of the box), a vest only on the torso.
 * - `no_persons` when nobody is found; `violation` when any person misses any expected item; else `compliant`.
 */
import type { PpePerson, PpeStatus } from '../events/ppe-events.js';

export const DEFAULT_PPE_EXPECTED = ['hardhat', 'safety-vest', 'goggles'] as const;

/** `detector class name (case-insensitive) -> expected item`, as `PPE_CLASS_ALIASES` writes it: `Hardhat=hardhat,vest=safety-vest`. */
export const DEFAULT_PPE_ALIASES =
  'Hardhat=hardhat,helmet=hardhat,hard-hat=hardhat,Safety Vest=safety-vest,vest=safety-vest,Goggles=goggles,glasses=goggles';

/** A detection as the PPE detector's `/v1/predict` answers it. */
export interface PpeDetection {
  class_id: number;
  class_name: string;
  confidence: number;
  bbox: { x1: number; y1: number; x2: number; y2: number };
}

/** A person box (pixels) from elsewhere, e.g. Lookout's object detector. */
export interface PersonBox {
  x: number;
  y: number;
  w: number;
  h: number;
  confidence: number;
}

export interface PpeRuleOptions {
  /** Expected items, e.g. `['hardhat', 'safety-vest', 'goggles']`. */
  expected: readonly string[];
  /** Lower-cased detector class name -> expected item (see parseAliases). */
  aliases: ReadonlyMap<string, string>;
}

/** What the rule says about one detection. */
export interface ClassifiedDetection extends PpeDetection {
  /** The expected item it is (or, when `absent`, whose absence it shows); null for anything else (persons too). */
  item: string | null;
  /** A `NO-<item>`-style class: the item is missing. */
  absent: boolean;
  /** Whether it is a person box. */
  person: boolean;
}

export interface PpeVerdict {
  ppe_status: PpeStatus;
  person_count: number;
  expected_ppe: string[];
  /** Union over persons, in the order of `expected`. */
  present_ppe: string[];
  /** Union over persons, in the order of `expected`. */
  missing_ppe: string[];
  persons: PpePerson[];
  detections: ClassifiedDetection[];
}

/**
 * An item counts for the person it is assigned to only when at least this fraction of the item's box area lies in
 * that person's region for the item (the head for a hardhat, the torso for a vest; see PPE_ITEM_REGIONS).
 */
export const PPE_REGION_MIN_FRACTION = 0.5;

/**
 * A part of a person box, as fractions of the box: `top`/`bottom` of its height measured down from the box's top
 * (negative: above the box), `left`/`right` of its width measured from the box's left edge (negative: left of it).
 */
export interface PpeRegion {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

/** The head: the top 35% of the box, extended 15% of the height above it (hardhats stick out) and 10% of the width either side. */
export const PPE_HEAD_REGION: PpeRegion = { top: -0.15, bottom: 0.35, left: -0.1, right: 1.1 };
/** The torso: 15% to 75% of the box's height, its full width. */
export const PPE_TORSO_REGION: PpeRegion = { top: 0.15, bottom: 0.75, left: 0, right: 1 };
/** The whole person box: the region of items with no entry in PPE_ITEM_REGIONS (e.g. gloves, boots). */
export const PPE_WHOLE_REGION: PpeRegion = { top: 0, bottom: 1, left: 0, right: 1 };

/** Expected item (normalized, see normalizeClassName) -> where on a person it must be worn. */
export const PPE_ITEM_REGIONS: ReadonlyMap<string, PpeRegion> = new Map([
  ['hardhat', PPE_HEAD_REGION],
  ['goggles', PPE_HEAD_REGION],
  ['mask', PPE_HEAD_REGION],
  ['safety-vest', PPE_TORSO_REGION],
]);

/** The region an item must lie in (PPE_ITEM_REGIONS; the whole person box for items it does not list). */
export function regionForItem(item: string): PpeRegion {
  return PPE_ITEM_REGIONS.get(normalizeClassName(item)) ?? PPE_WHOLE_REGION;
}

/** Lower-cases and trims a class or item name and folds runs of `_`, `-` and spaces into one `-`: `Safety_Vest` -> `safety-vest`. */
export function normalizeClassName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '-');
}

/** Whether a detector class name is the person class (`person`, case-insensitive). */
export function isPersonClassName(name: string): boolean {
  return name.trim().toLowerCase() === 'person';
}

/** `NO-Hardhat`, `no_mask`, `No Safety Vest` -> the named part (`Hardhat`, ...); null for any other name. */
export function negatedClassName(name: string): string | null {
  const m = /^\s*no[\s_-]+(\S.*)$/i.exec(name);
  return m ? m[1].trim() : null;
}

/** Parses `name=item,name=item` (names may hold spaces); throws naming the bad entry. Keys are lower-cased. */
export function parseAliases(text: string): Map<string, string> {
  const aliases = new Map<string, string>();
  // Blank entries (`a=b,` or an empty string) are skipped; every other entry must be exactly `name=item`.
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const parts = entry.split('=');
    const name = parts[0].trim();
    const item = (parts[1] ?? '').trim();
    if (parts.length !== 2 || name === '' || item === '') throw new Error(`PPE_CLASS_ALIASES: "${entry}" is not name=item`);
    aliases.set(name.toLowerCase(), item);
  }
  return aliases;
}

/** Whether the detector's classes include persons (then its own person boxes are used). */
export function hasPersonClass(detections: readonly PpeDetection[], classNames?: readonly string[]): boolean {
  return detections.some((d) => isPersonClassName(d.class_name)) || (classNames ?? []).some(isPersonClassName);
}

interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

interface Mark {
  item: string;
  absent: boolean;
  confidence: number;
}

const TIE_EPSILON = 1e-9;

function clampedBox(b: Box): Box {
  return {
    x1: Math.max(0, Math.min(b.x1, b.x2)),
    y1: Math.max(0, Math.min(b.y1, b.y2)),
    x2: Math.max(0, b.x1, b.x2),
    y2: Math.max(0, b.y1, b.y2),
  };
}

function area(b: Box): number {
  return Math.max(0, b.x2 - b.x1) * Math.max(0, b.y2 - b.y1);
}

function intersection(a: Box, b: Box): number {
  return area({ x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1), x2: Math.min(a.x2, b.x2), y2: Math.min(a.y2, b.y2) });
}

function regionOf(person: Box, r: PpeRegion): Box {
  const w = person.x2 - person.x1;
  const h = person.y2 - person.y1;
  return { x1: person.x1 + r.left * w, y1: person.y1 + r.top * h, x2: person.x1 + r.right * w, y2: person.y1 + r.bottom * h };
}

function centreDistance(a: Box, b: Box): number {
  return Math.hypot((a.x1 + a.x2 - b.x1 - b.x2) / 2, (a.y1 + a.y2 - b.y1 - b.y2) / 2);
}

/** Normalized detector class name -> expected item: each expected item's own name, then the aliases that target an expected item. */
function itemResolver(options: PpeRuleOptions): (name: string) => string | null {
  const byNorm = new Map<string, string>();
  for (const item of options.expected) if (!byNorm.has(normalizeClassName(item))) byNorm.set(normalizeClassName(item), item);
  const lookup = new Map(byNorm);
  for (const [name, item] of options.aliases) {
    const target = byNorm.get(normalizeClassName(item));
    if (target !== undefined) lookup.set(normalizeClassName(name), target);
  }
  return (name) => lookup.get(normalizeClassName(name)) ?? null;
}

/**
 * The index of the person an item box belongs to, or -1: the person whose box holds the largest fraction of the
 * item's area (ties: the larger fraction inside that person's region for the item, then the nearest region centre).
 * A person holding none of it never gets it.
 */
function assign(item: Box, region: PpeRegion, persons: readonly Box[]): number {
  const itemArea = area(item);
  if (itemArea <= 0) return -1;
  let best = -1;
  let bestBox = 0;
  let bestRegion = 0;
  let bestDistance = Number.POSITIVE_INFINITY;
  persons.forEach((person, i) => {
    const inBox = intersection(item, person) / itemArea;
    if (inBox <= 0) return;
    const r = regionOf(person, region);
    const inRegion = intersection(item, r) / itemArea;
    const distance = centreDistance(item, r);
    const better =
      inBox > bestBox + TIE_EPSILON ||
      (Math.abs(inBox - bestBox) <= TIE_EPSILON &&
        (inRegion > bestRegion + TIE_EPSILON || (Math.abs(inRegion - bestRegion) <= TIE_EPSILON && distance < bestDistance)));
    if (best === -1 || better) {
      best = i;
      bestBox = inBox;
      bestRegion = inRegion;
      bestDistance = distance;
    }
  });
  return best;
}

/**
 * Decides compliance. `persons`: person boxes from elsewhere, used only when the detections hold no `person`
 * class (pass undefined to use the detector's own).
 *
 * Each item detection (positive or `NO-<item>`) is assigned to one person (see `assign`) and counts for them only
 * when at least PPE_REGION_MIN_FRACTION of it lies in their region for that item. Per person and item, the most
 * confident counted detection decides: a `NO-<item>` at least as confident as the best positive one (a tie goes
 * to the negative, the safe side) makes the item missing; otherwise a positive one makes it present.
 *
 * Classification: `person` for the person class; `item`/`absent` for a class naming an expected item (by alias,
 * or by the item's own name, tolerant of case and `_`/`-`/space) or its `NO-` form; anything else (items not
 * expected, `NO-` forms of them) is ignored: `item: null, absent: false`.
 */
export function evaluatePpe(detections: readonly PpeDetection[], options: PpeRuleOptions, persons?: readonly PersonBox[]): PpeVerdict {
  const expected = [...options.expected];
  const resolve = itemResolver(options);

  const classified: ClassifiedDetection[] = detections.map((d) => {
    const base = { ...d, bbox: { ...d.bbox } };
    if (isPersonClassName(d.class_name)) return { ...base, item: null, absent: false, person: true };
    const negated = negatedClassName(d.class_name);
    const positive = resolve(d.class_name);
    if (positive !== null) return { ...base, item: positive, absent: false, person: false };
    const absentItem = negated === null ? null : resolve(negated);
    return { ...base, item: absentItem, absent: absentItem !== null, person: false };
  });

  const personBoxes: Box[] = classified.some((d) => d.person)
    ? classified.filter((d) => d.person).map((d) => clampedBox(d.bbox))
    : (persons ?? []).map((p) => clampedBox({ x1: p.x, y1: p.y, x2: p.x + p.w, y2: p.y + p.h }));

  const marks: Mark[][] = personBoxes.map(() => []);
  for (const d of classified) {
    if (d.item === null) continue;
    const box = clampedBox(d.bbox);
    const region = regionForItem(d.item);
    const owner = assign(box, region, personBoxes);
    if (owner < 0) continue;
    const inRegion = intersection(box, regionOf(personBoxes[owner], region)) / area(box);
    if (inRegion + TIE_EPSILON >= PPE_REGION_MIN_FRACTION) marks[owner].push({ item: d.item, absent: d.absent, confidence: d.confidence });
  }

  const people: PpePerson[] = personBoxes.map((b, i) => {
    const isPresent = (item: string): boolean => {
      let pos = Number.NEGATIVE_INFINITY;
      let neg = Number.NEGATIVE_INFINITY;
      for (const m of marks[i]) {
        if (m.item !== item) continue;
        if (m.absent) neg = Math.max(neg, m.confidence);
        else pos = Math.max(pos, m.confidence);
      }
      return pos > neg;
    };
    const present = expected.filter(isPresent);
    const missing = expected.filter((item) => !present.includes(item));
    const x = Math.round(b.x1);
    const y = Math.round(b.y1);
    return {
      x,
      y,
      w: Math.max(0, Math.round(b.x2) - x),
      h: Math.max(0, Math.round(b.y2) - y),
      status: missing.length === 0 ? 'compliant' : 'violation',
      present,
      missing,
    };
  });

  const ppe_status: PpeStatus =
    people.length === 0 ? 'no_persons' : people.some((p) => p.status === 'violation') ? 'violation' : 'compliant';
  return {
    ppe_status,
    person_count: people.length,
    expected_ppe: expected,
    present_ppe: expected.filter((item) => people.some((p) => p.present.includes(item))),
    missing_ppe: expected.filter((item) => people.some((p) => p.missing.includes(item))),
    persons: people,
    detections: classified,
  };
}
