/**
 * The server's trained models, for the in-browser engine: `GET /api/models/trained` says which exist and
 * where (`{ version, lbph: { available, url }, embedding: { available, url } }`); the LBPH one is
 * training.yml, the embedding one embeddings.json, the same files the server recognizes with. The corrections
 * ("not this person") of their people come with them (`corrections: { available, url }`), so that offline the
 * engine does not give a corrected stranger the name again; a server without corrections answers none.
 */
import type { TrainedModelsResponse } from '../../../shared/api/index';
import type { DescriptorModelId } from '../../../shared/embedding/descriptor-models';
import { refuseOtherDescriptorModel } from '../../../shared/embedding/model-check';
import { decodeEmbeddingFile } from '../../../shared/embedding/model-file';
import type { ModelTexts } from './protocol';

export const TRAINED_MODELS_URL = '/api/models/trained';

export interface TrainedModels extends ModelTexts {
  /** The models' content version (null: nothing trained). */
  version: string | null;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

async function text(fetchFn: Fetch, url: string, what: string): Promise<string> {
  let res: Response;
  try {
    res = await fetchFn(url, { cache: 'no-store' });
  } catch {
    throw new Error(`cannot reach the server to download the ${what}`);
  }
  if (!res.ok) throw new Error(`the server answered ${res.status} for the ${what} (${url})`);
  return res.text();
}

/** The list's JSON, or a message naming the list. */
export function parseModelIndex(raw: string, indexUrl: string): TrainedModelsResponse {
  try {
    return JSON.parse(raw) as TrainedModelsResponse;
  } catch {
    throw new Error(`the list of trained models (${indexUrl}) is not JSON`);
  }
}

type Entry = TrainedModelsResponse['lbph'] | undefined;

function getter(indexUrl: string, base: string, fetchFn: Fetch) {
  const from = new URL(indexUrl, base);
  return (entry: Entry, what: string) =>
    entry?.available && entry.url ? text(fetchFn, new URL(entry.url, from).href, what) : Promise.resolve(null);
}

/** The corrections file a list names, or null when it has none (which clears them in the engine). */
export function downloadCorrections(
  index: TrainedModelsResponse,
  indexUrl: string,
  base: string,
  fetchFn: Fetch = fetch,
): Promise<string | null> {
  return getter(indexUrl, base, fetchFn)(index.corrections, 'corrections');
}

/**
 * Downloads the files a list names; an untrained recognizer comes back as null (which clears it in the engine), and
 * so do the corrections when there are none.
 */
export async function downloadModels(
  index: TrainedModelsResponse,
  indexUrl: string,
  base: string,
  fetchFn: Fetch = fetch,
): Promise<TrainedModels> {
  const get = getter(indexUrl, base, fetchFn);
  const [lbphYaml, embeddingsJson, corrections] = await Promise.all([
    get(index.lbph, 'LBPH model'),
    get(index.embedding, 'embedding model'),
    get(index.corrections, 'corrections'),
  ]);
  return { version: index.version, lbphYaml, embeddingsJson, corrections };
}

/** The list and its files in one go (the bench and the e2e harness). */
export async function fetchTrainedModels(indexUrl = TRAINED_MODELS_URL): Promise<TrainedModels> {
  const index = parseModelIndex(await text(fetch, indexUrl, 'list of trained models'), indexUrl);
  return downloadModels(index, indexUrl, document.baseURI);
}

/**
 * The descriptor model an embeddings.json was made with (version 1 files: `faceapi-128`), so the engine computes
 * the same descriptors as the server that trained it; throws the file's problem in words when it is malformed.
 */
export function embeddingDescriptorOf(embeddingsJson: string): DescriptorModelId {
  return decodeEmbeddingFile(embeddingsJson).descriptor;
}

/**
 * Why an engine computing `running` descriptors must not match with this embeddings.json (train again), or null
 * when it may: the browser's side of the server's refusal, never a silent mix of two descriptor models.
 */
export function embeddingModelRefusal(embeddingsJson: string, running: DescriptorModelId): string | null {
  const file = decodeEmbeddingFile(embeddingsJson);
  return refuseOtherDescriptorModel(file.model, running, file.descriptor);
}
