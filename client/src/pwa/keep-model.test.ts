/**
 * The offline first visit (keep-model.ts, run by the service worker at install): it keeps the compact model (its
 * manifest and its segments), not training.yml, and a ModelSync that can reach nothing but what was kept (the
 * worker's cache answering for a stopped server) installs that compact model without a request to the network.
 * From an older server without a compact model it keeps the model files, and the offline sync installs those.
 * The server is a double of Lookout's model routes (the exact paths and bodies the real ones answer: manifest,
 * length-prefixed segments, 404 of an unknown route); the e2e offline test runs the real one.
 */
import { describe, expect, it } from 'vitest';
import type { CompactModelManifest } from '../../../shared/api/compact-models';
import { decodeSegment, encodeEmbeddingSegment, encodeLbphSegment } from '../../../shared/recognition/compact-model';
import { memorySegments } from '../engine/compact-sync';
import { ModelSync } from '../engine/model-sync';
import type { ModelTexts } from '../engine/protocol';
import { type KeptResponses, keepTrainedModel } from './keep-model';

const ORIGIN = 'http://lookout.test';
const BINS = 16384;
const hist = (seed: number) => {
  const h = new Float32Array(BINS);
  for (let i = seed; i < BINS; i += 11) h[i] = Math.fround(1 / 144);
  return h;
};
const hex16 = (n: number) => n.toString(16).padStart(16, '0');

/** Lookout's model routes for two people; `compact: false` is a server from before #27. */
function modelServer({ compact = true, manifestVersion = 'v1' } = {}) {
  const people = ['ada', 'grace'];
  const segments = new Map<string, Uint8Array>();
  const ref = (label: string, bytes: Uint8Array) => {
    const hash = hex16(segments.size + 1);
    segments.set(hash, bytes);
    return { label, hash, bytes: bytes.length, samples: 1 };
  };
  const lbph = people.map((p, i) => ref(p, encodeLbphSegment(p, [hist(i)])));
  const embedding = people.map((p, i) => ref(p, encodeEmbeddingSegment(p, 4, new Float32Array([0.1 * i, 0.2, -0.3, 0.4]), 'float16')));
  const manifest: CompactModelManifest = {
    format: 'lookout-compact',
    format_version: 2,
    version: manifestVersion,
    models_version: manifestVersion,
    trained_at: null,
    labels: people,
    segments_url: '/api/models/trained/compact/segments',
    lbph: { radius: 1, neighbors: 8, grid_x: 8, grid_y: 8, threshold: Number.MAX_VALUE, face_alignment: null, people: lbph },
    embedding: { descriptor_model: 'faceapi-128', dim: 4, people: embedding },
    corrections: { available: true, url: '/api/models/trained/corrections', bytes: 2, count: 0 },
  };
  const index = {
    version: 'v1',
    models_version: 'v1',
    trained_at: null,
    labels: people,
    lbph: { available: true, url: '/api/models/trained/lbph', bytes: 10 },
    embedding: { available: false, url: '/api/models/trained/embedding', bytes: null },
    corrections: { available: true, url: '/api/models/trained/corrections', bytes: 2, count: 0 },
  };
  const asked: string[] = [];
  const fetch = async (url: string): Promise<Response> => {
    const u = new URL(url, ORIGIN);
    asked.push(u.pathname);
    switch (u.pathname) {
      case '/api/models/trained':
        return Response.json(index);
      case '/api/models/trained/lbph':
        return new Response('%YAML:1.0\n', { headers: { 'content-type': 'application/x-yaml' } });
      case '/api/models/trained/corrections':
        return Response.json({ corrections: [] });
    }
    if (compact && u.pathname === '/api/models/trained/compact') return Response.json(manifest);
    if (compact && u.pathname === '/api/models/trained/compact/segments') {
      const parts = u.searchParams
        .get('hashes')!
        .split(',')
        .map((h) => segments.get(h)!);
      const body = new Uint8Array(parts.reduce((n, p) => n + 4 + p.length, 0));
      let at = 0;
      for (const p of parts) {
        new DataView(body.buffer).setUint32(at, p.length, true);
        body.set(p, at + 4);
        at += 4 + p.length;
      }
      return new Response(body);
    }
    return Response.json({ error: { code: 'not_found', message: 'no such route' } }, { status: 404 });
  };
  return { fetch, asked, manifest };
}

/** The worker's trained-model cache. */
function keptCache() {
  const map = new Map<string, Response>();
  const cache: KeptResponses = {
    put: async (url, res) => void map.set(url, res),
    delete: async (url) => map.delete(url),
  };
  /** What a page reaches with the server stopped: only the kept answers (a fetch error otherwise). */
  const offline = async (url: string): Promise<Response> => {
    const hit = map.get(new URL(url, ORIGIN).href);
    if (!hit) throw new TypeError('Failed to fetch');
    return hit.clone();
  };
  return { map, cache, offline };
}

