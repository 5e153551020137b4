/**
 * The corrections ("not this person") as a kiosk downloads them with the trained models
 * (`GET /api/models/trained/corrections`): one JSON file, each correction a label and its feature as base64 of
 * little-endian float32 (LBPH histograms; embedding descriptors of `descriptor_model`). The server writes it from
 * its corrections table, the browser's engine reads it into the same FaceNegatives the server's workers use.
 *
 * Browser-safe: atob/btoa (Node has them too); Node's Buffer where there is one, as the server writes a file of
 * about 88 KB per LBPH correction and btoa takes ~13 ms for each.
 */
import type { FaceNegatives, Negatives } from './corrections.js';

export const CORRECTIONS_FILE_FORMAT = 'lookout-corrections';

/** One correction in the file. */
export interface CorrectionFileEntry {
  label: string;
  /** base64 of the feature's float32 values, little-endian. */
  feature: string;
}

export interface CorrectionsFile {
  format: typeof CORRECTIONS_FILE_FORMAT;
  /** The version the index answered with these corrections (its ETag). */
  version: string;
  /** The descriptor model of the embedding corrections (null: none). */
  descriptor_model: string | null;
  lbph: CorrectionFileEntry[];
  embedding: CorrectionFileEntry[];
}

/** A correction with its feature decoded. */
export interface CorrectionFeature {
  label: string;
  feature: Float32Array;
}

// btoa/atob take "binary strings"; chunks keep String.fromCharCode's argument list short.
const CHUNK = 0x8000;

/** Node's Buffer, where there is one (typed loosely: the browser build has no Node types). */
const NodeBuffer = (globalThis as { Buffer?: { from(b: Uint8Array): { toString(encoding: 'base64'): string } } }).Buffer;

export function float32ToBase64(values: Float32Array): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i], true);
  if (NodeBuffer) return NodeBuffer.from(bytes).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

/** The float32 values of base64 text, or null when it is not whole float32 values. */
export function float32FromBase64(text: string): Float32Array | null {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  if (binary.length === 0 || binary.length % 4 !== 0) return null;
  const view = new DataView(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i++) view.setUint8(i, binary.charCodeAt(i));
  const out = new Float32Array(binary.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

export function encodeCorrectionsFile(file: {
  version: string;
  descriptorModel: string | null;
  lbph: readonly CorrectionFeature[];
  embedding: readonly CorrectionFeature[];
}): string {
  const entries = (list: readonly CorrectionFeature[]) => list.map((c) => ({ label: c.label, feature: float32ToBase64(c.feature) }));
  const out: CorrectionsFile = {
    format: CORRECTIONS_FILE_FORMAT,
    version: file.version,
    descriptor_model: file.descriptorModel,
    lbph: entries(file.lbph),
    embedding: entries(file.embedding),
  };
  return JSON.stringify(out);
}

/** A corrections file read back: its version, and the corrections by label as the pipeline takes them. */
export interface DecodedCorrections {
  version: string;
  descriptorModel: string | null;
  negatives: FaceNegatives;
}

function negativesOf(entries: unknown, what: string): Negatives {
  if (!Array.isArray(entries)) throw new Error(`the corrections file has no ${what} list`);
  const out = new Map<string, Float32Array[]>();
  for (const [i, entry] of entries.entries()) {
    const { label, feature } = (entry ?? {}) as { label?: unknown; feature?: unknown };
    const values = typeof feature === 'string' ? float32FromBase64(feature) : null;
    if (typeof label !== 'string' || !label || !values) {
      throw new Error(`the corrections file's ${what} correction ${i} is not a label with a float32 feature`);
    }
    const list = out.get(label) ?? [];
    list.push(values);
    out.set(label, list);
  }
  return out;
}

/** Reads a corrections file; throws its problem in words (nothing half-read is installed). */
export function decodeCorrectionsFile(text: string): DecodedCorrections {
  let raw: Partial<CorrectionsFile>;
  try {
    raw = JSON.parse(text) as Partial<CorrectionsFile>;
  } catch {
    throw new Error('the corrections file is not JSON');
  }
  if (raw?.format !== CORRECTIONS_FILE_FORMAT) throw new Error(`the corrections file is not a ${CORRECTIONS_FILE_FORMAT} file`);
  if (typeof raw.version !== 'string') throw new Error('the corrections file has no version');
  return {
    version: raw.version,
    descriptorModel: typeof raw.descriptor_model === 'string' ? raw.descriptor_model : null,
    negatives: { lbph: negativesOf(raw.lbph, 'lbph'), embedding: negativesOf(raw.embedding, 'embedding') },
  };
}
