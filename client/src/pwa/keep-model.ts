/**
 * What the service worker (sw.ts) keeps of the server's trained model at install, so that a first visit followed
 * by the server going away still recognises. The page usually loads the model before the worker controls it, so
 * the worker fetches it once itself, and keeps what the page's model sync (engine/model-sync.ts) reads offline:
 *
 *   - the index (`GET /api/models/trained`) and the corrections, in the trained-model cache;
 *   - the compact model (#27 section 2): its manifest in the trained-model cache, its per-person segments in the
 *     page's segment store by hash (engine/compact-sync.ts browserSegments), where the sync looks before fetching;
 *   - the full model files (training.yml, embeddings.json) only from a server without a compact model (an older
 *     one: the page then falls back to them too). With the compact model kept, earlier copies of the files go:
 *     they would hold people deleted since.
 *
 * Nothing is kept when the server moved on between the index and the manifest or a file: the page's next fetch
 * keeps the new model instead.
 */
import type { CompactModelManifest } from '../../../shared/api/compact-models';
import { downloadCompact, fetchManifest, type SegmentStore } from '../engine/compact-sync';

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** The part of a Cache the worker uses. */
export interface KeptResponses {
  put(url: string, res: Response): Promise<void>;
  delete(url: string): Promise<boolean>;
}

export interface KeepOptions {
  /** The app's origin (the worker's location). */
  origin: string;
  fetch: Fetch;
  /** The trained-model cache (opened only when something is kept). */
  cache: () => Promise<KeptResponses>;
  segments: SegmentStore;
  /** Under AUTH_MODE=oidc, the page's access token. */
  token?: string;
}

/** Also engine/models.ts TRAINED_MODELS_URL: not imported, that module brings the model-file parsers along. */
export const TRAINED_INDEX = '/api/models/trained';

type Entry = { available?: boolean; url?: string } | undefined;

/** Keeps the current trained model; says which form was kept (null: none, the server has none or moved on). */
export async function keepTrainedModel(opts: KeepOptions): Promise<'compact' | 'files' | null> {
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  const get: Fetch = (url, init) => opts.fetch(url, { ...init, cache: 'no-store', headers });
  const base = new URL(TRAINED_INDEX, opts.origin);
  const index = await get(base.href);
  if (index.status !== 200) return null;
  const body = (await index.clone().json()) as { version?: string | null; lbph?: Entry; embedding?: Entry; corrections?: Entry };
  // Nothing trained: nothing to keep, and nothing more to ask (a manifest asked for anyway is a refused template
  // download in the audit log at every install).
  if (!body.lbph?.available && !body.embedding?.available) return null;

  const manifestUrl = new URL(`${TRAINED_INDEX}/compact`, opts.origin).href;
  let manifest: { res: Response; parsed: CompactModelManifest } | null = null;
  try {
    const res = await get(manifestUrl);
    const copy = res.clone();
    const parsed = await fetchManifest(manifestUrl, async () => res);
    if (parsed) manifest = { res: copy, parsed };
  } catch {
    manifest = null; // no trained model any more, or a failed answer: the files' way decides
  }
  if (manifest && manifest.parsed.version !== body.version) return null; // a training in between
  if (manifest) {
    try {
      await downloadCompact(manifest.parsed, manifestUrl, opts.segments, get);
    } catch {
      manifest = null; // segments not to be had: keep the files instead
    }
  }

  // The corrections too: offline, a first visit must not name a corrected stranger again.
  const kept = manifest ? [body.corrections] : [body.lbph, body.embedding, body.corrections];
  const urls = kept.filter((e) => e?.available && e.url).map((e) => new URL(e!.url!, base).href);
  const files = await Promise.all(urls.map(async (url) => [url, await get(url)] as const));
  if (files.some(([, res]) => res.status !== 200)) return null;
  const cache = await opts.cache();
  await Promise.all([
    cache.put(base.href, index),
    ...(manifest ? [cache.put(manifestUrl, manifest.res)] : []),
    ...files.map(([url, res]) => cache.put(url, res)),
  ]);
  if (manifest) {
    for (const e of [body.lbph, body.embedding]) if (e?.url) await cache.delete(new URL(e.url, base).href);
  }
  return manifest ? 'compact' : 'files';
}
