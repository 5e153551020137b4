/**
 * Which face models are current (face-service.ts): the active detection engine and recognizer, the trained models
 * every worker holds, and the snapshot of their files devices download. Loads the saved models at start, follows
 * the ones other replicas save (the file-signature watch) and publishes each new set whole.
 */
import type { DetectionMethod, RecognitionModel, RecognizerStatus, TrainStatusResponse } from '../../../shared/api/index.js';
import type { EmbeddingModel } from '../../../shared/embedding/matcher.js';
import { refuseOtherDescriptorModel } from '../../../shared/embedding/model-check.js';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import type { LbphModel } from '../../../shared/lbph/lbph.js';
import { trained } from '../../../shared/recognition/model-files.js';
import type { FaceModels, Trained } from '../../../shared/recognition/pipeline.js';
import { ApiError } from '../../http/errors.js';
import { type SourceId, YamlSuperseded } from '../../storage/model-store.js';
import { EMPTY_SNAPSHOT, type LbphSource, makeSnapshot, type TrainedFiles, type TrainedSnapshot } from '../../storage/trained-files.js';
import type { EmbeddingAvailability } from './embedding-node.js';
import type { FaceServiceOptions } from './face-service.js';

/** `lbphSource`: the model training.yml holds, in memory (what the kiosk's compact segments are made from). */
function snapshotOf(
  files: TrainedFiles,
  lbph: Trained<unknown> | null,
  embedding: Trained<unknown> | null,
  lbphSource: LbphSource | null,
  written?: Promise<unknown>,
): TrainedSnapshot {
  const labels = [...(lbph?.names.values() ?? []), ...(embedding?.names.values() ?? [])];
  return makeSnapshot(files, labels, [lbph?.trainedAt, embedding?.trainedAt], lbphSource, written);
}

/** Saved models as loaded, with what their snapshot is made of. */
interface LoadedModels {
  lbph: Trained<LbphModel> | null;
  embedding: Trained<EmbeddingModel> | null;
  snapshot: TrainedSnapshot;
  files: TrainedFiles;
  lbphSource: LbphSource | null;
  /** training.lbph's identity when training.yml is still to be written from it (a crash came first). */
  yamlDue: SourceId | null;
}

/** What the model state asks of the training (face-trainer.ts), which it does not own. */
export interface TrainingHooks {
  /** True while a training runs here: the models are its to install. */
  running(): boolean;
  /** Records why the recognizers need training (the training status's `last_error`). */
  failed(error: NonNullable<TrainStatusResponse['last_error']>): void;
}

export class FaceModelState {
  /** The models every worker holds (each worker's copy carries the names, so its answers are already named). */
  private installed: FaceModels = { lbph: null, embedding: null };
  private startStatus: EmbeddingAvailability = { available: false, reason: 'still loading', loadMs: 0 };
  /** The worker's own word when it says without loading (the API's EmbeddingHost, #38 2), else what init asked. */
  private get embeddingStatus(): EmbeddingAvailability {
    return this.opts.embedding?.availability ?? this.startStatus;
  }
  private snapshot: TrainedSnapshot = EMPTY_SNAPSHOT;
  /** The model files' stat signature the installed models were read from (ModelStore.filesSignature). */
  private signature = '';
  /** Counts installs, so a reload that loaded before a training installed does not go back to older models. */
  private generation = 0;
  private watcher: NodeJS.Timeout | null = null;
  /** The training.yml write in progress (off the training's path), to give up when a newer model is published. */
  private yamlWrite: { cancel(): void } | null = null;
  private readonly publishListeners = new Set<(snapshot: TrainedSnapshot) => void>();
  detectionMethod: DetectionMethod;
  recognitionModel: RecognitionModel;

  constructor(
    private readonly opts: FaceServiceOptions,
    private readonly training: TrainingHooks,
  ) {
    this.detectionMethod = opts.detectionMethod;
    this.recognitionModel = opts.recognitionModel;
  }

  /** The models every worker holds now. */
  get current(): FaceModels {
    return this.installed;
  }

  /** Reads the model files' signature again once a training here saved them (the watch then sees no change). */
  async readSignature(): Promise<void> {
    this.signature = await this.opts.models.filesSignature().catch(() => '');
  }

