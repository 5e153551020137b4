/**
 * The embedding worker's operations (face-api nets on tfjs WASM). It runs apart from the cascade workers:
 * loading tfjs into a thread slowed the cascade in that thread by about a fifth, and one embedding thread is
 * enough on an edge box.
 */
import type { DescriptorModelId } from '../../../shared/embedding/descriptor-models.js';
import type { EmbeddingModel } from '../../../shared/embedding/matcher.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import type { Negatives } from '../../../shared/recognition/corrections.js';
import type { DecisionRule } from '../../../shared/recognition/decision.js';
import type { Recognition, Trained } from '../../../shared/recognition/pipeline.js';
import type { EnginePool } from '../workers/lazy-pool.js';
import type { EmbeddingAvailability } from './embedding-node.js';

export interface EmbeddingWorkerData {
  /** The face-api model folder (landmarks; the faceapi-128 descriptor net). */
  modelDir: string;
  /** The descriptor model (EMBEDDING_DESCRIPTOR); `faceapi-128` when absent. */
  descriptor?: DescriptorModelId;
  /** Folder with faceres.json/.bin; defaults to the folder above `modelDir`. */
  descriptorDir?: string;
  /** Folder with the background cohorts (`<descriptor>.f32`); defaults to `cohort/` beside faceres.json. */
  cohortDir?: string;
}

/**
 * What became of a model given to `setModel`: a model whose descriptors come from another descriptor model
 * (another length) is refused, with the reason (train again), and the recognizer answers as untrained.
 */
export interface EmbeddingModelInstall {
  installed: boolean;
  reason?: string;
}

export interface EmbeddingOps {
  status: { args: void; result: EmbeddingAvailability & { cohortFaces?: number; cohortProblem?: string } };
  /** Descriptors of the given faces, in order. */
  describe: { args: { rgb: RgbImage; boxes: Rect[] }; result: Float32Array[] };
  /**
   * 128-d descriptors of the given faces for grouping unknown faces (server/review/review-groups.ts), or null when
   * this worker's own descriptors are those (`faceapi-128`): `describe` serves then. A `faceres-1024` worker loads
   * face-api's descriptor net for it on first use (about 6 MB of weights).
   */
  describeForGrouping: { args: { rgb: RgbImage; boxes: Rect[] }; result: Float32Array[] | null };
  /** How many faces this worker has described since it started (recognitions' and `describe`'s alike). */
  described: { args: void; result: number };
  /**
   * Names each given face with the worker's current model; with its faces' descriptors (Recognition.descriptors, of
   * `descriptorModel`) when any were computed.
   */
  recognize: { args: { rgb: RgbImage; boxes: Rect[]; rule: DecisionRule }; result: Recognition & { descriptorModel: DescriptorModelId } };
  setModel: { args: Trained<EmbeddingModel> | null; result: EmbeddingModelInstall };
  /** The embedding corrections ("not this person" descriptors by label name), applied by recognize. */
  setNegatives: { args: Negatives; result: void };
  /** Frees the nets before the worker is let go (#38 2). */
  dispose: { args: void; result: void };
}

/** The embedding worker as its callers use it: a WorkerPool, or the API's lazily started EmbeddingHost (embedding-host.ts). */
export type EmbeddingPool = EnginePool<EmbeddingOps> & {
  /** What the recognizer is, said without loading it (EmbeddingHost); absent: ask the worker's `status`. */
  readonly availability?: EmbeddingAvailability;
};
