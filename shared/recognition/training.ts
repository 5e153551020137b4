/**
 * The last step of training, shared by the server (images on disk) and the browser (its own captures): from
 * per-face samples (label name, LBPH histogram, optional embedding descriptor) to the models and the label
 * map. Label ids are the sorted names' indices, so a retrain over the same people gives the same ids; the
 * samples are ordered by name (stable, so a person's samples keep their order).
 */
import { trainEmbedding, type EmbeddingModel } from '../embedding/matcher.js';
import { countBy } from '../count.js';
import { LBPH_DEFAULTS, type LbphModel } from '../lbph/lbph.js';

export interface TrainingSample {
  label: string;
  /** LBPH histogram of the normalised face (lbpHistogram(alignedFace(gray, box, eyeCascade))). */
  histogram: Float32Array;
  /** How the face was normalised (FACE_ALIGNMENT), absent for the plain crop. */
  faceAlignment?: string;
  /** The embedding recognizer's descriptor of the same face, or null when it did not run. */
  descriptor: Float32Array | null;
}

export interface AssembledModels {
  /** Trained names, sorted. */
  labels: string[];
  /** Name -> id for every trained name. */
  labelIds: Record<string, number>;
  /** Without labelsInfo: the caller adds the names where it stores them. */
  lbph: LbphModel;
  /** Null when no sample had a descriptor. Its label map holds only the names that have descriptors. */
  embedding: { model: EmbeddingModel; labelIds: Record<string, number> } | null;
  facesPerLabel: Record<string, number>;
}

/** Builds the models from samples; throws when there are none. Does not reorder `samples` itself. */
export function assembleModels(samples: readonly TrainingSample[]): AssembledModels {
  if (samples.length === 0) throw new Error('no training samples: no face was found in any training image');
  const labels = [...new Set(samples.map((s) => s.label))].sort();
  const labelIds: Record<string, number> = Object.fromEntries(labels.map((name, id) => [name, id]));
  const ordered = [...samples].sort((a, b) => a.label.localeCompare(b.label));
  // One normalisation per model: a query is normalised as its training faces were.
  const alignments = new Set(samples.map((s) => s.faceAlignment));
  if (alignments.size > 1) throw new Error(`training samples were normalised in different ways (${[...alignments].join(', ')})`);
  const faceAlignment = samples[0].faceAlignment;
  const lbph: LbphModel = {
    ...LBPH_DEFAULTS,
    histograms: ordered.map((s) => s.histogram),
    labels: Int32Array.from(ordered.map((s) => labelIds[s.label])),
    ...(faceAlignment ? { faceAlignment } : {}),
  };
  const described = ordered.filter((s): s is TrainingSample & { descriptor: Float32Array } => s.descriptor !== null);
  let embedding: AssembledModels['embedding'] = null;
  if (described.length > 0) {
    // The descriptor model sets the length (128 for face-api's net, 1024 for faceres); trainEmbedding checks every sample has it.
    const model = trainEmbedding(
      described.map((s) => ({ label: labelIds[s.label], descriptor: s.descriptor })),
      described[0].descriptor.length,
    );
    const used = new Set(described.map((s) => s.label));
    embedding = { model, labelIds: Object.fromEntries(Object.entries(labelIds).filter(([name]) => used.has(name))) };
  }
  return { labels, labelIds, lbph, embedding, facesPerLabel: countBy(ordered, (s) => s.label) };
}
