/**
 * Lookout's service worker: the offline kiosk, on Workbox. At install it downloads the app (index.html and
 * every built file) and the model files the in-browser engines use, so with the server gone the app still
 * starts and still detects and recognises. vite-plugin-pwa (injectManifest, vite.config.ts) builds this file
 * into dist/client/sw.js and puts the list of files, each with its revision, where `self.__WB_MANIFEST` is.
 *
 *   navigations (not /api, /assets, /models)  network first (4 s), then the precached index.html (SPA)
 *   precached files (app, models)             from the precache; a changed file is downloaded again, an
 *                                              unchanged one is kept across versions (per-file revisions)
 *   /assets/* not precached (ORT's WASM)      cache first, kept once fetched (a few, newest kept)
 *   /models/* not precached                   cache first, kept once fetched
 *   GET /api/models/trained*                  network first, the last good answer when the server is gone
 *     (but .../compact/segments)              not cached here: the page keeps segments by hash (compact-sync.ts)
 *   every other /api request                  not touched: straight to the network, never cached
 *
 * Two precaches, app and models, each with its own cache (lookout-app-*, lookout-models-*): the engines'
 * models are most of the bytes, and keeping them apart lets a person (or a test) see and clear either. That
 * is why this uses two PrecacheControllers rather than precacheAndRoute(), which has one.
 *
 * Every response served from a cache gets the cross-origin isolation headers (withIsolation): the page must
 * be `crossOriginIsolated` for SharedArrayBuffer, so for the engines' multi-threaded WASM, and that is decided
 * by the headers of the response the document (and each worker script) arrived in. The server sends them on
 * everything; a copy stored before they were sent, or by a proxy that drops them, would otherwise start the
 * app offline without threads.
 *
 * Captures and results made offline are not this file's business: the page queues them in IndexedDB
 * (queue.ts) and sends them when the server answers again (sync.ts).
 */
import { ExpirationPlugin } from 'workbox-expiration';
import { PrecacheController, PrecacheRoute, type PrecacheEntry } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { CacheFirst, NetworkOnly, Strategy, type StrategyHandler, type StrategyOptions } from 'workbox-strategies';
import { COMPACT_SEGMENTS_URL } from '../../../shared/recognition/compact-model';
import { browserSegments, COMPACT_SEGMENTS_CACHE } from '../engine/compact-sync';
import { keepTrainedModel, TRAINED_INDEX } from './keep-model';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (PrecacheEntry | string)[] };

type Plugin = NonNullable<StrategyOptions['plugins']>[number];

/** v2: Workbox's layout (one cache across versions, per-file revisions); v1 was one cache per build hash. */
const APP_CACHE = 'lookout-app-v2';
const MODELS_CACHE = 'lookout-models-v2';
/** The last trained model: the same name as before, so an upgrade made offline does not forget it. */
const TRAINED_CACHE = 'lookout-trained-v1';
const RUNTIME_ASSETS = 'lookout-runtime-assets';
const RUNTIME_MODELS = 'lookout-runtime-models';
const OUR_CACHES = /^lookout-/;
// The page's compact-model segments too (#27): dropping them at each update would leave an offline start without a model.
const KEEP = new Set([APP_CACHE, MODELS_CACHE, TRAINED_CACHE, RUNTIME_ASSETS, RUNTIME_MODELS, COMPACT_SEGMENTS_CACHE]);

const INDEX = '/index.html';
/** A navigation waits this long for the server before the cached app is shown instead. */
const NAVIGATION_TIMEOUT_S = 4;

/** As server/http/headers.ts sends them. */
const ISOLATION_HEADERS: [string, string][] = [
  ['cross-origin-opener-policy', 'same-origin'],
  ['cross-origin-embedder-policy', 'require-corp'],
  ['cross-origin-resource-policy', 'same-origin'],
];

