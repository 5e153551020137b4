/**
 * `<DATA_DIR>/models/embeddings.json`: the trained embedding model with its label names. Versioned JSON,
 * readable by any tool (Python's json included):
 *
 *   {
 *     "format": "lookout-embeddings", "version": 2,
 *     "descriptor": "faceapi-128",                      (the descriptor model id, descriptor-models.ts)
 *     "extractor": "face-api face_recognition_model (dlib ResNet-34), 68-point landmark alignment",
 *     "dim": 128,
 *     "labels": [{ "label": 0, "name": "grace-hopper" }, ...],
 *     "samples": [{ "label": 0, "descriptor": [0.0123..., ...] }, ...],
 *     "createdAt": "2024-01-01T00:00:00.000Z"          (optional)
 *   }
 *
 * Descriptor values are float32; JSON holds them as the shortest decimal of the equal double, which parses
 * back to the same double and so to the same float32: the round trip is exact.
 * Encoding and decoding live here (shared); reading and writing the file is the server's job.
 *
 * Version 1 files have no "descriptor": they were all made by face-api's net, so they read as `faceapi-128`.
 * The id and "dim" must agree; a host that computes other descriptors refuses the model (`descriptorMismatch`).
 */
import {
  DEFAULT_DESCRIPTOR_MODEL,
  DESCRIPTOR_MODEL_IDS,
  DESCRIPTOR_MODELS,
  type DescriptorModelId,
  isDescriptorModelId,
} from './descriptor-models.js';
import type { EmbeddingModel } from './matcher.js';

export const EMBEDDING_FILE_FORMAT = 'lookout-embeddings';
export const EMBEDDING_FILE_VERSION = 2;
/** Versions this build reads. */
const READABLE_VERSIONS = [1, 2];
export const EMBEDDING_EXTRACTOR = DESCRIPTOR_MODELS[DEFAULT_DESCRIPTOR_MODEL].extractor;

/** The descriptor model a model of `dim` values per sample comes from, by default (ids have distinct dims). */
export function descriptorModelOfDim(dim: number): DescriptorModelId | null {
  return DESCRIPTOR_MODEL_IDS.find((id) => DESCRIPTOR_MODELS[id].dim === dim) ?? null;
}

export interface EmbeddingLabelName {
  label: number;
  name: string;
}

export interface EmbeddingFile {
  model: EmbeddingModel;
  /** Names of the labels, sorted by label. */
  labels: EmbeddingLabelName[];
  /** What produced the descriptors; descriptors of another extractor are not comparable. */
  extractor: string;
  /** The descriptor model id the samples were computed with. */
  descriptor: DescriptorModelId;
  createdAt?: string;
}

/** A malformed or unsupported embeddings file. The message says what is wrong and where. */
export class EmbeddingFileError extends Error {
  constructor(message: string) {
    super(`embeddings file: ${message}`);
    this.name = 'EmbeddingFileError';
  }
}

function checkLabels(model: EmbeddingModel, labels: readonly EmbeddingLabelName[], fail: (m: string) => never): EmbeddingLabelName[] {
  const seen = new Map<number, string>();
  labels.forEach((l, i) => {
    if (!Number.isInteger(l.label) || l.label < 0 || l.label > 0x7fffffff) fail(`labels[${i}].label must be a non-negative 32-bit integer`);
    if (typeof l.name !== 'string' || l.name.length === 0) fail(`labels[${i}].name must be a non-empty string`);
    if (seen.has(l.label)) fail(`label ${l.label} is named twice`);
    seen.set(l.label, l.name);
  });
  for (let i = 0; i < model.labels.length; i++) {
    if (!seen.has(model.labels[i])) fail(`sample ${i} has label ${model.labels[i]}, which has no name`);
  }
  return [...labels].sort((a, b) => a.label - b.label).map((l) => ({ label: l.label, name: l.name }));
}

/**
 * Serialises a model and its label names. Every label used by a sample must be named. `descriptor` defaults to
 * the model whose length matches `model.dim`.
 */
