/** What every object detector returns, in the wire shape of `POST /api/objects/detect` (docs/ARCHITECTURE.md#wire-contract). */
import type { ObjectClassName } from './classes.js';
import { countBy } from '../count.js';

export interface DetectedObject {
  /** Index into OBJECT_CLASSES (COCO order). */
  class_id: number;
  class_name: ObjectClassName;
  /** Detector score, 0..1. */
  confidence: number;
  /** Integer box in pixels of the submitted image, top-left corner plus size, clipped to the image. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Count per class name, e.g. `{ person: 2, cup: 1 }`; classes with no object are absent. */
export function summarize(objects: readonly { class_name: string }[]): Record<string, number> {
  return countBy(objects, (o) => o.class_name);
}
