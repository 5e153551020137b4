/**
 * From a recognizer's ranking of the nearest people to the API's face results, one implementation for the
 * server's `POST /api/recognize` and the browser's in-page engine, so both name the same faces the same way:
 * the faces of one picture are decided together (decision.ts: the rule, the margin, one name per face), ids become
 * the trained model's label names, and distances are reported rounded to 4 decimals. Every `unknown` face says why
 * (`reason`) and, when someone was near, who (`candidate`).
 */
import type { FaceCandidate, FaceResult } from '../api/index.js';
import type { Rect } from '../image/types.js';
import { assignNames, type DecisionRule, type FaceDecision, type FaceEvidence } from './decision.js';
import type { PersonDistance } from './ranking.js';

/** A face box with the recognizer's nearest people (null when no model was used). */
export interface RecognizedBox {
  box: Rect;
  ranked: PersonDistance[] | null;
  /** What the host measured of the face besides its ranking: quality, nearest cohort face (decision.ts). */
  evidence?: FaceEvidence;
}

/** Label id -> name. */
export type LabelNames = ReadonlyMap<number, string>;

/** The inverse of a `name -> id` map (model.pickle's and the trainer's shape). */
export function namesFromLabelIds(labelIds: Readonly<Record<string, number>>): Map<number, string> {
  return new Map(Object.entries(labelIds).map(([name, id]) => [id, name]));
}

const round4 = (v: number) => Math.round(v * 10_000) / 10_000;

function toFaceResult(box: Rect, decision: FaceDecision, names: LabelNames): FaceResult {
  const out: FaceResult = { x: box.x, y: box.y, w: box.width, h: box.height, label: 'unknown', confidence: 0 };
  if (decision.known) {
    const name = names.get(decision.labelId);
    // An id the model has no name for (never written by our trainer): nobody to name.
    if (name === undefined) return { ...out, distance: round4(decision.distance), reason: 'no_match' };
    return { ...out, label: name, confidence: decision.confidence, distance: round4(decision.distance), certainty: decision.certainty };
  }
  const c = decision.candidate;
  const candidateName = c ? names.get(c.labelId) : undefined;
  const candidate: FaceCandidate | undefined =
    c && candidateName !== undefined ? { label: candidateName, confidence: c.confidence, distance: round4(c.distance) } : undefined;
  return {
    ...out,
    ...(c ? { distance: round4(c.distance) } : {}),
    reason: decision.reason,
    ...(candidate ? { candidate } : {}),
  };
}

/**
 * The faces of one picture as the API answers them. `names` is null when the recognizer had no trained model:
 * every face is `unknown` (`not_trained`) with no distance.
 */
export function faceResults(faces: readonly RecognizedBox[], names: LabelNames | null, rule: DecisionRule): FaceResult[] {
  if (!names)
    return faces.map(({ box }) => ({
      x: box.x,
      y: box.y,
      w: box.width,
      h: box.height,
      label: 'unknown',
      confidence: 0,
      reason: 'not_trained',
    }));
  const decisions = assignNames(
    faces.map((f) => f.ranked ?? []),
    rule,
    faces.map((f) => f.evidence),
  );
  return faces.map((f, i) => toFaceResult(f.box, decisions[i], names));
}