  /**
   * Waits for the workers' recognizers to load, then loads the saved models, if any, into every worker. A broken
   * model file is logged and ignored (the next training replaces it), not fatal.
   */
  async init(): Promise<void> {
    if (this.opts.embedding?.availability) {
      // Loaded on first use: the host logs the load and the cohort then.
    } else if (this.opts.embedding) {
      const status = await this.opts.embedding.run('status', undefined);
      const { cohortFaces, cohortProblem, ...availability } = status;
      this.startStatus = availability;
      // Without its cohort the embedding recognizer holds everyone to the sure bound (stricter): say why.
      if (availability.available && cohortProblem)
        this.opts.log.warn(`embedding recognizer: no background cohort, so every person is held to the sure limit (${cohortProblem})`);
      else if (availability.available) this.opts.log.info(`embedding recognizer: background cohort of ${cohortFaces ?? 0} faces`);
    } else {
      this.startStatus = { available: false, reason: 'switched off (EMBEDDING_ENABLED=false)', loadMs: 0 };
    }
    if (this.embeddingStatus.available && this.opts.embedding?.availability) {
      this.opts.log.info('embedding recognizer: loads on first use');
    } else if (this.embeddingStatus.available) {
      this.opts.log.info(`embedding recognizer loaded in ${Math.round(this.embeddingStatus.loadMs)} ms (${this.embeddingStatus.backend})`);
    } else {
      this.opts.log.warn(`embedding recognizer unavailable: ${this.embeddingStatus.reason}`);
    }
    if (this.recognitionModel === 'embedding' && !this.embeddingStatus.available) {
      this.opts.log.warn('RECOGNITION_MODEL=embedding but the embedding recognizer is unavailable; starting with lbph');
      this.recognitionModel = 'lbph';
    }

    const signature = await this.opts.models.filesSignature();
    const loaded = await this.loadSaved();
    const { lbph, embedding } = loaded;
    // Only files that loaded are offered for download: a browser gets what this server itself runs.
    this.publishLoaded(loaded);
    this.signature = signature;
    if (lbph || embedding) {
      await this.install(lbph, embedding);
      this.opts.log.info(
        `loaded models: lbph ${lbph ? `${lbph.names.size} labels` : 'none'}, embedding ${embedding ? `${embedding.names.size} labels` : 'none'}`,
      );
    }
  }

  /** The saved models and the snapshot of the files that loaded; a broken file is logged and left out. */
  private async loadSaved(): Promise<LoadedModels> {
    let lbph: Trained<LbphModel> | null = null;
    let embedding: Trained<EmbeddingModel> | null = null;
    const files: TrainedFiles = { lbph: null, labelMap: null, embedding: null };
    let lbphSource: LbphSource | null = null;
    let yamlDue: SourceId | null = null;
    try {
      const stored = await this.opts.models.loadLbph();
      if (stored) {
        lbph = trained(stored, stored.trainedAt);
        lbphSource = { model: stored.model, labelIds: stored.labelIds };
        files.lbph = stored.files.lbph;
        files.lbphSource = stored.source;
        files.labelMap = stored.files.labelMap;
        if (stored.source && !stored.files.lbph) yamlDue = stored.source;
      }
    } catch (err) {
      this.opts.log.error(`the saved LBPH model could not be loaded and is ignored until the next training: ${String(err)}`);
    }
    try {
      const stored = await this.opts.models.loadEmbedding();
      if (stored) {
        embedding = trained(stored, stored.trainedAt);
        files.embedding = stored.bytes;
      }
    } catch (err) {
      this.opts.log.error(`the saved embedding model could not be loaded and is ignored until the next training: ${String(err)}`);
    }
    return { lbph, embedding, snapshot: snapshotOf(files, lbph, embedding, lbphSource), files, lbphSource, yamlDue };
  }

  private publishLoaded(loaded: LoadedModels): void {
    // Expected after a person's deletion (training.yml goes at once, written again from the new model), and after a
    // stop before a training's training.yml was written: neither is a fault.
    if (loaded.yamlDue)
      this.opts.log.info('training.yml is behind the saved model (a person deleted, or a stop before it was written); writing it now');
    this.publish(loaded.files, loaded.lbph, loaded.embedding, loaded.lbphSource, loaded.yamlDue);
  }

