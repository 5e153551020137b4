/**
 * The embedding worker's operations (face-api nets on tfjs WASM). It runs apart from the cascade workers:
 * loading tfjs into a thread slowed the cascade in that thread by about a fifth, and one embedding thread is
 * enough on an edge box.
 */
import type { EmbeddingModel } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import type { DistanceWindow } from '../../../shared/recognition/confidence.js';
import type { Recognition, Trained } from '../../../shared/recognition/pipeline.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { EmbeddingAvailability } from './embedding-node.js';

export interface EmbeddingWorkerData {
  modelDir: string;
}

export interface EmbeddingOps {
  status: { args: void; result: EmbeddingAvailability };
  /** Descriptors of the given faces, in order. */
  describe: { args: { rgb: RgbImage; boxes: Rect[] }; result: Float32Array[] };
  /** Names each given face with the worker's current model. */
  recognize: { args: { rgb: RgbImage; boxes: Rect[]; window: DistanceWindow }; result: Recognition };
  setModel: { args: Trained<EmbeddingModel> | null; result: void };
}

export type EmbeddingPool = WorkerPool<EmbeddingOps>;
