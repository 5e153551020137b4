/**
 * The web app's build (client/ -> dist/client, served by the Hono server at /) and `npm run dev`, which proxies
 * the API and the model files to a server on 127.0.0.1:8080 (`npm start` in another terminal).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin, type ProxyOptions, type Rolldown } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import solid from 'vite-plugin-solid';

const API = process.env.LOOKOUT_API ?? 'http://127.0.0.1:8080';

const REPO = path.dirname(fileURLToPath(import.meta.url));
const MODELS_DIR = path.join(REPO, 'public/models');

/**
 * The model files the in-browser engines load (client/src/engine): downloaded by the service worker at install.
 * The eye cascade aligns faces before LBPH; the eyeglasses and smile cascades give the chat's features offline too.
 * faceres (7 MB) is the embedding recognizer's other descriptor net: a kiosk whose server trained with
 * EMBEDDING_DESCRIPTOR=faceres-1024 needs it to recognise offline. These entries are not held to
 * maximumFileSizeToCacheInBytes (that limit is for the build's own files).
 */
const OFFLINE_MODELS = [
  'haarcascade_frontalface_alt2.xml',
  'haarcascade_eye.xml',
  'haarcascade_eye_tree_eyeglasses.xml',
  'haarcascade_smile.xml',
  'face-api/',
  'cohort/',
  'faceres.json',
  'faceres.bin',
  'nanodet.json',
  'nanodet.bin',
];

/** Files the build may hold that the app never loads at start: the bench page's, source maps, Vite's own. */
const NOT_PRECACHED = [
  'bench.html',
  '.vite/**',
  '**/*.map',
  // onnxruntime-web's WebGPU build (27 MB, asyncify) is fetched only where a real GPU is found: cached on first use.
  // Its plain WASM build (14 MB, 3.7 MB compressed) is precached: NanoDet runs on it, offline too.
  '**/ort-wasm-simd-threaded.asyncify*',
];

/**
 * The model files, for the service worker's precache: served by the server from public/models (not part of
 * the build), so listed here with a revision from their bytes. A rebuild without model changes keeps the
 * same revisions, and the device keeps its copies.
 */
function modelEntries(): { url: string; revision: string }[] {
  const files = OFFLINE_MODELS.flatMap((m) =>
    m.endsWith('/')
      ? fs
          .readdirSync(path.join(MODELS_DIR, m))
          .sort()
          .map((f) => `${m}${f}`)
      : [m],
  );
  return files.map((f) => ({
    url: `/models/${f}`,
    revision: createHash('sha256')
      .update(fs.readFileSync(path.join(MODELS_DIR, f)))
      .digest('hex')
      .slice(0, 16),
  }));
}

/**
 * `npm run dev`'s proxy to the API. Vite sends the API's own Host (changeOrigin), so the page's origin
 * (http://127.0.0.1:5173) would reach the API as another site's and its POSTs be refused (server/http/security.ts).
 * A request from this dev server's own page is passed on with the API's origin instead; any other page's origin
 * is passed on as it is, and refused.
 */
function apiProxy(target: string): ProxyOptions {
  const apiOrigin = new URL(target).origin;
  return {
    target,
    changeOrigin: true,
    configure: (proxy) => {
      proxy.on('proxyReq', (proxyReq, req) => {
        const { origin, host } = req.headers;
        if (!origin || !host) return;
        try {
          if (new URL(origin).host === host) proxyReq.setHeader('origin', apiOrigin);
        } catch {
          // `null` or garbage: not this page, passed on as it is.
        }
      });
    },
  };
}

/** The bench page's own chunks, found in the app's bundle and left out of the precache (benchOnlyFiles). */
let benchOnly = new Set<string>();
function findBenchOnly(): Plugin {
  return {
    name: 'lookout-bench-only',
    apply: 'build',
    generateBundle(_options, bundle) {
      benchOnly = benchOnlyFiles(bundle);
    },
  };
}

/**
 * The offline kiosk's service worker (client/src/pwa/sw.ts, Workbox), built by vite-plugin-pwa into
 * dist/client/sw.js, one classic script (iife: every browser with service workers runs it), with the precache
 * list injected: index.html, every built file the app uses, the manifest and its icons (client/public, kept as
 * they are: the plugin writes no manifest of its own), and the engines' model files. The server sends /sw.js
 * with no-cache and Service-Worker-Allowed (server/app.ts); register.ts registers it with scope /.
 */
function offlineKiosk() {
  return VitePWA({
    strategies: 'injectManifest',
    srcDir: 'src/pwa',
    filename: 'sw.ts',
    scope: '/',
    manifest: false,
    injectRegister: false,
    includeManifestIcons: false,
    injectManifest: {
      rollupFormat: 'iife',
      target: 'es2022',
      minify: true,
      sourcemap: false,
      globPatterns: ['**/*'],
      globIgnores: NOT_PRECACHED,
      // The largest app file (the TF.js WASM backends) is a few MB; the build fails rather than leave one out.
      maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
      manifestTransforms: [async (entries) => ({ manifest: entries.filter((e) => !benchOnly.has(e.url)), warnings: [] })],
      additionalManifestEntries: modelEntries(),
    },
  });
}

/** Files (relative to outDir) only the bench page needs: reachable from its entry and not from the app's. */
function benchOnlyFiles(bundle: Rolldown.OutputBundle): Set<string> {
  const reach = (entryName: string) => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const item = bundle[file];
      if (item?.type !== 'chunk') return;
      const meta = (item as { viteMetadata?: { importedCss: Set<string>; importedAssets: Set<string> } }).viteMetadata;
      for (const next of [...item.imports, ...item.dynamicImports, ...(meta?.importedCss ?? []), ...(meta?.importedAssets ?? [])])
        visit(next);
    };
    for (const item of Object.values(bundle)) if (item.type === 'chunk' && item.isEntry && item.name === entryName) visit(item.fileName);
    return seen;
  };
  const app = reach('app');
  return new Set([...reach('bench')].filter((f) => !app.has(f)));
}

export default defineConfig({
  root: 'client',
  // client/public (relative to root): the web app manifest and its icons, copied to dist/client as they are.
  publicDir: 'public',
  plugins: [solid(), findBenchOnly(), offlineKiosk()],
  build: {
    outDir: '../dist/client',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2000,
    // The app, and the in-browser engine bench page (`npm run bench` drives it in headless Chromium).
    // No [PLUGIN_TIMINGS] report: it told every `npm install` (whose prepare builds) how long solid's transform
    // took, which is noise to a user; a slow build is looked into with a profiler instead.
    rollupOptions: { input: { app: 'client/index.html', bench: 'client/bench.html' }, checks: { bundlerTimings: false } },
  },
  worker: { format: 'es', rollupOptions: { checks: { bundlerTimings: false } } },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': apiProxy(API), '/models': apiProxy(API) },
    // Cross-origin isolation, as the Hono server sends it: SharedArrayBuffer, so WASM threads, in `npm run dev`.
    headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
  },
});
