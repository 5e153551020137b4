/**
 * The embedding worker thread: face-api's landmark and descriptor nets (shared/embedding) on tfjs WASM, in
 * the shared recognition pipeline. Jobs arrive one at a time (the pool waits for each reply), so async jobs
 * never interleave.
 */
import { workerData } from 'node:worker_threads';
import { FacePipeline, type Describe } from '../../../shared/recognition/pipeline.js';
import { serveOps } from '../workers/worker-host.js';
import { NodeEmbeddingEngine } from './embedding-node.js';
import type { EmbeddingOps, EmbeddingWorkerData } from './embedding-protocol.js';

const config = workerData as EmbeddingWorkerData;
const engine = new NodeEmbeddingEngine({ modelDir: config.modelDir });
const loaded = engine.load();
const describe: Describe = async (rgb, boxes) => (boxes.length ? engine.describeFaces(rgb, boxes) : []);
// No detector here: the boxes come from the cascade workers or the remote engine.
const pipeline = new FacePipeline({ describe });

serveOps<EmbeddingOps>({
  status: () => loaded,
  describe: ({ rgb, boxes }) => describe(rgb, boxes),
  recognize: ({ rgb, boxes, window }) => pipeline.recognize({ rgb }, { recognizer: 'embedding', window, boxes }),
  setModel: (embedding) => pipeline.setModels({ embedding }),
});