function withIsolation(res: Response): Response;
function withIsolation(res: Response | undefined): Response | undefined;
function withIsolation(res: Response | undefined): Response | undefined {
  if (!res || res.type === 'opaque' || res.type === 'opaqueredirect') return res;
  if (ISOLATION_HEADERS.every(([name, value]) => res.headers.get(name) === value)) return res;
  const headers = new Headers(res.headers);
  for (const [name, value] of ISOLATION_HEADERS) headers.set(name, value);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

const isolation: Plugin = { cachedResponseWillBeUsed: async ({ cachedResponse }) => withIsolation(cachedResponse) };

const isModelUrl = (url: string) => new URL(url, self.location.href).pathname.startsWith('/models/');
const manifest = self.__WB_MANIFEST;
const entryUrl = (e: PrecacheEntry | string) => (typeof e === 'string' ? e : e.url);

const app = new PrecacheController({ cacheName: APP_CACHE, plugins: [isolation] });
const models = new PrecacheController({ cacheName: MODELS_CACHE, plugins: [isolation] });
app.addToCacheList(manifest.filter((e) => !isModelUrl(entryUrl(e))));
models.addToCacheList(manifest.filter((e) => isModelUrl(entryUrl(e))));

self.addEventListener('install', (event) => {
  // Any download failing fails the install (the browser retries later); nothing half-installed takes over.
  void app.install(event);
  void models.install(event);
  // Best effort: a server without a trained model (or gone already) must not stop the install.
  event.waitUntil(keepTrained().catch(() => undefined));
});

self.addEventListener('activate', (event) => {
  void app.activate(event); // drops files the new list no longer has
  void models.activate(event);
  event.waitUntil(
    (async () => {
      // Caches of earlier versions (the hand-written worker's lookout-app-<hash>, say) go; ours stay.
      for (const name of await caches.keys()) {
        if (OUR_CACHES.test(name) && !KEEP.has(name)) await caches.delete(name);
      }
      // The navigation request starts while the worker boots, so network-first costs no extra wait.
      await self.registration.navigationPreload?.enable().catch(() => undefined);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('message', (event) => {
  // The page's "reload to update" button (workbox-window's messageSkipWaiting): a kiosk tab that never
  // closes would otherwise never update.
  if ((event.data as { type?: string } | undefined)?.type === 'SKIP_WAITING') void self.skipWaiting();
});

const sameOrigin = (url: URL) => url.origin === self.location.origin;
const under = (url: URL, prefix: string) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);

/**
 * Navigations: the network, then the precached index.html (the app is one page; every route is that page).
 * A proxy in front of a stopped server answers 502/503/504: the cached app is more use than its error page.
 */
const appShell: Plugin = {
  handlerDidError: async () => withIsolation(await app.matchPrecache(INDEX)),
  handlerWillRespond: async ({ response }) =>
    response.status >= 502 && response.status <= 504 ? (withIsolation(await app.matchPrecache(INDEX)) ?? response) : response,
};
registerRoute(
  new NavigationRoute(new NetworkOnly({ networkTimeoutSeconds: NAVIGATION_TIMEOUT_S, plugins: [appShell] }), {
    denylist: [/^\/(api|assets|models)(\/|$)/],
  }),
);

// Precached files. No directory index: "/" is a navigation, answered network first above.
registerRoute(new PrecacheRoute(app, { directoryIndex: '', cleanURLs: false }));
registerRoute(new PrecacheRoute(models, { directoryIndex: '', cleanURLs: false }));

/**
 * The server's trained model: network first, so a new training is seen at once; when the server cannot be
 * reached (or fails), the copy from the last good answer, so recognition keeps working with the last model.
 * A 4xx means the server has no such model any more (labels deleted): offline must not bring the old one back,
 * which Workbox's NetworkFirst cannot express, hence this small strategy.
 */
class TrainedModel extends Strategy {
  protected override async _handle(request: Request, handler: StrategyHandler): Promise<Response> {
    let res: Response;
    try {
      res = await handler.fetch(request);
    } catch (err) {
      const hit = await handler.cacheMatch(request);
      if (hit) return hit;
      throw err;
    }
    if (res.status === 200) {
      handler.waitUntil(handler.cachePut(request, res.clone()));
    } else if (res.status >= 400 && res.status < 500) {
      handler.waitUntil(caches.open(this.cacheName).then((c) => c.delete(request, this.matchOptions)));
    } else if (res.status >= 500) {
      return (await handler.cacheMatch(request)) ?? res;
    }
    return res;
  }
}

/**
 * Stores the server's current trained model at install (keep-model.ts: the compact model, or the files from an
 * older server). The page loads it as soon as it starts, usually before this worker controls the page, and asks
 * again only when the version changes: without this, a first visit followed by the server going away would leave
 * nothing to recognise with. Under AUTH_MODE=oidc the page hands its access token over after sign-in (a worker
 * cannot read the page's storage).
 */
function keepTrained(token?: string): Promise<unknown> {
  return keepTrainedModel({
    origin: self.location.origin,
    fetch: (url, init) => fetch(url, init),
    cache: () => caches.open(TRAINED_CACHE),
    segments: browserSegments(),
    ...(token ? { token } : {}),
  });
}

// Not the compact model's segments: the page keeps them by hash (compact-sync.ts) and drops a deleted person's;
// a cached segments answer would keep that person's templates on the device.
registerRoute(
  ({ url }) => sameOrigin(url) && under(url, TRAINED_INDEX) && !under(url, COMPACT_SEGMENTS_URL),
  new TrainedModel({ cacheName: TRAINED_CACHE, plugins: [isolation], matchOptions: { ignoreVary: true } }),
);

// Built files not precached (onnxruntime-web's 14 MB WASM runs only an operator's YOLO model): kept once
// fetched, so they work offline too; the newest few stay, older builds' copies go.
registerRoute(
  ({ url }) => sameOrigin(url) && url.pathname.startsWith('/assets/'),
  new CacheFirst({
    cacheName: RUNTIME_ASSETS,
    matchOptions: { ignoreVary: true },
    plugins: [isolation, new ExpirationPlugin({ maxEntries: 12, purgeOnQuotaError: true })],
  }),
);
// Model files not precached (an operator's own model): kept once fetched. 200 only (CacheFirst's default):
// never a partial (206) or an error page in place of a model file.
registerRoute(
  ({ url }) => sameOrigin(url) && url.pathname.startsWith('/models/'),
  new CacheFirst({
    cacheName: RUNTIME_MODELS,
    matchOptions: { ignoreVary: true },
    plugins: [isolation, new ExpirationPlugin({ maxEntries: 40, purgeOnQuotaError: true })],
  }),
);

// After a sign-in the page sends its token, so the trained model is kept for offline use under auth as well.
self.addEventListener('message', (event: ExtendableMessageEvent) => {
  const data = event.data as { type?: unknown; token?: unknown } | null;
  if (data?.type === 'keep-trained-model' && typeof data.token === 'string')
    event.waitUntil(keepTrained(data.token).catch(() => undefined));
});
