/**
 * Look-alike labels (#35): two names that a person reading them cannot tell apart must not be two people, or an
 * upload under `аlice` (Cyrillic а) would add a second "alice" beside the real one. Unicode's answer is the
 * confusable skeleton of UTS #39 (section 4): skeleton(X) = NFD(X), each character replaced by its prototype
 * from confusables.txt, NFD again; two strings are confusable when their skeletons are equal.
 *
 * Labels are lower-case, and a few prototypes are capitals (`0` is mapped to `O`): the skeleton is compared in
 * lower case, so `b0b` meets `bob`. The table is confusables.txt 10.0.0 (./confusables-data.ts, where it came
 * from); characters added to Unicode since then are mapped to themselves.
 */
import { CONFUSABLES_TABLE } from './confusables-data.js';

let prototypes: Map<number, string> | null = null;

/** The table, read once on first use: code point -> the string it can be mistaken for. */
function table(): Map<number, string> {
  if (prototypes) return prototypes;
  const map = new Map<number, string>();
  for (const entry of CONFUSABLES_TABLE.split(',')) {
    if (!entry) continue;
    const [from, to] = entry.split(':');
    const [start, count] = from.split('+').map((n) => Number.parseInt(n, 36));
    const targets = to.split(' ').map((n) => Number.parseInt(n, 36));
    for (let i = 0; i < (count || 1); i++) {
      map.set(start + i, targets.length === 1 ? String.fromCodePoint(targets[0] + i) : String.fromCodePoint(...targets));
    }
  }
  prototypes = map;
  return map;
}

/** The UTS #39 skeleton of a label, in lower case (see above). */
export function labelSkeleton(label: string): string {
  const map = table();
  let mapped = '';
  for (const char of label.normalize('NFD')) mapped += map.get(char.codePointAt(0) as number) ?? char;
  return mapped.normalize('NFD').toLowerCase();
}
