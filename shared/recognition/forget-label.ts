/**
 * A trained model without one person: their samples (LBPH histograms, embedding descriptors) and their name
 * taken out, every other sample and label id kept as trained. Deleting a person rewrites the saved models with
 * these (server/storage/model-store.ts), so they are forgotten at once, without a training run.
 */
import type { EmbeddingModel } from '../embedding/matcher.js';
import type { LbphModel } from '../lbph/lbph.js';
import type { LabelIds } from './model-files.js';

export interface Forgotten<M> {
  model: M;
  labelIds: LabelIds;
  /** Samples (templates) taken out. */
  removed: number;
}

/** The names without `label`, and its id (null when the model does not know it). */
function without(labelIds: LabelIds, label: string): { labelIds: LabelIds; id: number | null } {
  if (!Object.hasOwn(labelIds, label)) return { labelIds, id: null };
  const { [label]: id, ...rest } = labelIds;
  return { labelIds: rest, id };
}

/** The LBPH model without `label`'s histograms; the model as it is (removed 0) when it does not know them. */
export function lbphWithout(model: LbphModel, labelIds: LabelIds, label: string): Forgotten<LbphModel> {
  const { labelIds: rest, id } = without(labelIds, label);
  if (id === null) return { model, labelIds, removed: 0 };
  const keep = [...model.labels.keys()].filter((i) => model.labels[i] !== id);
  const { labelsInfo: _names, ...params } = model;
  return {
    model: { ...params, histograms: keep.map((i) => model.histograms[i]), labels: Int32Array.from(keep, (i) => model.labels[i]) },
    labelIds: rest,
    removed: model.labels.length - keep.length,
  };
}

/** The embedding model without `label`'s descriptors; the model as it is (removed 0) when it does not know them. */
export function embeddingWithout(model: EmbeddingModel, labelIds: LabelIds, label: string): Forgotten<EmbeddingModel> {
  const { labelIds: rest, id } = without(labelIds, label);
  if (id === null) return { model, labelIds, removed: 0 };
  const keep = [...model.labels.keys()].filter((i) => model.labels[i] !== id);
  const descriptors = new Float32Array(keep.length * model.dim);
  for (const [to, from] of keep.entries()) {
    descriptors.set(model.descriptors.subarray(from * model.dim, (from + 1) * model.dim), to * model.dim);
  }
  return {
    model: { ...model, descriptors, labels: Int32Array.from(keep, (i) => model.labels[i]) },
    labelIds: rest,
    removed: model.labels.length - keep.length,
  };
}
