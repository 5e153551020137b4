/**
 * Lookout's service worker: the offline kiosk. At install it downloads the app (index.html and every built
 * asset) and the model files the in-browser engines use, so with the server gone the app still starts and
 * still detects and recognises. Built by vite.config.ts into dist/client/sw.js, with the list of files and
 * the versions injected as __LOOKOUT_PRECACHE__.
 *
 *   navigations (any non-/api path)   network first (a few seconds), then the cached index.html (SPA)
 *   /assets/* (hashed names)          cache first
 *   /models/*                         cache first; a model file not precached is kept once fetched
 *   GET /api/models/trained*          network first, the last good answer when the server is gone
 *   every other /api request          not touched: straight to the network, never cached
 *
 * Captures and results made offline are not this file's business: the page queues them in IndexedDB
 * (queue.ts) and sends them when the server answers again (sync.ts).
 */
import type { PrecacheManifest, SwMessage } from './types';

declare const __LOOKOUT_PRECACHE__: PrecacheManifest;

const sw = self as unknown as ServiceWorkerGlobalScope;
const PRECACHE = __LOOKOUT_PRECACHE__;

const APP_CACHE = `lookout-app-${PRECACHE.appVersion}`;
const MODELS_CACHE = `lookout-models-${PRECACHE.modelsVersion}`;
/** The last trained model: kept across app versions (a new version must not forget it while offline). */
const TRAINED_CACHE = 'lookout-trained-v1';
const OUR_CACHES = /^lookout-/;

const INDEX = '/index.html';
/** A navigation waits this long for the server before the cached app is shown instead. */
const NAVIGATION_TIMEOUT_MS = 4000;
/** Downloads at once during install: enough to keep a LAN busy, few enough not to starve the page. */
const INSTALL_PARALLEL = 4;

const appFiles = new Set(PRECACHE.app);

sw.addEventListener('install', (event) => {
  event.waitUntil(precacheAll());
});

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      // A new version replaces the old one's caches; the trained-model cache carries over.
      const keep = new Set([APP_CACHE, MODELS_CACHE, TRAINED_CACHE]);
      for (const name of await caches.keys()) {
        if (OUR_CACHES.test(name) && !keep.has(name)) await caches.delete(name);
      }
      // The navigation request starts while the worker boots, so network-first costs no extra wait.
      await sw.registration.navigationPreload?.enable().catch(() => undefined);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener('message', (event) => {
  const msg = event.data as SwMessage | undefined;
  // The page's "reload to update" button: without it a kiosk tab that never closes would never update.
  if (msg?.type === 'skip-waiting') void sw.skipWaiting();
});

sw.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return; // uploads, results, training: always the network's business
  const url = new URL(req.url);
  if (url.origin !== sw.location.origin) return;
  const p = url.pathname;
  if (p === '/api' || p.startsWith('/api/')) {
    if (p === '/api/models/trained' || p.startsWith('/api/models/trained/')) event.respondWith(trainedModel(event));
    return; // live answers (status, results, images...) are never served from a cache
  }
  // Kept once fetched: the few built files not precached (onnxruntime-web's WASM) then work offline too.
  if (p.startsWith('/assets/')) return event.respondWith(cacheFirst(event, APP_CACHE));
  if (p.startsWith('/models/')) return event.respondWith(cacheFirst(event, MODELS_CACHE));
  if (req.mode === 'navigate') return event.respondWith(navigation(event));
  if (appFiles.has(p)) event.respondWith(cacheFirst(event, null)); // the manifest and its icons
});

/** Downloads every listed file into this version's caches; any failure fails the install (retried later). */
async function precacheAll(): Promise<void> {
  const [app, models] = await Promise.all([caches.open(APP_CACHE), caches.open(MODELS_CACHE)]);
  const jobs = [
    ...PRECACHE.app.map((path) => ({ path, cache: app, hashed: path.startsWith('/assets/') })),
    ...PRECACHE.models.map((path) => ({ path, cache: models, hashed: false })),
  ];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { path, cache, hashed } = jobs[next++];
      if (await cache.match(path)) continue; // an interrupted install of this same version got it already
      if (hashed) {
        // A hashed asset unchanged since the last version is the same file: copy it, do not download it again.
        const old = await caches.match(path);
        if (old) {
          await cache.put(path, old);
          continue;
        }
      }
      // no-cache: revalidate with the server, so a stale copy in the HTTP cache is never installed.
      const res = await fetch(path, { cache: 'no-cache' });
      if (!res.ok) throw new Error(`Lookout offline mode: ${path} answered ${res.status}`);
      await cache.put(path, await storable(res));
    }
  };
  await Promise.all(Array.from({ length: INSTALL_PARALLEL }, worker));
}

/** A redirected response cannot answer a navigation: keep a plain copy of it. */
async function storable(res: Response): Promise<Response> {
  if (!res.redirected) return res;
  return new Response(await res.blob(), { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Network first, then the cached index.html: the app is a single page, every route is that page. */
async function navigation(event: FetchEvent): Promise<Response> {
  const fallback = async () => (await caches.match(INDEX, { cacheName: APP_CACHE })) ?? (await caches.match(INDEX));
  try {
    const res = await withTimeout(
      (async () => ((await event.preloadResponse) as Response | undefined) ?? fetch(event.request))(),
      NAVIGATION_TIMEOUT_MS,
    );
    // A proxy in front of a stopped server answers 502/503/504: the cached app is more use than its page.
    if (res.status >= 502 && res.status <= 504) return (await fallback()) ?? res;
    return res;
  } catch (err) {
    const cached = await fallback();
    if (cached) return cached;
    throw err;
  }
}

/** Cache first (any of our caches), else the network; `keepIn` stores a fetched copy there. */
async function cacheFirst(event: FetchEvent, keepIn: string | null): Promise<Response> {
  const hit = await caches.match(event.request, { ignoreVary: true });
  if (hit) return hit;
  const res = await fetch(event.request);
  // 200 only: never a partial (206) or an error page in place of a model file.
  if (keepIn && res.status === 200) {
    const copy = res.clone();
    event.waitUntil(caches.open(keepIn).then((c) => c.put(event.request.url, copy)));
  }
  return res;
}

/**
 * The server's trained model: network first, so a new training is seen at once; when the server cannot be
 * reached, the copy from the last good answer, so recognition keeps working offline with the last model.
 */
async function trainedModel(event: FetchEvent): Promise<Response> {
  const key = event.request.url;
  const cached = () => caches.match(key, { cacheName: TRAINED_CACHE, ignoreVary: true });
  let res: Response;
  try {
    res = await fetch(event.request);
  } catch (err) {
    const hit = await cached();
    if (hit) return hit;
    throw err;
  }
  if (res.status === 200) {
    const copy = res.clone();
    event.waitUntil(caches.open(TRAINED_CACHE).then((c) => c.put(key, copy)));
  } else if (res.status >= 400 && res.status < 500) {
    // The server has no such model any more (labels deleted): offline must not bring the old one back.
    event.waitUntil(caches.open(TRAINED_CACHE).then((c) => c.delete(key)));
  } else if (res.status >= 500) {
    return (await cached()) ?? res;
  }
  return res;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}
