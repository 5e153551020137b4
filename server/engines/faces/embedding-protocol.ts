/**
 * Messages between the API thread and the embedding worker (face-api nets on tfjs WASM). It runs apart from
 * the cascade workers: loading tfjs into a thread slowed the cascade in that thread by about a fifth, and
 * one embedding thread is enough on an edge box.
 */
import type { EmbeddingModel } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import type { EmbeddingAvailability } from './embedding-node.js';
import type { RecognizedBox } from './vision-protocol.js';

export interface EmbeddingWorkerData {
  modelDir: string;
}

export type EmbeddingJob =
  | { op: 'status' }
  /** Descriptors of the given faces, in order. */
  | { op: 'describe'; rgb: RgbImage; boxes: Rect[] }
  /** Nearest label of each face under the worker's current model. */
  | { op: 'recognize'; rgb: RgbImage; boxes: Rect[] }
  | { op: 'setModel'; model: EmbeddingModel | null; version: number };

export type EmbeddingResult =
  | { op: 'status'; embedding: EmbeddingAvailability }
  | { op: 'describe'; descriptors: Float32Array[] }
  | { op: 'recognize'; faces: RecognizedBox[]; modelVersion: number }
  | { op: 'setModel' };
