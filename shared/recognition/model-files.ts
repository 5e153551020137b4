/**
 * Trained models to and from the files the server stores and browsers download, one mapping for both:
 *
 *   training.yml     OpenCV LBPH YAML, the label names in its labelsInfo (OpenCV's own slot for them)
 *   model.pickle     the original service's label name -> id map (read only when labelsInfo is missing,
 *                    i.e. a training.yml written by OpenCV itself)
 *   embeddings.json  descriptors and label names in one file
 */
import type { EmbeddingModel } from '../embedding/matcher.js';
import { decodeEmbeddingFile, encodeEmbeddingFile } from '../embedding/model-file.js';
import type { LbphModel } from '../lbph/lbph.js';
import { lbphYamlBytes, lbphYamlChunks, readLbphYaml, readLbphYamlStream } from '../lbph/opencv-yaml.js';
import { decodeLabelMapPickle } from '../lbph/pickle.js';
import { namesFromLabelIds } from './face-results.js';
import type { Trained } from './pipeline.js';
import type { AssembledModels } from './training.js';

/** Label name -> id, model.pickle's shape and the trainer's. */
export type LabelIds = Record<string, number>;

/** A model read from its file, with the name map it carries. */
export interface ModelFromFile<M> {
  model: M;
  labelIds: LabelIds;
  /** When the file says it was made (embeddings.json only). */
  createdAt?: string;
}

/** training.yml with the names in labelsInfo, sorted by id (as OpenCV's std::map keeps them). Small models only. */
export function encodeLbphFile(model: LbphModel, labelIds: LabelIds): string {
  return [...encodeLbphChunks(model, labelIds)].join('');
}

/** encodeLbphFile's text in pieces (whole lines, about 1 MB each), for a model of any size. */
export function encodeLbphChunks(model: LbphModel, labelIds: LabelIds): Generator<string, void, undefined> {
  return lbphYamlChunks(withLabelsInfo(model, labelIds));
}

/** encodeLbphChunks as UTF-8 bytes (what a file is written from, without encoding the text again). */
export function encodeLbphBytes(model: LbphModel, labelIds: LabelIds): Generator<Uint8Array, void, undefined> {
  return lbphYamlBytes(withLabelsInfo(model, labelIds));
}

function withLabelsInfo(model: LbphModel, labelIds: LabelIds): LbphModel {
  const labelsInfo = Object.entries(labelIds)
    .map(([value, label]) => ({ label, value }))
    .sort((a, b) => a.label - b.label);
  return { ...model, labelsInfo };
}

/**
 * Reads training.yml. Its names come from labelsInfo, else from model.pickle (`labelMap`, when there is one).
 * Throws with a message naming the file when a label id the model uses has no name.
 */
export function decodeLbphFile(yaml: string, labelMap?: Uint8Array | null): ModelFromFile<LbphModel> {
  return namedLbph(readLbphYaml(yaml), labelMap);
}

/** decodeLbphFile for the file in pieces (any size: never one string). */
export async function decodeLbphStream(
  pieces: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  labelMap?: Uint8Array | null,
): Promise<ModelFromFile<LbphModel>> {
  return namedLbph(await readLbphYamlStream(pieces), labelMap);
}

function namedLbph(model: LbphModel, labelMap?: Uint8Array | null): ModelFromFile<LbphModel> {
  let labelIds: LabelIds = {};
  if (model.labelsInfo?.length) {
    for (const { label, value } of model.labelsInfo) labelIds[value] = label;
  } else if (labelMap !== undefined) {
    try {
      if (!labelMap) throw new Error('the file does not exist');
      labelIds = decodeLabelMapPickle(labelMap);
    } catch (err) {
      throw new Error(`model.pickle is missing or unreadable, so the trained labels have no names: ${String(err)}`);
    }
  }
  const known = new Set(Object.values(labelIds));
  const missing = [...new Set(model.labels)].filter((id) => !known.has(id));
  if (missing.length) {
    throw new Error(
      `training.yml uses label ids ${missing.join(', ')} that have no name (no labelsInfo for them${labelMap === undefined ? '' : ' nor in model.pickle'})`,
    );
  }
  return { model, labelIds };
}

export function encodeEmbeddingsFile(model: EmbeddingModel, labelIds: LabelIds, createdAt: string): string {
  return encodeEmbeddingFile(
    model,
    Object.entries(labelIds).map(([name, label]) => ({ label, name })),
    { createdAt },
  );
}

export function decodeEmbeddingsFile(json: string): ModelFromFile<EmbeddingModel> {
  const file = decodeEmbeddingFile(json);
  return {
    model: file.model,
    labelIds: Object.fromEntries(file.labels.map(({ label, name }) => [name, label])),
    ...(file.createdAt ? { createdAt: file.createdAt } : {}),
  };
}

/** A model with its names, ready for the pipeline. */
export function trained<M>(from: ModelFromFile<M>, trainedAt?: string): Trained<M> {
  const at = trainedAt ?? from.createdAt;
  return { model: from.model, names: namesFromLabelIds(from.labelIds), ...(at ? { trainedAt: at } : {}) };
}

/** A training's models, named and ready to install, with their files' text. */
export interface TrainedSet {
  lbph: Trained<LbphModel>;
  embedding: Trained<EmbeddingModel> | null;
  files: { lbphYaml: string; embeddingsJson: string | null };
}

/** The end of a training on either host: the assembled models named, stamped, and as file text. */
export function trainedSet(assembled: AssembledModels, trainedAt: string): TrainedSet {
  const lbph = trained({ model: assembled.lbph, labelIds: assembled.labelIds }, trainedAt);
  const e = assembled.embedding;
  return {
    lbph,
    embedding: e ? trained({ model: e.model, labelIds: e.labelIds }, trainedAt) : null,
    files: {
      lbphYaml: encodeLbphFile(assembled.lbph, assembled.labelIds),
      embeddingsJson: e ? encodeEmbeddingsFile(e.model, e.labelIds, trainedAt) : null,
    },
  };
}
