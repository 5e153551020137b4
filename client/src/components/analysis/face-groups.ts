/**
 * Identical unknown faces gathered into one group, kept out of the components so it is tested on its own: a crowd
 * of strangers is one entry, "7 unknown faces", not seven identical ones pushing the rest of the page down. What a
 * face says in words is lib/face-words.ts.
 */
import type { FaceResult } from '../../../../shared/api/index';
import { isKnown, type Reason, reasonOf } from '../../lib/face-words';

export type FaceEntry =
  | { kind: 'face'; face: FaceResult; index: number }
  | { kind: 'group'; reason: Reason; faces: { face: FaceResult; index: number }[] };

/** Groups start at this many identical unknown faces; a single one stays a face of its own. */
export const GROUP_MIN = 2;

/**
 * Known faces one by one, in the order found; then the unknown ones, one group per reason where there are at least
 * GROUP_MIN alike (each keeps its index in `faces`). Alike means saying the same thing: an unknown face that names
 * a nearest person ("nearest: Marie Curie, 59%"; given to a closer face, ambiguous, below the limit) says something
 * of its own and is listed on its own; folding two such strangers into "2 unknown faces — already named on a closer
 * face" read as if they were one person.
 */
export function groupFaces(faces: readonly FaceResult[]): FaceEntry[] {
  const known: FaceEntry[] = [];
  const alone: FaceEntry[] = [];
  const byReason = new Map<Reason, { face: FaceResult; index: number }[]>();
  faces.forEach((face, index) => {
    if (isKnown(face)) known.push({ kind: 'face', face, index });
    else if (face.candidate) alone.push({ kind: 'face', face, index });
    else byReason.set(reasonOf(face), [...(byReason.get(reasonOf(face)) ?? []), { face, index }]);
  });
  const unknown = [...byReason].flatMap(([reason, members]): FaceEntry[] =>
    members.length >= GROUP_MIN ? [{ kind: 'group', reason, faces: members }] : members.map((m) => ({ kind: 'face', ...m })),
  );
  return [...known, ...alone, ...unknown];
}
