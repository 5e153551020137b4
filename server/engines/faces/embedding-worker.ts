/**
 * The embedding worker thread: face-api's landmark and descriptor nets (shared/embedding) on tfjs WASM, in
 * the shared recognition pipeline. Jobs arrive one at a time (the pool waits for each reply), so async jobs
 * never interleave.
 */
import path from 'node:path';
import { workerData } from 'node:worker_threads';
import { DEFAULT_DESCRIPTOR_MODEL, GROUPING_DESCRIPTOR_MODEL } from '../../../shared/embedding/descriptor-models.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { refuseOtherDescriptorModel } from '../../../shared/embedding/model-check.js';
import { cohortSize } from '../../../shared/recognition/cohort.js';
import { FacePipeline, type Describe } from '../../../shared/recognition/pipeline.js';
import { serveOps } from '../workers/worker-host.js';
import { readCohortFile } from './cohort-file.js';
import { NodeEmbeddingEngine } from './embedding-node.js';
import type { EmbeddingOps, EmbeddingWorkerData } from './embedding-protocol.js';

const config = workerData as EmbeddingWorkerData;
const descriptor = config.descriptor ?? DEFAULT_DESCRIPTOR_MODEL;
const engine = new NodeEmbeddingEngine({
  modelDir: config.modelDir,
  descriptor,
  ...(config.descriptorDir ? { descriptorDir: config.descriptorDir } : {}),
});
const loaded = engine.load();
/** Faces described since this worker started (the nets are the costly part: tests and measurements count them). */
let described = 0;
const describe: Describe = async (rgb, boxes) => {
  if (!boxes.length) return [];
  described += boxes.length;
  return engine.describeFaces(rgb, boxes);
};

// #36 1: grouping is tuned on face-api's 128-d descriptor; another model's worker keeps a second engine for it,
// loaded on the first face to group (the landmark net is loaded twice: a few hundred KB).
let groupingEngine: NodeEmbeddingEngine | null = null;
const describeForGrouping = async (rgb: RgbImage, boxes: Rect[]): Promise<Float32Array[] | null> => {
  if (descriptor === GROUPING_DESCRIPTOR_MODEL) return null;
  if (!boxes.length) return [];
  groupingEngine ??= new NodeEmbeddingEngine({ modelDir: config.modelDir, descriptor: GROUPING_DESCRIPTOR_MODEL });
  described += boxes.length;
  return groupingEngine.describeFaces(rgb, boxes);
};

// The background cohort of this worker's descriptor model, for the per-person limits (cohort-file.ts).
const { cohort, problem: cohortProblem } = readCohortFile(
  config.cohortDir ?? path.join(config.descriptorDir ?? path.dirname(config.modelDir), 'cohort'),
  descriptor,
);

// No detector here: the boxes come from the cascade workers or the remote engine.
const pipeline = new FacePipeline({ describe, cohort: (dim) => (cohort && cohort.dim === dim ? cohort : null) });

serveOps<EmbeddingOps>({
  status: async () => ({
    ...(await loaded),
    cohortFaces: cohort ? cohortSize(cohort) : 0,
    ...(cohortProblem ? { cohortProblem } : {}),
  }),
  describe: ({ rgb, boxes }) => describe(rgb, boxes),
  describeForGrouping: ({ rgb, boxes }) => describeForGrouping(rgb, boxes),
  described: () => described,
  recognize: async ({ rgb, boxes, rule }) => ({
    ...(await pipeline.recognize({ rgb }, { recognizer: 'embedding', rule, boxes, descriptors: true })),
    descriptorModel: descriptor,
  }),
  setNegatives: (embedding) => pipeline.setNegatives({ embedding }),
  dispose: () => {
    engine.dispose();
    groupingEngine?.dispose();
  },
  setModel: (embedding) => {
    // Descriptors of another model are not comparable: never match against them (the matcher would throw).
    const reason = embedding ? refuseOtherDescriptorModel(embedding.model, descriptor) : null;
    pipeline.setModels({ embedding: reason ? null : embedding });
    return reason ? { installed: false, reason } : { installed: embedding !== null };
  },
});