async function installOffline(offline: (url: string) => Promise<Response>, segments: ReturnType<typeof memorySegments>) {
  const installed: ModelTexts[] = [];
  const downloads: unknown[] = [];
  const sync = new ModelSync({
    install: async (m) => void installed.push(m),
    onDownload: (d) => downloads.push(d),
    fetch: offline,
    base: `${ORIGIN}/recognize`,
    segments,
  });
  await sync.check();
  return { installed, downloads, version: sync.version };
}

describe('the offline first visit', () => {
  it('keeps the compact model, not training.yml; offline, the sync installs it with no request to the network', async () => {
    const server = modelServer();
    const kept = keptCache();
    // An older worker's copy of training.yml: it would keep people deleted since, so it goes.
    kept.map.set(`${ORIGIN}/api/models/trained/lbph`, new Response('%YAML:1.0\nold'));
    const segments = memorySegments();
    expect(await keepTrainedModel({ origin: ORIGIN, fetch: server.fetch, cache: async () => kept.cache, segments })).toBe('compact');
    expect(server.asked).not.toContain('/api/models/trained/lbph');
    expect([...kept.map.keys()].sort()).toEqual(
      ['/api/models/trained', '/api/models/trained/compact', '/api/models/trained/corrections'].map((p) => `${ORIGIN}${p}`),
    );
    expect(segments.map.size).toBe(4);

    const { installed, downloads, version } = await installOffline(kept.offline, segments);
    expect(version).toBe('v1');
    expect(downloads).toEqual([{ via: 'compact', fetched: 0, segments: 4, fetchedBytes: 0, installedBytes: expect.any(Number) }]);
    expect(installed[0]).not.toHaveProperty('lbphYaml');
    const embedding = installed[0].compact?.embedding;
    expect(embedding?.segments).toHaveLength(2);
    expect(decodeSegment(embedding!.segments[1])).toMatchObject({ name: 'grace', precision: 'float16' });
    expect(installed[0].corrections).not.toBeNull();
  });

  it('keeps the model files from a server without a compact model, and the offline sync installs those', async () => {
    const server = modelServer({ compact: false });
    const kept = keptCache();
    const segments = memorySegments();
    expect(await keepTrainedModel({ origin: ORIGIN, fetch: server.fetch, cache: async () => kept.cache, segments })).toBe('files');
    expect(kept.map.has(`${ORIGIN}/api/models/trained/lbph`)).toBe(true);
    expect(segments.map.size).toBe(0);
    const { installed, downloads } = await installOffline(kept.offline, segments);
    expect(downloads).toEqual([expect.objectContaining({ via: 'files' })]);
    expect(installed[0].lbphYaml).toBe('%YAML:1.0\n');
  });

  it('keeps nothing when a training came between the index and the manifest', async () => {
    const server = modelServer({ manifestVersion: 'v2' });
    const kept = keptCache();
    expect(
      await keepTrainedModel({ origin: ORIGIN, fetch: server.fetch, cache: async () => kept.cache, segments: memorySegments() }),
    ).toBeNull();
    expect(kept.map.size).toBe(0);
  });

  it('asks nothing past the index while nothing is trained (each request for a model is an audited download)', async () => {
    const asked: string[] = [];
    const fetch = async (url: string): Promise<Response> => {
      const u = new URL(url, ORIGIN);
      asked.push(u.pathname);
      if (u.pathname === '/api/models/trained')
        return Response.json({
          version: null,
          models_version: null,
          trained_at: null,
          labels: [],
          lbph: { available: false, url: '/api/models/trained/lbph', bytes: null },
          embedding: { available: false, url: '/api/models/trained/embedding', bytes: null },
          corrections: { available: false, url: '/api/models/trained/corrections', bytes: null, count: 0 },
        });
      return Response.json({ error: { code: 'not_trained', message: 'no model is trained yet' } }, { status: 404 });
    };
    const kept = keptCache();
    expect(await keepTrainedModel({ origin: ORIGIN, fetch, cache: async () => kept.cache, segments: memorySegments() })).toBeNull();
    expect(asked).toEqual(['/api/models/trained']);
    expect(kept.map.size).toBe(0);
  });

  it("sends the page's token with every request under OIDC", async () => {
    const server = modelServer();
    const seen: (string | null)[] = [];
    const fetch = async (url: string, init?: RequestInit) => {
      seen.push(new Headers(init?.headers).get('authorization'));
      return server.fetch(url);
    };
    const kept = keptCache();
    await keepTrainedModel({ origin: ORIGIN, fetch, cache: async () => kept.cache, segments: memorySegments(), token: 'tok' });
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(seen.every((h) => h === 'Bearer tok')).toBe(true);
  });
});
