/**
 * Face detection, recognition and training inside the engine worker: the shared recognition pipeline
 * (shared/recognition/pipeline.ts), the one the server's workers run, with this worker's hosts for the two
 * host-specific steps: the cascade split across helper threads (cascade-pool.ts) and face-api descriptors on
 * this worker's tfjs. Same pixels in, same answer out.
 */
import type { RecognitionModel } from '../../../shared/api/index';
import { DEFAULT_DESCRIPTOR_MODEL, type DescriptorModelId, isDescriptorModelId } from '../../../shared/embedding/descriptor-models';
import type { EmbeddingModel } from '../../../shared/embedding/matcher';
import type { LbphModel } from '../../../shared/lbph/lbph';
import { assembleEmbedding, assembleLbph } from '../../../shared/recognition/compact-model';
import { type Cohort, parseCohort } from '../../../shared/recognition/cohort';
import { createEmbeddingEngine, type EmbeddingEngine } from '../../../shared/embedding/engine';
import { rgbToGray } from '../../../shared/image/ops';
import type { GrayImage, Rect, RgbImage } from '../../../shared/image/types';
import { decodeEmbeddingsFile, decodeLbphFile, trained, trainedSet } from '../../../shared/recognition/model-files';
import type { DecisionRule } from '../../../shared/recognition/decision';
import { detectOptionsOf, FacePipeline, type Trained } from '../../../shared/recognition/pipeline';
import { type FaceNegatives, negativeCount } from '../../../shared/recognition/corrections';
import { assembleModels, type TrainingSample } from '../../../shared/recognition/training';
import { parseHaarCascade, type HaarCascade } from '../../../shared/vision/haar-cascade';
import { haarScanFor } from '../../../shared/vision/haar-wasm';
import { loadTf } from './backend';
import { fetchModelFile } from './fetch-model';
import { createCascadeRunner, type CascadeRunner } from './cascade-pool';
import { engineRule } from './rule-sync';
import { embeddingEngineOptions, loadFaceApi } from './face-api';
import { embeddingDescriptorOf } from './models';
import type {
  CascadeOptions,
  CompactModels,
  EngineRules,
  ModelTexts,
  RecognizeOptions,
  RecognizeResult,
  SetModelResult,
  TrainResult,
} from './protocol';

/** A frame as the engines take it: RGBA (channels 4) and its gray image. */
export interface Frame {
  rgb: RgbImage;
  gray: GrayImage;
}

/**
 * Gray exactly as the server makes it: the server decodes to RGB and runs rgbToGray; rgbToGray on RGBA reads
 * the same R, G, B bytes and ignores alpha, so RGBA -> gray here equals RGBA -> RGB -> gray bit for bit.
 */
export function frameFromRgba(data: Uint8Array, width: number, height: number): Frame {
  if (data.length < width * height * 4)
    throw new Error(`the image holds ${data.length} bytes; ${width}x${height} RGBA needs ${width * height * 4}`);
  const rgb: RgbImage = { width, height, channels: 4, data };
  return { rgb, gray: rgbToGray(rgb) };
}

const fetchBytes = async (url: string): Promise<ArrayBuffer> => (await fetchModelFile(url)).arrayBuffer();

function summary(t: Trained<{ labels: Int32Array }> | null): SetModelResult['lbph'] {
  return t ? { labels: [...new Set(t.names.values())].sort(), samples: t.model.labels.length } : null;
}

export class FaceEngine {
  private embedder: EmbeddingEngine | null = null;
  private embedderLoading: Promise<EmbeddingEngine> | null = null;
  private embedderLoadingFor: DescriptorModelId | null = null;
  /** The descriptor model of the installed embedding model (the default before one is installed). */
  private descriptor: DescriptorModelId = DEFAULT_DESCRIPTOR_MODEL;
  private readonly pipeline: FacePipeline;

  private constructor(
    private readonly cascade: CascadeRunner,
    readonly cascadeWindow: string,
    /** How windows are scanned here (haar-wasm.ts): WebAssembly with SIMD where the browser has it. */
    readonly cascadeScan: 'simd' | 'wasm' | 'js',
    private readonly faceApiUrl: string,
    /** The eye cascade (alignment before LBPH; the facial features reuse it). */
    readonly eyeCascade: HaarCascade,
  ) {
    this.pipeline = new FacePipeline({
      // Tilted faces are turned upright by their eyes before LBPH, as on the server (shared/vision/eye-alignment.ts).
      eyeCascade,
      detect: (gray) => this.cascade.detect(gray),
      // The nets load on first use: a page that only runs LBPH never downloads them.
      describe: async (rgb, boxes) => (await (await this.loadEmbedding()).describe(rgb, boxes)).map((d) => d.descriptor),
      // The server's background cohort file, for the same per-person limits as there (shared/recognition/cohort.ts).
      cohort: (dim) => this.loadCohort(dim),
    });
  }

