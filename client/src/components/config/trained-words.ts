/**
 * Whether the trained model is out of date: people with photos that it does not know (added, or renamed into a new
 * label, since it was trained). "Trained with 3 people" read as current after a fourth was added (#36).
 */
import type { PersonSummary } from '../../lib/people';

/** The people with photos the current model does not know, in the order listed. */
export function untrainedPeople(details: readonly Pick<PersonSummary, 'label' | 'images' | 'trained'>[]): string[] {
  return details.filter((d) => d.images > 0 && !d.trained).map((d) => d.label);
}

/** "Out of date: Ada Lovelace has photos but is not in it yet. Train again to add them." ('' when up to date). */
export function outOfDateText(names: readonly string[]): string {
  if (names.length === 0) return '';
  const who =
    names.length === 1
      ? `${names[0]} has photos but is`
      : names.length <= 3
        ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} have photos but are`
        : `${names.length} people have photos but are`;
  return `Out of date: ${who} not in it yet. Train again to add ${names.length === 1 ? 'them' : 'them all'}.`;
}
