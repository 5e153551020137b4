/**
 * Face detection, recognition and training inside the engine worker, with the server's own shared/ code and
 * the server's order of steps (server/engines/vision-worker.ts, embedding-worker.ts, face-service.ts):
 * Haar cascade on the gray image, LBPH on the normalised crop, face-api descriptors on the RGB(A) image, the
 * label and confidence from the same windows. Same pixels in, same answer out.
 */
import { createEmbeddingEngine, type EmbeddingEngine } from '../../../shared/embedding/engine';
import { predictEmbedding, type EmbeddingModel } from '../../../shared/embedding/matcher';
import { decodeEmbeddingFile, encodeEmbeddingFile } from '../../../shared/embedding/model-file';
import { rgbToGray } from '../../../shared/image/ops';
import type { GrayImage, Rect, RgbImage } from '../../../shared/image/types';
import { lbpHistogram, predictLbph, type LbphModel } from '../../../shared/lbph/lbph';
import { readLbphYaml, writeLbphYaml } from '../../../shared/lbph/opencv-yaml';
import { DEFAULT_EMBEDDING_WINDOW, DEFAULT_LBPH_WINDOW } from '../../../shared/recognition/confidence';
import { lbphLabelNames, namesFromLabelIds, toFaceResult, type RecognizedBox } from '../../../shared/recognition/face-results';
import { assembleModels, type TrainingSample } from '../../../shared/recognition/training';
import { largestBox, normalizeFace } from '../../../shared/vision/face-region';
import { parseHaarCascade, type DetectOptions } from '../../../shared/vision/haar-cascade';
import { haarScanFor } from '../../../shared/vision/haar-wasm';
import { loadTf } from './backend';
import { createCascadeRunner, type CascadeRunner } from './cascade-pool';
import { loadFaceApi } from './face-api';
import type { CascadeOptions, ModelTexts, RecognizeOptions, RecognizeResult, SetModelResult, TrainResult } from './protocol';

/** The server's defaults (server/config/settings.ts). */
export const DEFAULT_CASCADE: CascadeOptions = { scaleFactor: 1.1, minNeighbors: 5, minSize: 30 };

interface Trained<M> {
  model: M;
  names: Map<number, string>;
}

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
  if (data.length < width * height * 4) throw new Error(`the image holds ${data.length} bytes; ${width}x${height} RGBA needs ${width * height * 4}`);
  const rgb: RgbImage = { width, height, channels: 4, data };
  return { rgb, gray: rgbToGray(rgb) };
}

async function fetchBytes(url: string): Promise<ArrayBuffer> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch {
    throw new Error(`cannot fetch ${url} (the server is unreachable)`);
  }
  if (!res.ok) throw new Error(`cannot fetch ${url} (${res.status} ${res.statusText})`);
  return res.arrayBuffer();
}

export class FaceEngine {
  private lbph: Trained<LbphModel> | null = null;
  private embedding: Trained<EmbeddingModel> | null = null;
  private embedder: EmbeddingEngine | null = null;
  private embedderLoading: Promise<EmbeddingEngine> | null = null;

  private constructor(
    private readonly cascade: CascadeRunner,
    readonly cascadeWindow: string,
    /** How windows are scanned here (haar-wasm.ts): WebAssembly with SIMD where the browser has it. */
    readonly cascadeScan: 'simd' | 'wasm' | 'js',
    private readonly faceApiUrl: string,
  ) {}

