import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LocalModel, LocalModelStore } from '../pwa/local-model';
import { ModelSync, ModelsRefusedError, replacesLocal } from './model-sync';

type Served =
  | {
      version: string | null;
      lbph?: string;
      embedding?: string;
      labels?: string[];
      trained_at?: string;
      /** The files' own version (a server with corrections sends it); absent: an older server. */
      models_version?: string;
      /** The corrections file; absent: none. */
      corrections?: string;
    }
  | 'down';

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
      return new Response(
        JSON.stringify({
          version: s.version,
          trained_at: s.trained_at ?? null,
          labels: s.labels ?? [],
          lbph: entry('lbph'),
          embedding: entry('embedding'),
          ...(s.models_version !== undefined ? { models_version: s.models_version } : {}),
          ...(s.models_version !== undefined ? { corrections: { ...entry('corrections' as 'lbph'), count: s.corrections ? 1 : 0 } } : {}),
        }),
      );
    }
    if (url.endsWith('/corrections')) return new Response(s.corrections);
    if (url.endsWith('/lbph')) return new Response(s.lbph);
    if (url.endsWith('/embedding')) return new Response(s.embedding);
    return new Response('no', { status: 404 });
  });
  return { fetch, requests, set: (s: Served) => (served = s) };
}

/** The device's store for a model trained in this browser (pwa/local-model.ts is IndexedDB's). */
function memoryStore(): LocalModelStore & { model: LocalModel | null } {
  const store = {
    model: null as LocalModel | null,
    get: async () => store.model,
    put: async (m: LocalModel) => {
      store.model = m;
    },
    clear: async (id: string) => {
      if (store.model?.id === id) store.model = null;
    },
  };
  return store;
}

function sync(server: ReturnType<typeof fakeServer>, local?: LocalModelStore) {
  const installed: unknown[] = [];
  const versions: (string | null)[] = [];
  const s = new ModelSync({
    install: async (m) => void installed.push(m),
    onVersion: (v) => versions.push(v),
    ...(local ? { local } : {}),
    fetch: server.fetch,
    base: 'http://lookout.test/recognize',
  });
  return { s, installed, versions };
}

afterEach(() => vi.useRealTimers());

