/**
 * The check a host makes before it matches with a trained embedding model: its descriptors must come from the
 * descriptor model the host computes. A trained model carries its length (`dim`); the file carries the id
 * (model-file.ts). Both hosts (the server's embedding worker, the browser's engine) refuse a mismatch the same way.
 */
import { DESCRIPTOR_MODELS, type DescriptorModelId, descriptorMismatch } from './descriptor-models.js';
import type { EmbeddingModel } from './matcher.js';
import { descriptorModelOfDim } from './model-file.js';

/** Why `model` cannot be matched by a host computing `running` descriptors (train again), or null when it can. */
export function refuseOtherDescriptorModel(
  model: Pick<EmbeddingModel, 'dim'>,
  running: DescriptorModelId,
  trained?: DescriptorModelId,
): string | null {
  const from = trained ?? descriptorModelOfDim(model.dim);
  if (!from) {
    return `the trained embedding model holds ${model.dim}-value descriptors, which no descriptor model here makes; train again`;
  }
  if (DESCRIPTOR_MODELS[from].dim !== model.dim) {
    return `the trained embedding model says ${from} but holds ${model.dim}-value descriptors; train again`;
  }
  return descriptorMismatch(from, running);
}