  /** Fetches and parses the cascade; `threads` (this worker included) share each detection. */
  static async create(cascadeUrl: string, options: CascadeOptions, faceApiUrl: string, threads: number): Promise<FaceEngine> {
    const xml = new TextDecoder().decode(await fetchBytes(cascadeUrl));
    const cascade = parseHaarCascade(xml);
    const detect: DetectOptions = {
      scaleFactor: options.scaleFactor,
      minNeighbors: options.minNeighbors,
      minSize: { width: options.minSize, height: options.minSize },
    };
    const runner = await createCascadeRunner(cascade, xml, detect, threads);
    return new FaceEngine(runner, `${cascade.windowWidth}x${cascade.windowHeight}`, haarScanFor(cascade), faceApiUrl);
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

  /** face-api's landmark and descriptor nets on this worker's tfjs (the backend must be started first). */
  loadEmbedding(): Promise<EmbeddingEngine> {
    this.embedderLoading ??= (async () => {
      const faceapi = await loadFaceApi(await loadTf());
      const base = this.faceApiUrl;
      const engine = createEmbeddingEngine({ faceapi, readModelFile: (name) => fetchBytes(base + name) });
      await engine.load();
      this.embedder = engine;
      return engine;
    })().catch((err: unknown) => {
      this.embedderLoading = null;
      throw new Error(`the embedding recognizer could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
    });
    return this.embedderLoading;
  }

  /** Installs (or clears, with null) the models from the server's file formats; names come from the files. */
  setModels(texts: ModelTexts): SetModelResult['lbph' | 'embedding'][] {
    if (texts.lbphYaml !== undefined) {
      if (texts.lbphYaml === null) this.lbph = null;
      else {
        const model = readLbphYaml(texts.lbphYaml);
        this.lbph = { model, names: lbphLabelNames(model) };
      }
    }
    if (texts.embeddingsJson !== undefined) {
      if (texts.embeddingsJson === null) this.embedding = null;
      else {
        const file = decodeEmbeddingFile(texts.embeddingsJson);
        this.embedding = { model: file.model, names: new Map(file.labels.map((l) => [l.label, l.name])) };
      }
    }
    const summary = (t: Trained<{ labels: Int32Array }> | null) =>
      t ? { labels: [...new Set(t.names.values())].sort(), samples: t.model.labels.length } : null;
    return [summary(this.lbph), summary(this.embedding)];
  }

  async recognize(frame: Frame, options: RecognizeOptions): Promise<Omit<RecognizeResult, 'timing'> & { detectMs: number; recognizeMs: number }> {
    const recognizer = options.recognition_model ?? 'lbph';
    const t0 = performance.now();
    const boxes = await this.detect(frame.gray);
    const t1 = performance.now();
    let recognized: RecognizedBox[];
    let trained: Trained<unknown> | null;
    if (recognizer === 'embedding') {
      const current = this.embedding;
      trained = current;
      // Untrained: no descriptor is worth computing (as the server's embedding worker).
      const descriptors = current && boxes.length ? (await (await this.loadEmbedding()).describe(frame.rgb, boxes)).map((d) => d.descriptor) : [];
      recognized = boxes.map((box, i) => {
        const p = current && descriptors[i] ? predictEmbedding(current.model, descriptors[i]) : null;
        return p && p.label >= 0 ? { box, labelId: p.label, distance: p.distance } : { box, labelId: null, distance: null };
      });
    } else {
      const current = this.lbph;
      trained = current;
      recognized = boxes.map((box) => {
        const p = current ? predictLbph(current.model, lbpHistogram(normalizeFace(frame.gray, box))) : null;
        return p && p.label >= 0 ? { box, labelId: p.label, distance: p.distance } : { box, labelId: null, distance: null };
      });
    }
    const window =
      recognizer === 'embedding' ? (options.windows?.embedding ?? DEFAULT_EMBEDDING_WINDOW) : (options.windows?.lbph ?? DEFAULT_LBPH_WINDOW);
    const faces = recognized.map((r) => toFaceResult(r, trained?.names ?? null, window));
    const t2 = performance.now();
    return {
      faces,
      count: faces.length,
      detection_method: 'local',
      recognition_model: recognizer,
      trained: trained !== null,
      detectMs: t1 - t0,
      recognizeMs: t2 - t1,
    };
  }

  /**
   * Trains LBPH (and the embedding recognizer when its nets are loaded) from labelled frames, installs the
   * models, and returns them in the server's file formats. The largest face of each frame is the person.
   */
  async train(samples: { label: string; frame: Frame }[]): Promise<Omit<TrainResult, 'timing'>> {
    const embedder = this.embeddingLoaded ? this.embedder : null;
    const out: TrainingSample[] = [];
    const skipped: TrainResult['skipped'] = [];
    for (const [index, { label, frame }] of samples.entries()) {
      const face = largestBox(await this.detect(frame.gray));
      if (!face) {
        skipped.push({ index, label, reason: 'no_face' });
        continue;
      }
      const histogram = lbpHistogram(normalizeFace(frame.gray, face));
      const descriptor = embedder ? ((await embedder.describe(frame.rgb, [face]))[0]?.descriptor ?? null) : null;
      out.push({ label, histogram, descriptor });
    }
    if (out.length === 0) throw new Error(`no face was found in any of the ${samples.length} captures; nothing was trained`);
    const models = assembleModels(out);
    const labelsInfo = Object.entries(models.labelIds)
      .map(([value, label]) => ({ label, value }))
      .sort((a, b) => a.label - b.label);
    const lbphYaml = writeLbphYaml({ ...models.lbph, labelsInfo });
    this.lbph = { model: models.lbph, names: namesFromLabelIds(models.labelIds) };
    let embeddingsJson: string | null = null;
    if (models.embedding) {
      const { model, labelIds } = models.embedding;
      embeddingsJson = encodeEmbeddingFile(
        model,
        Object.entries(labelIds).map(([name, label]) => ({ label, name })),
        { createdAt: new Date().toISOString() },
      );
      this.embedding = { model, names: namesFromLabelIds(labelIds) };
    }
    return {
      labels: models.labels,
      total_faces: out.length,
      faces_per_label: models.facesPerLabel,
      skipped,
      recognizers_trained: models.embedding ? ['lbph', 'embedding'] : ['lbph'],
      files: { lbphYaml, embeddingsJson },
    };
  }
}