describe('ModelSync', () => {
  it('says why when the server refuses the models to this account (403), and when it gives them again', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'yaml-1' });
    const refusals: (ModelsRefusedError | null)[] = [];
    const s = new ModelSync({
      install: async () => undefined,
      onRefused: (r) => refusals.push(r),
      fetch: async (url, init) =>
        refusals.length === 0
          ? new Response(
              JSON.stringify({ error: { code: 'insufficient_role', message: 'this endpoint needs the role biometric-device' } }),
              {
                status: 403,
                headers: { 'content-type': 'application/json' },
              },
            )
          : server.fetch(url, init),
      base: 'http://lookout.test/recognize',
    });
    const first = await s.ensureLoaded().catch((err: unknown) => err);
    expect(first).toBeInstanceOf(ModelsRefusedError);
    expect((first as Error).message).toMatch(/biometric-device.*recognised on the server/);
    expect(refusals).toHaveLength(1);
    await s.ensureLoaded();
    expect(refusals.at(-1)).toBeNull();
  });

  it('installs the server models once, then asks with If-None-Match and downloads nothing while unchanged', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'yaml-1' });
    const { s, installed, versions } = sync(server);
    await s.ensureLoaded();
    expect(installed).toEqual([{ lbphYaml: 'yaml-1', embeddingsJson: null, corrections: null }]);
    expect(versions).toEqual(['v1']);
    // #27: the compact model asked for first; this server has none (404), so the files.
    expect(server.requests.map((r) => new URL(r.url, 'http://x').pathname)).toEqual([
      '/api/models/trained',
      '/api/models/trained/compact',
      '/api/models/trained/lbph',
    ]);

    await s.check();
    await s.ensureLoaded(); // loaded: no request at all
    expect(server.requests.slice(3)).toEqual([{ url: '/api/models/trained', ifNoneMatch: '"v1"' }]);
    expect(installed).toHaveLength(1);

    server.set({ version: 'v2', lbph: 'yaml-2', embedding: 'json-2' });
    await s.check();
    expect(installed.at(-1)).toEqual({ lbphYaml: 'yaml-2', embeddingsJson: 'json-2', corrections: null });
    expect(s.version).toBe('v2');
  });

  it('a new or deleted correction reaches the engine at the next check without downloading the model files again', async () => {
    const server = fakeServer({ version: 'v1', models_version: 'v1', lbph: 'yaml-1' });
    const { s, installed, versions } = sync(server);
    await s.ensureLoaded();
    expect(installed).toEqual([{ lbphYaml: 'yaml-1', embeddingsJson: null, corrections: null }]);
    const paths = () => server.requests.map((r) => new URL(r.url, 'http://x').pathname);

    // A correction: a new version over the same files; only the corrections come down.
    server.set({ version: 'v1+c1', models_version: 'v1', lbph: 'yaml-1', corrections: 'corrections-1' });
    const before = server.requests.length;
    await s.check();
    expect(paths().slice(before)).toEqual(['/api/models/trained', '/api/models/trained/corrections']);
    expect(server.requests[before].ifNoneMatch).toBe('"v1"');
    expect(installed.at(-1)).toEqual({ corrections: 'corrections-1' });
    expect(versions).toEqual(['v1', 'v1+c1']);

    // Unchanged: a 304, nothing installed.
    await s.check();
    expect(installed).toHaveLength(2);

    // Deleted: the version goes back to the files' and the engine clears its corrections, still without a download.
    server.set({ version: 'v1', models_version: 'v1', lbph: 'yaml-1' });
    const mark = server.requests.length;
    await s.check();
    expect(paths().slice(mark)).toEqual(['/api/models/trained']);
    expect(installed.at(-1)).toEqual({ corrections: null });
    expect(s.version).toBe('v1');

    // A training with a correction: the files and the corrections, installed together.
    server.set({ version: 'v2+c2', models_version: 'v2', lbph: 'yaml-2', corrections: 'corrections-2' });
    await s.check();
    expect(installed.at(-1)).toEqual({ lbphYaml: 'yaml-2', embeddingsJson: null, corrections: 'corrections-2' });
    expect(s.version).toBe('v2+c2');
  });

  it('downloads the server files again when they replace a model trained in this browser, corrections alone changed or not', async () => {
    const server = fakeServer({ version: 'v1', models_version: 'v1', lbph: 'server-1', labels: ['grace'] });
    const store = memoryStore();
    const { s, installed } = sync(server, store);
    await s.ensureLoaded();
    await s.trainLocally(async () => ({ result: 'ok', model: { labels: ['grace'], lbphYaml: 'local-1', embeddingsJson: null } }));
    // A correction on the server: a new version over the same files, knowing every person the local model knows.
    server.set({ version: 'v1+c1', models_version: 'v1', lbph: 'server-1', labels: ['grace'], corrections: 'corrections-1' });
    await s.check();
    expect(installed.at(-1)).toEqual({ lbphYaml: 'server-1', embeddingsJson: null, corrections: 'corrections-1' });
    expect(store.model).toBeNull();
    expect(s.version).toBe('v1+c1');
  });

  it('downloads the files again after a failed install, even when only the corrections changed since', async () => {
    const server = fakeServer({ version: 'v1', models_version: 'v1', lbph: 'yaml-1' });
    let fail = true;
    const installed: unknown[] = [];
    const s = new ModelSync({
      install: async (m) => {
        if (fail) throw new Error('bad file');
        installed.push(m);
      },
      fetch: server.fetch,
      base: 'http://lookout.test/recognize',
    });
    await expect(s.ensureLoaded()).rejects.toThrow('bad file');
    fail = false;
    server.set({ version: 'v1+c1', models_version: 'v1', lbph: 'yaml-1', corrections: 'corrections-1' });
    await s.ensureLoaded();
    expect(installed).toEqual([{ lbphYaml: 'yaml-1', embeddingsJson: null, corrections: 'corrections-1' }]);
  });

  it('fails the first check with the reason, but keeps installed models when the server goes away', async () => {
    const server = fakeServer('down');
    const { s, installed } = sync(server);
    await expect(s.ensureLoaded()).rejects.toThrow(/cannot reach the server/);
    server.set({ version: null });
    await s.ensureLoaded();
    expect(installed).toEqual([{ lbphYaml: null, embeddingsJson: null, corrections: null }]);
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

  it('keeps a model trained in this browser over the same server version, and on the device for a reload', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'server-1' });
    const store = memoryStore();
    const { s, installed, versions } = sync(server, store);
    await s.ensureLoaded();
    await s.trainLocally(async () => ({ result: 'ok', model: { labels: ['kiosk'], lbphYaml: 'local-1', embeddingsJson: null } }));
    expect(versions.at(-1)).toMatch(/^local-/);
    expect(store.model).toMatchObject({ labels: ['kiosk'], lbphYaml: 'local-1', over: 'v1' });
    await s.check(); // the server is still at the version the local model was trained over
    expect(server.requests.at(-1)).toEqual({ url: '/api/models/trained', ifNoneMatch: '"v1"' });
    expect(installed).toHaveLength(1);

    // A reload: a new sync finds the kept model and installs it, not the server's same old one.
    const again = sync(server, store);
    await again.s.ensureLoaded();
    expect(again.installed).toEqual([{ lbphYaml: 'local-1' }]);
    expect(again.s.version).toMatch(/^local-/);
    // Offline after the reload: still the kept model.
    server.set('down');
    const offline = sync(server, store);
    await offline.s.ensureLoaded();
    expect(offline.installed).toEqual([{ lbphYaml: 'local-1' }]);
  });

  it('lets the server model replace the local one once it knows its people or was trained after it', async () => {
    const server = fakeServer({ version: 'v1', lbph: 'server-1', labels: ['grace'], trained_at: '2020-01-01T00:00:00.000Z' });
    const store = memoryStore();
    const { s, installed } = sync(server, store);
    await s.ensureLoaded();
    await s.trainLocally(async () => ({ result: 'ok', model: { labels: ['kiosk'], lbphYaml: 'local-1', embeddingsJson: null } }));
    // Someone trained on the server before this device's photos arrived (older, and without her): kept.
    server.set({ version: 'v2', lbph: 'server-2', labels: ['grace', 'ada'], trained_at: '2020-01-02T00:00:00.000Z' });
    await s.check();
    expect(installed).toHaveLength(1);
    expect(store.model).not.toBeNull();
    // The server trained with her photos: its model replaces the local one, which leaves the device.
    server.set({ version: 'v3', lbph: 'server-3', labels: ['grace', 'kiosk'], trained_at: '2020-01-03T00:00:00.000Z' });
    await s.check();
    expect(installed.at(-1)).toEqual({ lbphYaml: 'server-3', embeddingsJson: null, corrections: null });
    expect(s.version).toBe('v3');
    expect(store.model).toBeNull();
  });

  it('decides replacement by version, people and training time', () => {
    const local = { id: 'local-1', trainedAt: '2026-01-02T00:00:00.000Z', labels: ['kiosk'], lbphYaml: '', embeddingsJson: null };
    const later = '2026-01-03T00:00:00.000Z';
    expect(replacesLocal({ version: null, trained_at: null, labels: [] }, local)).toBe(false);
    expect(replacesLocal({ version: 'v1', trained_at: later, labels: ['kiosk'] }, { ...local, over: 'v1' })).toBe(false);
    expect(replacesLocal({ version: 'v2', trained_at: '2026-01-01T00:00:00.000Z', labels: ['ada'] }, local)).toBe(false);
    expect(replacesLocal({ version: 'v2', trained_at: later, labels: ['ada'] }, local)).toBe(true);
    expect(replacesLocal({ version: 'v2', trained_at: '2025-01-01T00:00:00.000Z', labels: ['kiosk'] }, local)).toBe(true);
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
