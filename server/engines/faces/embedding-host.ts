/**
 * The embedding worker as the API holds it (#38 2): started on the first job that needs its nets (a recognition
 * with the embedding recognizer, a sighting's or a training's descriptors) and let go after ENGINE_IDLE_RELEASE_S
 * without one. The model and the corrections given to it are kept and given to each worker it starts.
 *
 * What the recognizer is (its descriptor model, the nets' versions that tag stored descriptors) is known without
 * loading it: from the settings and the installed packages; a missing weight file is found at start. The load
 * itself says the rest (`loadMs`, the cohort), and a load that fails makes the recognizer unavailable.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DEFAULT_DESCRIPTOR_MODEL, type DescriptorModelId } from '../../../shared/embedding/descriptor-models.js';
import { LANDMARK_MODEL, RECOGNITION_MODEL } from '../../../shared/embedding/engine.js';
import { FACERES_MODEL_FILE } from '../../../shared/embedding/faceres.js';
import type { ArgsOf, OpName, ResultOf } from '../../../shared/recognition/worker-messages.js';
import type { Logger } from '../../logger.js';
import { type EnginePool, LazyWorkerPool, type LazyPoolState } from '../workers/lazy-pool.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { EmbeddingAvailability } from './embedding-node.js';
import type { EmbeddingOps, EmbeddingWorkerData } from './embedding-protocol.js';

export interface EmbeddingHostOptions {
  data: EmbeddingWorkerData;
  /** Let the worker go after this long without a job, ms; 0: keep it once started (ENGINE_IDLE_RELEASE_S). */
  idleReleaseMs: number;
  log: Logger;
}

/** `error`: the last load failed (the recognizer is unavailable until a restart). */
export type EmbeddingHostState = LazyPoolState | 'error';

const require = createRequire(import.meta.url);

/** face-api's and its tfjs's versions, as the loaded bundle reports them (`version`, `tf.version_core`). */
function installedVersions(): { faceapi: string; tfjs: string } | undefined {
  try {
    const bundle = require.resolve('@vladmandic/face-api/dist/face-api.node-wasm.js');
    const faceapi = JSON.parse(readFileSync(path.join(path.dirname(bundle), '../package.json'), 'utf8')) as { version: string };
    const tfjs = JSON.parse(readFileSync(require.resolve('@tensorflow/tfjs-core/package.json'), 'utf8')) as { version: string };
    return { faceapi: faceapi.version, tfjs: tfjs.version };
  } catch {
    return undefined;
  }
}

/** The weight files the worker will read, missing ones first (empty when all are there). */
function missingWeights(data: EmbeddingWorkerData, descriptor: DescriptorModelId): string[] {
  const files = [path.join(data.modelDir, `${LANDMARK_MODEL}-weights_manifest.json`)];
  if (descriptor === 'faceres-1024') files.push(path.join(data.descriptorDir ?? path.dirname(data.modelDir), FACERES_MODEL_FILE));
  else files.push(path.join(data.modelDir, `${RECOGNITION_MODEL}-weights_manifest.json`));
  return files.filter((f) => !existsSync(f));
}

export class EmbeddingHost implements EnginePool<EmbeddingOps> {
  readonly name = 'embedding';
  private readonly pool: LazyWorkerPool<EmbeddingOps>;
  private known: EmbeddingAvailability;
  private failed = false;
  /** Faces described by workers already let go (`described` counts since the start, across workers). */
  private describedBefore = 0;

  constructor(private readonly opts: EmbeddingHostOptions) {
    const descriptorModel = opts.data.descriptor ?? DEFAULT_DESCRIPTOR_MODEL;
    const missing = missingWeights(opts.data, descriptorModel);
    const versions = installedVersions();
    this.failed = missing.length > 0;
    this.known = this.failed
      ? { available: false, reason: `missing weight file ${missing[0]}`, loadMs: 0, descriptorModel }
      : { available: true, loadMs: 0, backend: 'wasm', descriptorModel, ...(versions ? { versions } : {}) };
    this.pool = new LazyWorkerPool<EmbeddingOps>({
      name: 'embedding',
      script: 'faces/embedding-worker',
      data: opts.data,
      size: 1,
      idleReleaseMs: opts.idleReleaseMs,
      onLoad: (pool) => this.onLoad(pool),
      onRelease: async (pool) => {
        this.describedBefore += await pool.run('described', undefined);
        await pool.run('dispose', undefined);
      },
      log: (message) => opts.log.info(message),
    });
  }

  /** What the recognizer is: known at start, completed by each load. */
  get availability(): EmbeddingAvailability {
    return this.known;
  }

  /** Times the worker was started since the start (concurrent first jobs share one). */
  get loads(): number {
    return this.pool.starts;
  }

  get state(): EmbeddingHostState {
    return this.failed ? 'error' : this.pool.state;
  }

  get queueLength(): number {
    return this.pool.queueLength;
  }

  private async onLoad(pool: WorkerPool<EmbeddingOps>): Promise<void> {
    const { cohortFaces, cohortProblem, ...availability } = await pool.run('status', undefined);
    this.known = availability;
    if (!availability.available) {
      this.failed = true;
      this.opts.log.warn(`embedding recognizer unavailable: ${availability.reason}`);
      return;
    }
    this.opts.log.info(`embedding recognizer loaded in ${Math.round(availability.loadMs)} ms (${availability.backend})`);
    // Without its cohort the embedding recognizer holds everyone to the sure bound (stricter): say why.
    if (cohortProblem)
      this.opts.log.warn(`embedding recognizer: no background cohort, so every person is held to the sure limit (${cohortProblem})`);
    else this.opts.log.info(`embedding recognizer: background cohort of ${cohortFaces ?? 0} faces`);
  }

  async run<K extends OpName<EmbeddingOps>>(
    op: K,
    args: ArgsOf<EmbeddingOps, K>,
    transfer?: ArrayBuffer[],
  ): Promise<ResultOf<EmbeddingOps, K>> {
    // Counting needs no nets: a worker that is not running has described nothing since it was let go.
    if (op === 'described' && this.pool.state === 'not_loaded') return this.describedBefore as ResultOf<EmbeddingOps, K>;
    const result = await this.pool.run(op, args, transfer);
    return (op === 'described' ? this.describedBefore + (result as number) : result) as ResultOf<EmbeddingOps, K>;
  }

  broadcast<K extends OpName<EmbeddingOps>>(op: K, args: ArgsOf<EmbeddingOps, K>): Promise<void> {
    return this.pool.broadcast(op, args);
  }

  onJob(listener: (op: string, seconds: number) => void): void {
    this.pool.onJob(listener);
  }

  /** Lets the worker go now when it is idle (what the idle time does). */
  release(): Promise<void> {
    return this.pool.release();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