  private cohorts = new Map<number, Promise<Cohort | null>>();

  /**
   * The background cohort of the descriptor model with `dim`-value descriptors, fetched once (precached for offline
   * use). A failed fetch answers null, which holds everyone to the sure bound (stricter), and is tried again later.
   */
  private loadCohort(dim: number): Promise<Cohort | null> {
    let loading = this.cohorts.get(dim);
    if (!loading) {
      const model: DescriptorModelId = dim === 1024 ? 'faceres-1024' : 'faceapi-128';
      const url = new URL(`../cohort/${model}.f32`, new URL(this.faceApiUrl, self.location.href)).href;
      loading = fetchBytes(url)
        .then((bytes) => parseCohort(new Uint8Array(bytes), model, dim))
        .catch(() => {
          this.cohorts.delete(dim);
          return null;
        });
      this.cohorts.set(dim, loading);
    }
    return loading;
  }

  /** Fetches and parses the face and eye cascades; `threads` (this worker included) share each detection. */
  static async create(
    urls: { cascade: string; eyeCascade: string; faceApi: string },
    options: CascadeOptions,
    threads: number,
  ): Promise<FaceEngine> {
    const [xml, eyeXml] = await Promise.all(
      [urls.cascade, urls.eyeCascade].map(async (url) => new TextDecoder().decode(await fetchBytes(url))),
    );
    const cascade = parseHaarCascade(xml);
    const eyeCascade = parseHaarCascade(eyeXml);
    const runner = await createCascadeRunner(cascade, xml, detectOptionsOf(options), threads);
    return new FaceEngine(runner, `${cascade.windowWidth}x${cascade.windowHeight}`, haarScanFor(cascade), urls.faceApi, eyeCascade);
  }

  /** Stops the cascade helpers and frees the embedding nets. */
  dispose(): void {
    this.cascade.dispose();
    this.embedder?.dispose();
  }

  /** Threads the cascade runs on. */
  get cascadeThreads(): number {
    return this.cascade.threads;
  }

  get embeddingLoaded(): boolean {
    return this.embedder?.loaded === true;
  }

  /** detectMultiScale's boxes, computed on the cascade threads. */
  detect(gray: GrayImage): Promise<Rect[]> {
    return this.cascade.detect(gray);
  }