export function encodeEmbeddingFile(
  model: EmbeddingModel,
  labels: readonly EmbeddingLabelName[],
  options: { createdAt?: string; extractor?: string; descriptor?: DescriptorModelId } = {},
): string {
  const fail = (m: string): never => {
    throw new EmbeddingFileError(m);
  };
  const { dim, descriptors } = model;
  const descriptor = options.descriptor ?? descriptorModelOfDim(dim) ?? fail(`no descriptor model gives ${dim} values; name one`);
  if (DESCRIPTOR_MODELS[descriptor].dim !== dim)
    fail(`${descriptor} descriptors have ${DESCRIPTOR_MODELS[descriptor].dim} values, the model ${dim}`);
  if (descriptors.length !== model.labels.length * dim) {
    fail(`model has ${descriptors.length} values for ${model.labels.length} samples of ${dim}`);
  }
  const named = checkLabels(model, labels, fail);
  const samples = Array.from(model.labels, (label, i) => {
    const d = Array.from(descriptors.subarray(i * dim, (i + 1) * dim));
    if (!d.every(Number.isFinite)) fail(`sample ${i} has a non-finite value`);
    return JSON.stringify({ label, descriptor: d });
  });
  const header: Record<string, unknown> = {
    format: EMBEDDING_FILE_FORMAT,
    version: EMBEDDING_FILE_VERSION,
    descriptor,
    extractor: options.extractor ?? DESCRIPTOR_MODELS[descriptor].extractor,
    dim,
  };
  if (options.createdAt) header.createdAt = options.createdAt;
  header.labels = named;
  // One field, and one sample, per line: diffable, and far smaller than pretty-printing every number.
  const fields = Object.entries(header).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)},\n`);
  const body = samples.length ? `\n    ${samples.join(',\n    ')}\n  ` : '';
  return `{\n${fields.join('')}  "samples": [${body}]\n}\n`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses an embeddings file, checking everything; throws EmbeddingFileError naming the first problem. */
export function decodeEmbeddingFile(text: string): EmbeddingFile {
  const fail = (m: string): never => {
    throw new EmbeddingFileError(m);
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    fail(`not valid JSON (${(err as Error).message})`);
  }
  if (!isRecord(json)) return fail('top level must be a JSON object');
  if (json.format !== EMBEDDING_FILE_FORMAT) fail(`"format" must be "${EMBEDDING_FILE_FORMAT}", got ${JSON.stringify(json.format)}`);
  if (!READABLE_VERSIONS.includes(json.version as number)) {
    fail(`unsupported version ${JSON.stringify(json.version)} (this build reads versions ${READABLE_VERSIONS.join(' and ')}); train again`);
  }
  const { dim, extractor, createdAt } = json;
  if (typeof dim !== 'number' || !Number.isInteger(dim) || dim < 1) return fail('"dim" must be a positive integer');
  const descriptor = json.version === 1 ? DEFAULT_DESCRIPTOR_MODEL : json.descriptor;
  if (!isDescriptorModelId(descriptor)) {
    return fail(`"descriptor" must be one of ${DESCRIPTOR_MODEL_IDS.join(', ')}, got ${JSON.stringify(json.descriptor)}; train again`);
  }
  if (DESCRIPTOR_MODELS[descriptor].dim !== dim)
    fail(`"dim" is ${dim}, but ${descriptor} descriptors have ${DESCRIPTOR_MODELS[descriptor].dim} values`);
  if (typeof extractor !== 'string') return fail('"extractor" must be a string');
  if (createdAt !== undefined && typeof createdAt !== 'string') fail('"createdAt" must be a string');
  if (!Array.isArray(json.labels)) return fail('"labels" must be an array');
  if (!Array.isArray(json.samples)) return fail('"samples" must be an array');
  const labels = json.labels.map((l: unknown, i): EmbeddingLabelName => {
    if (!isRecord(l)) return fail(`labels[${i}] must be an object`);
    return { label: l.label as number, name: l.name as string };
  });
  const samples = json.samples as unknown[];
  const descriptors = new Float32Array(samples.length * dim);
  const sampleLabels = new Int32Array(samples.length);
  samples.forEach((s, i) => {
    if (!isRecord(s)) {
      fail(`samples[${i}] must be an object`);
      return;
    }
    const { label, descriptor } = s;
    if (typeof label !== 'number' || !Number.isInteger(label) || label < 0 || label > 0x7fffffff) {
      fail(`samples[${i}].label must be a non-negative 32-bit integer`);
    }
    if (!Array.isArray(descriptor) || descriptor.length !== dim) {
      fail(`samples[${i}].descriptor must be an array of ${dim} numbers`);
    }
    (descriptor as unknown[]).forEach((v, k) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) fail(`samples[${i}].descriptor[${k}] is not a finite number`);
      descriptors[i * dim + k] = v as number;
    });
    sampleLabels[i] = label as number;
  });
  const model: EmbeddingModel = { dim, descriptors, labels: sampleLabels };
  const file: EmbeddingFile = { model, labels: checkLabels(model, labels, fail), extractor, descriptor };
  if (typeof createdAt === 'string') file.createdAt = createdAt;
  return file;
}
