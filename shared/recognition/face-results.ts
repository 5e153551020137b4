/**
 * From a recognizer's raw answer to the API's face result, one implementation for the server's
 * `POST /api/recognize` and the browser's in-page engine, so both name the same face the same way:
 * the nearest label id and its distance go through the active window (`decide`), the id becomes the
 * trained model's label name, and `distance` is reported rounded to 4 decimals. Every `unknown` face says why
 * (`reason`, see confidence.ts).
 */
import type { FaceResult } from '../api/index.js';
import type { Rect } from '../image/types.js';
import { decide, type DistanceWindow } from './confidence.js';

/** A face box with the recognizer's nearest label id and distance (both null when no model was used). */
export interface RecognizedBox {
  box: Rect;
  labelId: number | null;
  distance: number | null;
}

/** Label id -> name. */
export type LabelNames = ReadonlyMap<number, string>;

/** The inverse of a `name -> id` map (model.pickle's and the trainer's shape). */
export function namesFromLabelIds(labelIds: Readonly<Record<string, number>>): Map<number, string> {
  return new Map(Object.entries(labelIds).map(([name, id]) => [id, name]));
}

/**
 * One face of a recognize response. `names` is null when the recognizer had no trained model: the face is
 * `unknown` (`not_trained`) with no distance; when the recognizer found no label it is `no_match`, also without one.
 */
export function toFaceResult(face: RecognizedBox, names: LabelNames | null, window: DistanceWindow): FaceResult {
  const { box, labelId, distance } = face;
  const out: FaceResult = { x: box.x, y: box.y, w: box.width, h: box.height, label: 'unknown', confidence: 0 };
  if (!names) return { ...out, reason: 'not_trained' };
  if (labelId === null || distance === null) return { ...out, reason: 'no_match' };
  out.distance = Math.round(distance * 10_000) / 10_000;
  const decision = decide(distance, window);
  const name = names.get(labelId);
  if (!decision.known) return { ...out, reason: decision.reason };
  // An id the model has no name for (never written by our trainer): nobody to name.
  if (name === undefined) return { ...out, reason: 'no_match' };
  return { ...out, label: name, confidence: decision.confidence };
}
