import { afterEach, describe, expect, it, vi } from 'vitest';
import { ModelSync } from './model-sync';

type Served = { version: string | null; lbph?: string; embedding?: string } | 'down';

/** A server for GET /api/models/trained and its files, answering 304 to the current version's ETag. */
function fakeServer(initial: Served) {
  let served: Served = initial;
  const requests: { url: string; ifNoneMatch?: string }[] = [];
  const fetch = vi.fn(async (url: string, init?: RequestInit) => {
    const ifNoneMatch = (init?.headers as Record<string, string> | undefined)?.['if-none-match'];
    requests.push({ url, ...(ifNoneMatch ? { ifNoneMatch } : {}) });
    if (served === 'down') throw new TypeError('Failed to fetch');
    const s = served;
    if (url.endsWith('/api/models/trained')) {
      if (s.version !== null && ifNoneMatch === `"${s.version}"`) return new Response(null, { status: 304 });
      const entry = (kind: 'lbph' | 'embedding') => ({
        available: s[kind] !== undefined,
        url: s[kind] !== undefined ? `/api/models/trained/${kind}` : null,
      });
      return new Response(JSON.stringify({ version: s.version, lbph: entry('lbph'), embedding: entry('embedding') }));
    }
    if (url.endsWith('/lbph')) return new Response(s.lbph);
    if (url.endsWith('/embedding')) return new Response(s.embedding);
    return new Response('no', { status: 404 });
  });
  return { fetch, requests, set: (s: Served) => (served = s) };
}

function sync(server: ReturnType<typeof fakeServer>) {
  const installed: unknown[] = [];
  const versions: (string | null)[] = [];
  const s = new ModelSync({
    install: async (m) => void installed.push(m),
    onVersion: (v) => versions.push(v),
    fetch: server.fetch,
    base: 'http://lookout.test/recognize',
  });
  return { s, installed, versions };
}

afterEach(() => vi.useRealTimers());

describe('ModelSync', () => {
  it('installs the server models once, then asks with If-None-Match and downloads nothing while unchanged', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'yaml-1' });
    const { s, installed, versions } = sync(server);
    await s.ensureLoaded();
    expect(installed).toEqual([{ lbphYaml: 'yaml-1', embeddingsJson: null }]);
    expect(versions).toEqual(['v1']);
    expect(server.requests.map((r) => new URL(r.url, 'http://x').pathname)).toEqual(['/api/models/trained', '/api/models/trained/lbph']);

    await s.check();
    await s.ensureLoaded(); // loaded: no request at all
    expect(server.requests.slice(2)).toEqual([{ url: '/api/models/trained', ifNoneMatch: '"v1"' }]);
    expect(installed).toHaveLength(1);

    server.set({ version: 'v2', lbph: 'yaml-2', embedding: 'json-2' });
    await s.check();
    expect(installed.at(-1)).toEqual({ lbphYaml: 'yaml-2', embeddingsJson: 'json-2' });
    expect(s.version).toBe('v2');
  });

  it('fails the first check with the reason, but keeps installed models when the server goes away', async () => {
    const server = fakeServer('down');
    const { s, installed } = sync(server);
    await expect(s.ensureLoaded()).rejects.toThrow(/cannot reach the server/);
    server.set({ version: null });
    await s.ensureLoaded();
    expect(installed).toEqual([{ lbphYaml: null, embeddingsJson: null }]);
    server.set('down');
    await expect(s.check()).resolves.toBeUndefined();
    expect(s.version).toBeNull();
  });

  it('joins checks in progress into one request', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'y' });
    const { s } = sync(server);
    await Promise.all([s.check(), s.check(), s.ensureLoaded()]);
    expect(server.requests.filter((r) => r.url === '/api/models/trained')).toHaveLength(1);
  });

  it('keeps a model trained in this browser until the server has a newer one', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'server-1' });
    const { s, installed, versions } = sync(server);
    await s.ensureLoaded();
    s.installedLocally();
    expect(versions.at(-1)).toMatch(/^local-/);
    await s.check(); // the server is still at the version the local model replaced
    expect(server.requests.at(-1)).toEqual({ url: '/api/models/trained', ifNoneMatch: '"v1"' });
    expect(installed).toHaveLength(1);
    server.set({ version: 'v2', lbph: 'server-2' });
    await s.check();
    expect(installed.at(-1)).toEqual({ lbphYaml: 'server-2', embeddingsJson: null });
    expect(s.version).toBe('v2');
  });

  it('checks on its own timer, only while wanted', async () => {
    vi.useFakeTimers();
    const server = fakeServer({ version: 'v1', lbph: 'y' });
    const { s } = sync(server);
    let visible = false;
    s.start(5000, () => visible);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(server.requests).toHaveLength(0);
    visible = true;
    await vi.advanceTimersByTimeAsync(5000);
    expect(server.requests.length).toBeGreaterThan(0);
    s.stop();
    const seen = server.requests.length;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(server.requests).toHaveLength(seen);
  });
});