  /**
   * face-api's landmark net and the descriptor net of the installed embedding model (face-api's own, or faceres)
   * on this worker's tfjs (the backend must be started first): the descriptors the server computed for that model.
   * Installing a model of another descriptor model loads that one's net at the next use.
   */
  loadEmbedding(): Promise<EmbeddingEngine> {
    const descriptor = this.descriptor;
    if (this.embedderLoading && this.embedderLoadingFor === descriptor) return this.embedderLoading;
    const loading: Promise<EmbeddingEngine> = (async () => {
      const faceapi = await loadFaceApi(await loadTf());
      const engine = createEmbeddingEngine(embeddingEngineOptions(faceapi, this.faceApiUrl, descriptor, fetchBytes));
      await engine.load();
      // One net at a time: requests run one after the other, so none is using the one replaced.
      this.embedder?.dispose();
      this.embedder = engine;
      return engine;
    })().catch((err: unknown) => {
      if (this.embedderLoading === loading) this.embedderLoading = null;
      throw new Error(`the embedding recognizer could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
    });
    this.embedderLoading = loading;
    this.embedderLoadingFor = descriptor;
    return loading;
  }

  /** Installs (or clears, with null) the models from the server's file formats; names come from the files. */
  setModels(texts: ModelTexts): SetModelResult['lbph' | 'embedding'][] {
    if (texts.compact) return this.setCompact(texts.compact);
    // Both decoded before either is installed: a bad file changes nothing.
    const lbph = texts.lbphYaml === undefined ? undefined : texts.lbphYaml === null ? null : trained(decodeLbphFile(texts.lbphYaml));
    const embedding =
      texts.embeddingsJson === undefined
        ? undefined
        : texts.embeddingsJson === null
          ? null
          : trained(decodeEmbeddingsFile(texts.embeddingsJson));
    // The descriptors of the model's own descriptor model, as the server that trained it computed them.
    if (embedding) this.descriptor = embeddingDescriptorOf(texts.embeddingsJson!);
    return this.install(lbph, embedding);
  }

  /** The compact models (#27), assembled from their segments; both read before either is installed. */
  private setCompact(compact: CompactModels): SetModelResult['lbph' | 'embedding'][] {
    const at = compact.trainedAt ?? undefined;
    const lbph = compact.lbph ? trained(assembleLbph(compact.lbph.head, compact.lbph.segments), at) : null;
    const e = compact.embedding;
    if (e && !isDescriptorModelId(e.descriptorModel))
      throw new Error(`the compact model's descriptor model ${e.descriptorModel} is unknown to this build`);
    const embedding = e ? trained(assembleEmbedding(e.dim, e.segments), at) : null;
    if (e) this.descriptor = e.descriptorModel as DescriptorModelId;
    return this.install(lbph, embedding);
  }

  private install(
    lbph: Trained<LbphModel> | null | undefined,
    embedding: Trained<EmbeddingModel> | null | undefined,
  ): SetModelResult['lbph' | 'embedding'][] {
    this.pipeline.setModels({ ...(lbph !== undefined ? { lbph } : {}), ...(embedding !== undefined ? { embedding } : {}) });
    const { models } = this.pipeline;
    return [summary(models.lbph), summary(models.embedding)];
  }

  /** Replaces the corrections ("not this person") of both recognizers; by label name, so they outlive a model swap. */
  setCorrections(negatives: FaceNegatives): void {
    this.pipeline.setNegatives(negatives);
  }

  /** The corrections installed now (templates per recognizer). */
  get correctionCounts(): { lbph: number; embedding: number } {
    const { lbph, embedding } = this.pipeline.corrections;
    return { lbph: negativeCount(lbph), embedding: negativeCount(embedding) };
  }

  /** The rule of a recognition (rule-sync.ts); with a trained embedding model its nets load first, to know which runs. */
  private async ruleOf(recognizer: RecognitionModel, rules: EngineRules = {}): Promise<DecisionRule> {
    const running = recognizer === 'embedding' && this.pipeline.models.embedding ? (await this.loadEmbedding()).descriptorModel : undefined;
    return engineRule(recognizer, rules, running);
  }

  async recognize(
    frame: Frame,
    options: RecognizeOptions,
  ): Promise<Omit<RecognizeResult, 'timing'> & { detectMs: number; recognizeMs: number }> {
    const recognizer = options.recognition_model ?? 'lbph';
    const {
      faces,
      trained: used,
      detectMs,
      recognizeMs,
    } = await this.pipeline.recognize(frame, { recognizer, rule: await this.ruleOf(recognizer, options.rules) });
    return { faces, count: faces.length, detection_method: 'local', recognition_model: recognizer, trained: used, detectMs, recognizeMs };
  }

  /**
   * Trains LBPH (and the embedding recognizer when its nets are loaded) from labelled frames, installs the
   * models, and returns them in the server's file formats. The largest face of each frame is the person.
   */
  async train(samples: { label: string; frame: Frame }[]): Promise<Omit<TrainResult, 'timing'>> {
    const describe = this.embeddingLoaded;
    const out: TrainingSample[] = [];
    const skipped: TrainResult['skipped'] = [];
    for (const [index, { label, frame }] of samples.entries()) {
      const { histogram, descriptor, faceAlignment } = await this.pipeline.sample(frame, { describe });
      if (!histogram) skipped.push({ index, label, reason: 'no_face' });
      else out.push({ label, histogram, descriptor, ...(faceAlignment ? { faceAlignment } : {}) });
    }
    if (out.length === 0) throw new Error(`no face was found in any of the ${samples.length} captures; nothing was trained`);
    const models = assembleModels(out);
    const set = trainedSet(models, new Date().toISOString());
    // An embedding model this training does not replace stays, as on the server.
    this.pipeline.setModels({ lbph: set.lbph, ...(set.embedding ? { embedding: set.embedding } : {}) });
    return {
      labels: models.labels,
      total_faces: out.length,
      faces_per_label: models.facesPerLabel,
      skipped,
      recognizers_trained: set.embedding ? ['lbph', 'embedding'] : ['lbph'],
      files: set.files,
    };
  }
}