  /**
   * Makes `files` the snapshot devices download. When training.yml is still to be written from training.lbph
   * (`yamlDue`), it is written now in the background and the snapshot says so (`written`: downloads of this
   * version wait for it), then published again with it; a later publish gives that write up.
   */
  publish(
    files: TrainedFiles,
    lbph: Trained<unknown> | null,
    embedding: Trained<unknown> | null,
    lbphSource: LbphSource | null,
    yamlDue: SourceId | null,
  ): void {
    this.yamlWrite?.cancel();
    this.yamlWrite = null;
    if (!yamlDue || !lbphSource) {
      this.setSnapshot(snapshotOf(files, lbph, embedding, lbphSource));
      return;
    }
    let cancelled = false;
    const handle = {
      cancel() {
        cancelled = true;
      },
    };
    const started = Date.now();
    const write = this.opts.models.writeYaml(lbphSource.model, lbphSource.labelIds, yamlDue, { cancelled: () => cancelled });
    const pending = snapshotOf(files, lbph, embedding, lbphSource, write);
    this.yamlWrite = handle;
    this.setSnapshot(pending);
    write
      .then(
        (file) => {
          if (this.snapshot === pending) this.setSnapshot(snapshotOf({ ...files, lbph: file }, lbph, embedding, lbphSource));
          this.opts.log.info(`training.yml written in ${Date.now() - started} ms, after the training answered`);
        },
        (err) => {
          if (err instanceof YamlSuperseded) return;
          // The model stays in use (training.lbph has it); only the YAML download is missing until a restart writes it.
          this.opts.log.error(`writing training.yml failed; it is written again at the next start or training: ${String(err)}`);
          if (this.snapshot === pending) this.setSnapshot(snapshotOf(files, lbph, embedding, lbphSource));
        },
      )
      .finally(() => {
        if (this.yamlWrite === handle) this.yamlWrite = null;
      });
  }

  private setSnapshot(snapshot: TrainedSnapshot): void {
    this.snapshot = snapshot;
    for (const listener of this.publishListeners) {
      try {
        listener(snapshot);
      } catch (err) {
        this.opts.log.warn(`a listener of the published models failed: ${String(err)}`);
      }
    }
  }

  /**
   * Calls `listener` with every snapshot published from now on (a training, a deletion's rewrite, another replica's
   * models, and again once a version's training.yml is written): what devices get made from the models can be
   * prepared then, in the background, rather than at the first request. Returns the unsubscribe.
   */
  onPublish(listener: (snapshot: TrainedSnapshot) => void): () => void {
    this.publishListeners.add(listener);
    return () => this.publishListeners.delete(listener);
  }

  /**
   * The snapshot with its training.yml: the current one, once a training.yml write in progress for it is done
   * (a download of training.yml, or of anything versioned with it, waits for the write rather than miss it).
   */
  async writtenFiles(): Promise<TrainedSnapshot> {
    for (;;) {
      const snapshot = this.snapshot;
      if (!snapshot.written) return snapshot;
      await snapshot.written.catch(() => undefined);
      // Settled: published again with the file (or a newer training published meanwhile).
      if (this.snapshot === snapshot) return snapshot;
    }
  }

  /**
   * Follows trainings made by other API replicas on the same DATA_DIR: every `intervalMs`, a stat of the model
   * files; when they changed (and no training runs here), they are loaded with the start-up path and, when their
   * content version differs from the one in use, installed in every worker.
   */
  watchModels(intervalMs: number): void {
    this.stopWatching();
    let busy = false;
    this.watcher = setInterval(() => {
      if (busy || this.training.running()) return;
      busy = true;
      void this.reloadIfChanged()
        .catch((err) => this.opts.log.warn(`checking the saved models for changes failed: ${String(err)}`))
        .finally(() => {
          busy = false;
        });
    }, intervalMs);
    this.watcher.unref();
  }

  stopWatching(): void {
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = null;
  }

  /** Loads and installs the saved models when the files changed on disk; true when a new version was installed. */
  async reloadIfChanged(): Promise<boolean> {
    const signature = await this.opts.models.filesSignature();
    if (signature === this.signature) return false;
    const generation = this.generation;
    const loaded = await this.loadSaved();
    const { lbph, embedding, snapshot } = loaded;
    // A training here (or another reload) got in first: its models are at least as new; look again next tick.
    if (this.training.running() || generation !== this.generation) return false;
    this.signature = signature;
    if (snapshot.version === this.snapshot.version) {
      // The same model files, trained again elsewhere (byte-identical LBPH): only the training's time moved.
      this.adoptTrainingTimes(lbph, embedding, snapshot);
      return false;
    }
    this.publishLoaded(loaded);
    await this.install(lbph, embedding);
    this.opts.log.info(
      `loaded models saved by another replica (version ${snapshot.version ?? 'none'}): lbph ${lbph ? `${lbph.names.size} labels` : 'none'}, embedding ${embedding ? `${embedding.names.size} labels` : 'none'}`,
    );
    return true;
  }

