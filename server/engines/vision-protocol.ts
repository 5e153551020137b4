/**
 * Messages between the API thread and the vision worker threads. Pixels travel as transferred
 * ArrayBuffers (no copy); models travel as structured clones once per training run.
 */
import type { RecognitionModel } from '../../shared/api/contract.js';
import type { EmbeddingModel } from '../../shared/embedding/matcher.js';
import type { GrayImage, Rect, RgbImage } from '../../shared/image/types.js';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import type { EmbeddingAvailability } from './embedding-node.js';

export interface VisionWorkerData {
  cascadeXml: string;
  cascade: { scaleFactor: number; minNeighbors: number; minSize: number };
  /** Folder of the face-api weights; null leaves the embedding recognizer off. */
  embeddingModelDir: string | null;
}

/** A face box with the recognizer's nearest label id and distance (null when no model is loaded). */
export interface RecognizedBox {
  box: Rect;
  labelId: number | null;
  distance: number | null;
}

export type VisionJob =
  | { op: 'detect'; gray: GrayImage }
  /**
   * Detects (or takes the given boxes) and predicts each face with the worker's current model of the given
   * recognizer. `rgb` is required for `embedding` (its network sees colour).
   */
  | { op: 'recognize'; recognizer: RecognitionModel; gray: GrayImage; rgb?: RgbImage; boxes?: Rect[] }
  /**
   * Detects (or takes the given boxes), keeps the largest face, and returns its LBPH histogram and, when `rgb`
   * is given and the embedding recognizer is loaded, its descriptor.
   */
  | { op: 'trainSample'; gray: GrayImage; rgb?: RgbImage; boxes?: Rect[] }
  | { op: 'setModels'; lbph: LbphModel | null; embedding: EmbeddingModel | null; version: number }
  | { op: 'status' };

export type VisionResult =
  | { op: 'detect'; boxes: Rect[] }
  /** `modelVersion`: the models the worker predicted with (0: none), so ids map to the right names. */
  | { op: 'recognize'; faces: RecognizedBox[]; modelVersion: number }
  | { op: 'trainSample'; boxes: Rect[]; histogram: Float32Array | null; descriptor: Float32Array | null }
  | { op: 'setModels' }
  | { op: 'status'; embedding: EmbeddingAvailability };

export type WorkerRequest = { id: number; job: VisionJob };
export type WorkerReply = { id: number; ok: true; result: VisionResult } | { id: number; ok: false; error: string };
