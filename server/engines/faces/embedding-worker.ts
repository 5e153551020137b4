/**
 * The embedding worker thread: face-api's landmark and descriptor nets (shared/embedding) on tfjs WASM, plus
 * nearest-descriptor matching. Jobs arrive one at a time (the pool waits for each reply), so async jobs never
 * interleave.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { predictEmbedding, type EmbeddingModel } from '../../../shared/embedding/matcher.js';
import { NodeEmbeddingEngine } from './embedding-node.js';
import type { EmbeddingJob, EmbeddingResult, EmbeddingWorkerData } from './embedding-protocol.js';
import type { WorkerReply } from '../workers/worker-pool.js';

const config = workerData as EmbeddingWorkerData;
const engine = new NodeEmbeddingEngine({ modelDir: config.modelDir });
const loaded = engine.load();
let model: EmbeddingModel | null = null;
let modelVersion = 0;

async function handle(job: EmbeddingJob): Promise<EmbeddingResult> {
  switch (job.op) {
    case 'status':
      return { op: 'status', embedding: await loaded };
    case 'describe':
      return { op: 'describe', descriptors: job.boxes.length ? await engine.describeFaces(job.rgb, job.boxes) : [] };
    case 'recognize': {
      const current = model;
      // Untrained: no descriptor is worth computing.
      const descriptors = current && job.boxes.length ? await engine.describeFaces(job.rgb, job.boxes) : [];
      const faces = job.boxes.map((box, i) => {
        const p = current && descriptors[i] ? predictEmbedding(current, descriptors[i]) : null;
        return p && p.label >= 0 ? { box, labelId: p.label, distance: p.distance } : { box, labelId: null, distance: null };
      });
      return { op: 'recognize', faces, modelVersion };
    }
    case 'setModel':
      model = job.model;
      modelVersion = job.version;
      return { op: 'setModel' };
  }
}

parentPort!.on('message', ({ id, job }: { id: number; job: EmbeddingJob }) => {
  handle(job).then(
    (result) => parentPort!.postMessage({ id, ok: true, result } satisfies WorkerReply<EmbeddingResult>),
    (err: unknown) =>
      parentPort!.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies WorkerReply<EmbeddingResult>),
  );
});
