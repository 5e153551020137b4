import { describe, expect, it, vi } from 'vitest';
import type { CompactModelManifest } from '../../../shared/api/compact-models';
import { assembleLbph, encodeLbphSegment } from '../../../shared/recognition/compact-model';
import { LBPH_DEFAULTS } from '../../../shared/lbph/lbph';
import { downloadCompact, fetchManifest, memorySegments, splitSegments } from './compact-sync';
import { ModelSync } from './model-sync';

const BINS = 16384;
function histogram(seed: number): Float32Array {
  const h = new Float32Array(BINS);
  for (let i = seed % 7; i < BINS; i += 9 + (seed % 5)) h[i] = Math.fround(((i + seed) % 5) + 1) * Math.fround(1 / 144);
  return h;
}

/** A server with a compact model of `people`; records the hashes each segments request asked for. */
function compactServer(initial: string[]) {
  let people = initial;
  let version = 1;
  const asked: string[][] = [];
  const segment = (name: string) => encodeLbphSegment(name, [histogram(name.length), histogram(name.charCodeAt(0))]);
  const hashOf = (name: string) =>
    [...new TextEncoder().encode(name)]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('')
      .padEnd(16, '0')
      .slice(0, 16);
  const manifest = (): CompactModelManifest => ({
    format: 'lookout-compact',
    format_version: 1,
    version: `v${version}`,
    models_version: `v${version}`,
    trained_at: null,
    labels: [...people].sort(),
    segments_url: '/api/models/trained/compact/segments',
    lbph: {
      radius: 1,
      neighbors: 8,
      grid_x: 8,
      grid_y: 8,
      threshold: Number.MAX_VALUE,
      face_alignment: null,
      people: people.map((p) => ({ label: p, hash: hashOf(p), bytes: segment(p).length, samples: 2 })),
    },
    embedding: null,
    corrections: { available: false, url: '/api/models/trained/corrections', bytes: null, count: 0 },
  });
  const fetch = vi.fn(async (url: string) => {
    const u = new URL(url, 'http://lookout.test/');
    if (u.pathname === '/api/models/trained') {
      return new Response(
        JSON.stringify({
          version: `v${version}`,
          models_version: `v${version}`,
          trained_at: null,
          labels: people,
          lbph: { available: true, url: '/api/models/trained/lbph', bytes: 1 },
          embedding: { available: false, url: '/api/models/trained/embedding', bytes: null },
          corrections: { available: false, url: '/api/models/trained/corrections', bytes: null, count: 0 },
        }),
      );
    }
    if (u.pathname === '/api/models/trained/compact') return new Response(JSON.stringify(manifest()));
    if (u.pathname === '/api/models/trained/compact/segments') {
      const hashes = u.searchParams.get('hashes')!.split(',');
      asked.push(hashes);
      const parts = hashes.flatMap((h) => {
        const seg = segment(people.find((p) => hashOf(p) === h)!);
        const n = new Uint8Array(4);
        new DataView(n.buffer).setUint32(0, seg.length, true);
        return [n, seg];
      });
      const body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        body.set(p, at);
        at += p.length;
      }
      return new Response(body);
    }
    return new Response(JSON.stringify({ error: { code: 'not_found' } }), { status: 404 });
  });
  return {
    fetch,
    asked,
    manifest,
    hashOf,
    set(next: string[]) {
      people = next;
      version++;
    },
  };
}

describe('compact model download', () => {
  it('fetches only the segments the device lacks, and drops those no manifest names', async () => {
    const server = compactServer(['ada', 'grace']);
    const store = memorySegments();
    const first = await downloadCompact(server.manifest(), 'http://lookout.test/api/models/trained/compact', store, server.fetch);
    expect(first).toMatchObject({ fetched: 2, segments: 2 });
    const { labelIds } = assembleLbph(LBPH_DEFAULTS, first.models.lbph!.segments);
    expect(labelIds).toEqual({ ada: 0, grace: 1 });

    server.set(['ada', 'grace', 'linus']);
    const second = await downloadCompact(server.manifest(), 'http://lookout.test/api/models/trained/compact', store, server.fetch);
    expect(second).toMatchObject({ fetched: 1, segments: 3 });
    expect(server.asked.at(-1)).toEqual([server.hashOf('linus')]);

    server.set(['grace', 'linus']);
    const third = await downloadCompact(server.manifest(), 'http://lookout.test/api/models/trained/compact', store, server.fetch);
    expect(third).toMatchObject({ fetched: 0, segments: 2 });
    expect([...store.map.keys()].sort()).toEqual([server.hashOf('grace'), server.hashOf('linus')].sort());
  });

  it('refuses an answer that does not hold the segments asked for', () => {
    expect(() => splitSegments(new Uint8Array([5, 0, 0, 0, 1]), 1)).toThrow(/0 whole segments, 1 were asked/);
  });

  it('ModelSync installs the compact model and, after a training added one person, fetches that one segment', async () => {
    const server = compactServer(['ada', 'grace']);
    const installed: unknown[] = [];
    const downloads: unknown[] = [];
    const s = new ModelSync({
      install: async (m) => void installed.push(m),
      onDownload: (d) => downloads.push(d),
      fetch: server.fetch,
      base: 'http://lookout.test/recognize',
    });
    await s.check();
    expect(installed[0]).toMatchObject({
      compact: { lbph: { segments: [expect.any(Uint8Array), expect.any(Uint8Array)] } },
      corrections: null,
    });
    expect(installed[0]).not.toHaveProperty('lbphYaml');
    server.set(['ada', 'grace', 'linus']);
    await s.check();
    expect(s.version).toBe('v2');
    expect(downloads).toEqual([
      { via: 'compact', fetched: 2, segments: 2, fetchedBytes: expect.any(Number), installedBytes: expect.any(Number) },
      { via: 'compact', fetched: 1, segments: 3, fetchedBytes: expect.any(Number), installedBytes: expect.any(Number) },
    ]);
    expect(server.fetch.mock.calls.some(([url]) => String(url).endsWith('/lbph'))).toBe(false);
  });

  it('reads manifests of format 1 (float32 descriptors, an older server) and 2 (float16), not a newer one', async () => {
    const answer = (format_version: number) => async () =>
      new Response(JSON.stringify({ ...compactServer(['a']).manifest(), format_version }));
    for (const v of [1, 2])
      expect((await fetchManifest('http://lookout.test/api/models/trained/compact', answer(v)))?.format_version).toBe(v);
    // A format this build cannot read: null, so the sync downloads the model files instead.
    expect(await fetchManifest('http://lookout.test/api/models/trained/compact', answer(3))).toBeNull();
  });
});