  /**
   * Takes the training times of saved models whose files are those installed, so that every replica reports the
   * same `trained_at` (and so the same trained detection method, #29) after another replica retrained identically.
   */
  private adoptTrainingTimes(lbph: Trained<LbphModel> | null, embedding: Trained<EmbeddingModel> | null, snapshot: TrainedSnapshot): void {
    const retimed = <M>(installed: Trained<M> | null, saved: Trained<unknown> | null): Trained<M> | null =>
      installed && saved?.trainedAt && installed.trainedAt !== saved.trainedAt ? { ...installed, trainedAt: saved.trainedAt } : installed;
    this.installed = { lbph: retimed(this.installed.lbph, lbph), embedding: retimed(this.installed.embedding, embedding) };
    if (snapshot.trainedAt !== this.snapshot.trainedAt)
      this.setSnapshot(Object.freeze({ ...this.snapshot, trainedAt: snapshot.trainedAt }));
  }

  get trained(): boolean {
    return this.installed[this.recognitionModel] !== null;
  }

  /** Labels the active recognizer knows. */
  get trainedLabels(): Set<string> {
    return new Set(this.installed[this.recognitionModel]?.names.values() ?? []);
  }

  /**
   * The trained model files for download, with their content version. Replaced as a whole when a training
   * saved new files, so one read of this property never mixes two trainings.
   */
  get trainedFiles(): TrainedSnapshot {
    return this.snapshot;
  }

  get embeddingAvailability(): EmbeddingAvailability {
    return this.embeddingStatus;
  }

  recognizerStatus(): RecognizerStatus {
    const of = (t: Trained<unknown> | null) => ({ trained: t !== null, trained_at: t?.trainedAt ?? null, labels: t?.names.size ?? 0 });
    return { lbph: of(this.installed.lbph), embedding: of(this.installed.embedding) };
  }

  /** Why a detection method cannot be selected now, or null when it can. */
  detectionUnavailable(method: DetectionMethod): string | null {
    return method === 'remote' ? this.opts.remote.unavailableReason : null;
  }

  /** Why a recognition model cannot be selected now, or null when it can. */
  recognitionUnavailable(model: RecognitionModel): string | null {
    if (model === 'embedding' && !this.embeddingStatus.available) {
      return `the embedding recognizer could not be loaded: ${this.embeddingStatus.reason ?? 'unknown reason'}`;
    }
    return null;
  }

  /** Selects the detection engine for every later recognize and train; 409 when it is not available. */
  setDetectionMethod(method: DetectionMethod): void {
    const reason = this.detectionUnavailable(method);
    if (reason) throw new ApiError('model_unavailable', `detection method "${method}" is not available: ${reason}`);
    if (method !== this.detectionMethod) this.opts.log.info(`detection method: ${this.detectionMethod} -> ${method}`);
    this.detectionMethod = method;
  }

  /** Selects the recognizer for every later recognize; 409 when it is not available. */
  setRecognitionModel(model: RecognitionModel): void {
    const reason = this.recognitionUnavailable(model);
    if (reason) throw new ApiError('model_unavailable', `recognition model "${model}" is not available: ${reason}`);
    if (model !== this.recognitionModel) this.opts.log.info(`recognition model: ${this.recognitionModel} -> ${model}`);
    this.recognitionModel = model;
  }

  /** Boxes from the remote engine, or undefined to let the worker run the local cascade. */
  async remoteBoxes(method: DetectionMethod, rgb: RgbImage): Promise<Rect[] | undefined> {
    return method === 'remote' ? this.opts.remote.detect(rgb) : undefined;
  }

  async install(lbph: Trained<LbphModel> | null, embedding: Trained<EmbeddingModel> | null): Promise<void> {
    this.generation++;
    // A model made with another descriptor model (EMBEDDING_DESCRIPTOR changed since its training) is never mixed
    // with this one's descriptors: the embedding recognizer answers as untrained, and the training status says why.
    const running = this.embeddingStatus.descriptorModel;
    const refusal = embedding && running ? refuseOtherDescriptorModel(embedding.model, running) : null;
    if (refusal) {
      this.opts.log.warn(`embedding model not used: ${refusal}`);
      this.training.failed({
        code: 'descriptor_model_changed',
        message: `The embedding recognizer needs training: ${refusal}.`,
        at: new Date().toISOString(),
      });
      embedding = null;
    }
    await Promise.all([this.opts.pool.broadcast('setModel', lbph), this.opts.embedding?.broadcast('setModel', embedding)]);
    this.installed = { lbph, embedding };
  }
}
