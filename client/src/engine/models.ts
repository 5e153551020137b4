/**
 * The server's trained models, for the in-browser engine: `GET /api/models/trained` says which exist and
 * where (`{ version, lbph: { available, url }, embedding: { available, url } }`); the LBPH one is
 * training.yml, the embedding one embeddings.json, the same files the server recognizes with.
 */
import type { TrainedModelsResponse } from '../../../shared/api/index';
import type { ModelTexts } from './protocol';

export interface TrainedModels extends ModelTexts {
  /** The models' content version (null: nothing trained). */
  version: string | null;
}

async function text(url: string, what: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { cache: 'no-store' });
  } catch {
    throw new Error(`cannot reach the server to download the ${what}`);
  }
  if (!res.ok) throw new Error(`the server answered ${res.status} for the ${what} (${url})`);
  return res.text();
}

/** Downloads the trained models; an untrained recognizer comes back as null (which clears it in the engine). */
export async function fetchTrainedModels(indexUrl = '/api/models/trained'): Promise<TrainedModels> {
  const raw = await text(indexUrl, 'list of trained models');
  let index: TrainedModelsResponse;
  try {
    index = JSON.parse(raw) as TrainedModelsResponse;
  } catch {
    throw new Error(`the list of trained models (${indexUrl}) is not JSON`);
  }
  const base = new URL(indexUrl, document.baseURI);
  const get = (entry: TrainedModelsResponse['lbph'] | undefined, what: string) =>
    entry?.available && entry.url ? text(new URL(entry.url, base).href, what) : Promise.resolve(null);
  const [lbphYaml, embeddingsJson] = await Promise.all([get(index.lbph, 'LBPH model'), get(index.embedding, 'embedding model')]);
  return { version: index.version, lbphYaml, embeddingsJson };
}
