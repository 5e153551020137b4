/**
 * #36 2: the words of a person's page: what an action did (for its message and its undo), where a face was seen,
 * how near a found face is, and what a merge is about to do, said before it is done.
 */
import type { PersonActionResponse } from '../../../../shared/api/people';
import { sourceText } from '../faces/words';

export const photosText = (n: number) => (n === 1 ? '1 photo' : `${n} photos`);
export const sightingsText = (n: number) => (n === 1 ? '1 sighting' : `${n} sightings`);

/** "a camera (door)", "a photo on a Lookout page". */
export function whereText(source: string, camera: string | null): string {
  return camera ? `${sourceText(source)} (${camera})` : sourceText(source);
}

/** What an action did, in the past tense; `name`: the person's name before it. */
export function actionDoneText(r: Pick<PersonActionResponse, 'kind' | 'display_name' | 'moved'>, name: string): string {
  switch (r.kind) {
    case 'rename':
      return `${name} is now called ${r.display_name}`;
    case 'cover':
      return `New cover photo for ${r.display_name}`;
    case 'merge':
      return `${name} merged into ${r.display_name}: ${photosText(r.moved?.photos ?? 0)} and ${sightingsText(r.moved?.sightings ?? 0)} moved`;
    case 'move':
      return `${photosText(r.moved?.photos ?? 0)} of ${name} moved to ${r.display_name}`;
  }
}

/**
 * Why to train after a merge or a move; nothing after a rename or a cover (the models know people by label), nor
 * after a merge the trained models followed at once (#36: only photos they never had wait for a training).
 */
export function retrainText(r: Pick<PersonActionResponse, 'kind' | 'retrain_needed'>): string {
  if (!r.retrain_needed) return '';
  return r.kind === 'merge'
    ? 'Their photos count for recognition once the model is trained again.'
    : 'Lookout recognises the photos under their new person once the model is trained again.';
}

/** What a merge will do, said before it is confirmed. */
export function mergePreviewText(name: string, intoName: string, photos: number, sightings: number): string {
  return `All ${photosText(photos)} and ${sightingsText(sightings)} of ${name} go to ${intoName}, and ${name} is no longer listed. You can undo this.`;
}

/** A found face's nearness in words, by its distance against the search's limit. */
export function nearnessText(distance: number, max: number): string {
  if (!(max > 0)) return '';
  const share = distance / max;
  if (share <= 0.6) return 'very close';
  if (share <= 0.85) return 'close';
  return 'near the limit';
}
