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

/** Parses `name=item,name=item` (names may hold spaces); throws naming the bad entry. Keys are lower-cased. */
export declare function parseAliases(text: string): Map<string, string>;

/** Whether the detector's classes include persons (then its own person boxes are used). */
export declare function hasPersonClass(detections: readonly PpeDetection[], classNames?: readonly string[]): boolean;

/**
 * Decides compliance. `persons`: person boxes from elsewhere, used only when the detections hold no `person`
 * class (pass undefined to use the detector's own).
 */
export declare function evaluatePpe(
  detections: readonly PpeDetection[],
  options: PpeRuleOptions,
  persons?: readonly PersonBox[],
): PpeVerdict;
