/**
 * The compact trained models (#27 section 2) for the model sync: the manifest (`GET /api/models/trained/compact`)
 * names one segment per person by hash; only the segments this device does not keep yet are fetched (a training that
 * added one person costs one segment), in batches of hashes. The segments are kept by hash in a SegmentStore (the
 * Cache API in a browser, so a reload or an offline start needs none again) and those no manifest names any more
 * are dropped at once (a deleted person's templates do not stay on the device).
 */
import type { CompactModelManifest } from '../../../shared/api/compact-models';
import { COMPACT_FORMAT, COMPACT_SEGMENTS_MAX } from '../../../shared/recognition/compact-model';
import type { CompactModels } from './protocol';

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** Where segments are kept by hash. */
export interface SegmentStore {
  get(hash: string): Promise<Uint8Array | null>;
  put(hash: string, bytes: Uint8Array): Promise<void>;
  /** Drops every segment whose hash is not in `hashes`. */
  keepOnly(hashes: ReadonlySet<string>): Promise<void>;
}

export function memorySegments(): SegmentStore & { map: Map<string, Uint8Array> } {
  const map = new Map<string, Uint8Array>();
  return {
    map,
    get: async (h) => map.get(h) ?? null,
    put: async (h, b) => void map.set(h, b),
    keepOnly: async (keep) => {
      for (const h of [...map.keys()]) if (!keep.has(h)) map.delete(h);
    },
  };
}

/** The Cache API cache of segments (the service worker keeps it across its versions: sw.ts KEEP). */
export const COMPACT_SEGMENTS_CACHE = 'lookout-compact-segments-v1';
const CACHE = COMPACT_SEGMENTS_CACHE;
const keyOf = (hash: string) => new URL(`/__lookout/compact-segment/${hash}`, self.location.href).href;

/** Segments in the Cache API (the page's origin), or in memory where it is missing (tests, old browsers). */
export function browserSegments(): SegmentStore {
  if (typeof caches === 'undefined') return memorySegments();
  const open = () => caches.open(CACHE);
  return {
    async get(hash) {
      const hit = await (await open()).match(keyOf(hash));
      return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
    },
    async put(hash, bytes) {
      await (await open()).put(keyOf(hash), new Response(bytes as Uint8Array<ArrayBuffer>));
    },
    async keepOnly(keep) {
      const cache = await open();
      for (const req of await cache.keys()) {
        const hash = new URL(req.url).pathname.split('/').pop() ?? '';
        if (!keep.has(hash)) await cache.delete(req);
      }
    },
  };
}

/** The compact manifest: null when the server has none (an older server: 404 of an unknown route, or 405). */
export async function fetchManifest(url: string, fetchFn: Fetch): Promise<CompactModelManifest | null> {
  const res = await fetchFn(url, { cache: 'no-store' });
  if (res.status === 404 || res.status === 405) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
    if (body?.error?.code === 'not_trained') throw new Error('the server has no trained model any more');
    return null;
  }
  if (!res.ok) throw new Error(`the server answered ${res.status} for the compact model (${url})`);
  const manifest = (await res.json()) as CompactModelManifest;
  // Format 1 (float32 descriptors, an older server) or 2 (float16): a newer one falls back to the model files.
  const version = manifest?.format_version;
  if (manifest?.format !== 'lookout-compact' || !Number.isInteger(version) || version < 1 || version > COMPACT_FORMAT) return null;
  return manifest;
}

/** Splits a segments answer: each segment is its length (u32 little-endian) then its bytes. */
export function splitSegments(body: Uint8Array, expected: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let at = 0;
  while (at < body.length) {
    if (at + 4 > body.length) break;
    const n = view.getUint32(at, true);
    if (at + 4 + n > body.length) break;
    out.push(body.slice(at + 4, at + 4 + n));
    at += 4 + n;
  }
  if (out.length !== expected || at !== body.length)
    throw new Error(`the segments answer holds ${out.length} whole segments, ${expected} were asked for`);
  return out;
}

export interface CompactDownload {
  models: CompactModels;
  /** Segments fetched now, and their bytes (uncompressed). */
  fetched: number;
  fetchedBytes: number;
  /** Every segment of the model, and their bytes (what the engine installs). */
  segments: number;
  installedBytes: number;
}

/** The manifest's models, fetching only the segments `store` lacks; drops from `store` what the manifest no longer names. */
export async function downloadCompact(
  manifest: CompactModelManifest,
  manifestUrl: string,
  store: SegmentStore,
  fetchFn: Fetch,
): Promise<CompactDownload> {
  const refs = [...(manifest.lbph?.people ?? []), ...(manifest.embedding?.people ?? [])];
  const have = new Map<string, Uint8Array>();
  const missing: string[] = [];
  for (const { hash } of refs) {
    if (have.has(hash) || missing.includes(hash)) continue;
    const kept = await store.get(hash).catch(() => null);
    if (kept) have.set(hash, kept);
    else missing.push(hash);
  }
  let fetchedBytes = 0;
  const segmentsUrl = new URL(manifest.segments_url, manifestUrl);
  for (let i = 0; i < missing.length; i += COMPACT_SEGMENTS_MAX) {
    const batch = missing.slice(i, i + COMPACT_SEGMENTS_MAX);
    const url = new URL(segmentsUrl);
    url.searchParams.set('hashes', batch.join(','));
    const res = await fetchFn(url.href, { cache: 'no-store' });
    if (!res.ok) throw new Error(`the server answered ${res.status} for the model segments`);
    const parts = splitSegments(new Uint8Array(await res.arrayBuffer()), batch.length);
    for (let k = 0; k < batch.length; k++) {
      have.set(batch[k], parts[k]);
      fetchedBytes += parts[k].length;
      await store.put(batch[k], parts[k]).catch(() => undefined);
    }
  }
  await store.keepOnly(new Set(refs.map((r) => r.hash))).catch(() => undefined);
  const pick = (people: { hash: string }[]) => people.map((p) => have.get(p.hash)!);
  const l = manifest.lbph;
  const e = manifest.embedding;
  const models: CompactModels = {
    trainedAt: manifest.trained_at,
    lbph: l
      ? {
          head: {
            radius: l.radius,
            neighbors: l.neighbors,
            gridX: l.grid_x,
            gridY: l.grid_y,
            threshold: l.threshold,
            ...(l.face_alignment ? { faceAlignment: l.face_alignment } : {}),
          },
          segments: pick(l.people),
        }
      : null,
    embedding: e ? { descriptorModel: e.descriptor_model, dim: e.dim, segments: pick(e.people) } : null,
  };
  return {
    models,
    fetched: missing.length,
    fetchedBytes,
    segments: refs.length,
    installedBytes: refs.reduce((n, r) => n + r.bytes, 0),
  };
}
