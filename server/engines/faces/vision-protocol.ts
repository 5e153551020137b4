/**
 * Messages between the API thread and the vision workers (Haar cascade + LBPH). Pixels travel as transferred
 * ArrayBuffers (no copy); models travel as structured clones once per training run.
 */
import type { GrayImage, Rect } from '../../../shared/image/types.js';
import type { LbphModel } from '../../../shared/lbph/lbph.js';

export interface VisionWorkerData {
  cascadeXml: string;
  cascade: { scaleFactor: number; minNeighbors: number; minSize: number };
}

/** A face box with the recognizer's nearest label id and distance (null when no model is loaded). */
export interface RecognizedBox {
  box: Rect;
  labelId: number | null;
  distance: number | null;
}

export type VisionJob =
  | { op: 'detect'; gray: GrayImage }
  /** Detects (or takes the given boxes) and predicts each face with the worker's current LBPH model. */
  | { op: 'recognize'; gray: GrayImage; boxes?: Rect[] }
  /** Detects (or takes the given boxes), keeps the largest face, and returns it with its LBPH histogram. */
  | { op: 'trainSample'; gray: GrayImage; boxes?: Rect[] }
  | { op: 'setModel'; model: LbphModel | null; version: number };

export type VisionResult =
  | { op: 'detect'; boxes: Rect[] }
  /** `modelVersion`: the model the worker predicted with (0: none), so ids map to the right names. */
  | { op: 'recognize'; faces: RecognizedBox[]; modelVersion: number }
  | { op: 'trainSample'; boxes: Rect[]; face: Rect | null; histogram: Float32Array | null }
  | { op: 'setModel' };
