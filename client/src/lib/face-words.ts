/**
 * What a face result says, in words and colour, for every place that shows one (the boxes on the picture, the list,
 * the face cards): a name the recognizer is sure of in green, an unsure one in amber as "probably X", an unknown face
 * in grey with the person it was nearest to ("nearest: X") and why it was not named. #36: one figure per face, its
 * similarity (the API's `confidence`, shared/recognition/similarity.ts), shown on named faces only: an unknown face
 * shows no percentage ("unknown 0% match" read as a score, and its candidate's figure as a match). One mapping from the
 * API's reason codes to short words, here; the API's own texts (UNKNOWN_REASONS) are for developers.
 */
import type { FaceResult, UnknownReason } from '../../../shared/api/index';

export type Reason = UnknownReason;

/** A face as shown: `certainty` and `candidate` are absent in answers (and stored results) from before them. */
export type ShownFace = FaceResult;

/** Each reason as a person reads it. */
export const REASON_WORDS: Record<Reason, string> = {
  not_trained: 'Not recognised: the model has not been trained yet.',
  no_match: 'Not anyone the model was trained on.',
  below_threshold: 'Not close enough to name: just past the limit for a match.',
  ambiguous: 'Looks about as much like two people: Lookout will not guess.',
  given_to_another_face: 'That person is already named on a closer face in this picture.',
  copy_of_training_image: 'This looks like an exact copy of a training photo; Lookout does not accept copies. Show a live face.',
  corrected: 'Looks like a face someone marked as "not this person", so Lookout does not give it that name.',
  low_quality: 'Too small or too blurred to tell who it is: come closer, hold still or add light.',
};

/** The name shown for a label: the display name a person typed ("Marie Curie"), set by lib/people.ts; the label until then. */
let displayName: (label: string) => string = (label) => label;
export function setDisplayNames(names: (label: string) => string): void {
  displayName = names;
}

/** How sure the shown answer is: named and sure, named but unsure, or not named. */
export type Tone = 'named' | 'unsure' | 'unknown';

export function isKnown(face: FaceResult): boolean {
  return face.label !== 'unknown';
}

/** A named face without `certainty` (an answer from before it) counts as sure, as it was shown then. */
export function toneOf(face: ShownFace): Tone {
  if (!isKnown(face)) return 'unknown';
  return face.certainty === 'unsure' ? 'unsure' : 'named';
}

/**
 * Colours of the boxes and their labels: `fill` behind `text`. Each pair keeps at least 4.5:1 contrast (WCAG AA for
 * small text; face-words.test.ts checks it), and amber carries dark text since white on amber cannot.
 */
export const TONE_COLORS: Record<Tone, { fill: string; text: string }> = {
  named: { fill: '#15803d', text: '#ffffff' },
  unsure: { fill: '#f5b000', text: '#14151a' },
  unknown: { fill: '#4b5563', text: '#ffffff' },
};

/** The reason of an unknown face; a result stored before reasons existed is taken as "no match". */
export function reasonOf(face: FaceResult): Reason {
  return face.reason ?? 'no_match';
}

export function reasonWords(face: FaceResult): string {
  return REASON_WORDS[reasonOf(face)] ?? REASON_WORDS.no_match;
}

export function percent(confidence: number): string {
  return `${Math.round(confidence)}%`;
}

/** "87% match" for a named face (its similarity); null for an unknown one, which shows no percentage. */
export function matchText(face: ShownFace): string | null {
  return isKnown(face) ? `${percent(face.confidence)} match` : null;
}

/** Who the face is as shown: "alice", "probably alice", or "unknown". */
export function nameText(face: ShownFace): string {
  if (!isKnown(face)) return face.label;
  return toneOf(face) === 'unsure' ? `probably ${displayName(face.label)}` : displayName(face.label);
}

/** "nearest: bob" for an unknown face that had a nearest person (no percentage: it is not a match); null otherwise. */
export function candidateText(face: ShownFace): string | null {
  if (isKnown(face) || !face.candidate) return null;
  return `nearest: ${displayName(face.candidate.label)}`;
}

/**
 * The label on the picture: "alice 87%", "probably alice 64%", "unknown (nearest: bob)" or "unknown". A
 * stranger nobody is near to (`no_match`) is plain "unknown" there: in a crowd, a label per face naming someone far
 * away is noise over the picture (the list and the cards still say who was nearest).
 */
export function overlayText(face: ShownFace): string {
  if (isKnown(face)) return `${nameText(face)} ${percent(face.confidence)}`;
  const nearest = reasonOf(face) === 'no_match' ? null : candidateText(face);
  return nearest ? `unknown (${nearest})` : 'unknown';
}
