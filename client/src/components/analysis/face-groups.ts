/**
 * What the pages say about faces, kept out of the components so it is tested on its own: why a face is unknown in
 * words (the API's `reason`), and identical unknown faces gathered into one group (a crowd of strangers is one
 * entry, "7 unknown faces", not seven identical ones pushing the rest of the page down).
 */
import type { FaceResult, UnknownReason } from '../../../../shared/api/index';

/** Each reason as a person reads it. */
export const UNKNOWN_TEXT: Record<UnknownReason, string> = {
  not_trained: 'Not recognised: the model has not been trained yet.',
  no_match: 'Not anyone the model was trained on.',
  copy_of_training_image: 'This looks like an exact copy of a training photo; Lookout does not accept copies. Show a live face.',
};

export function isKnown(face: FaceResult): boolean {
  return face.label !== 'unknown';
}

/** The reason of an unknown face; a result stored before reasons existed is taken as "no match". */
export function reasonOf(face: FaceResult): UnknownReason {
  return face.reason ?? 'no_match';
}

export function unknownText(face: FaceResult): string {
  return UNKNOWN_TEXT[reasonOf(face)];
}

export type FaceEntry =
  | { kind: 'face'; face: FaceResult; index: number }
  | { kind: 'group'; reason: UnknownReason; faces: { face: FaceResult; index: number }[] };

/** Groups start at this many identical unknown faces; a single one stays a face of its own. */
export const GROUP_MIN = 2;

/**
 * Known faces one by one, in the order found; then the unknown ones, one group per reason where there are at least
 * GROUP_MIN alike (each keeps its index in `faces`).
 */
export function groupFaces(faces: readonly FaceResult[]): FaceEntry[] {
  const known: FaceEntry[] = [];
  const byReason = new Map<UnknownReason, { face: FaceResult; index: number }[]>();
  faces.forEach((face, index) => {
    if (isKnown(face)) known.push({ kind: 'face', face, index });
    else byReason.set(reasonOf(face), [...(byReason.get(reasonOf(face)) ?? []), { face, index }]);
  });
  const unknown = [...byReason].flatMap(([reason, members]): FaceEntry[] =>
    members.length >= GROUP_MIN ? [{ kind: 'group', reason, faces: members }] : members.map((m) => ({ kind: 'face', ...m })),
  );
  return [...known, ...unknown];
}
