/**
 * The web app's build (client/ -> dist/client, served by the Hono server at /) and `npm run dev`, which proxies
 * the API and the model files to a server on 127.0.0.1:8080 (`npm start` in another terminal).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, defineConfig, type Plugin, type Rolldown } from 'vite';
import solid from 'vite-plugin-solid';
import type { PrecacheManifest } from './client/src/pwa/types.js';

const API = process.env.LOOKOUT_API ?? 'http://127.0.0.1:8080';

const REPO = path.dirname(fileURLToPath(import.meta.url));

/** The model files the in-browser engines load (client/src/engine): downloaded by the service worker at install. */
const OFFLINE_MODELS = ['haarcascade_frontalface_alt2.xml', 'face-api/', 'nanodet.json', 'nanodet.bin'];

/**
 * The offline kiosk's service worker: after the app is written, lists what it must precache (index.html,
 * every built file the app uses, the manifest and icons, the engines' model files), versions the list by the
 * files' bytes, and compiles client/src/pwa/sw.ts with that list into dist/client/sw.js (one classic script:
 * every browser with service workers runs it). The bench page's own files are left out.
 */
function offlineKiosk(): Plugin {
  return {
    name: 'lookout-offline-kiosk',
    apply: 'build',
    async writeBundle(options, bundle) {
      const outDir = options.dir!;
      const benchOnly = benchOnlyFiles(bundle);
      const app = listFiles(outDir)
        // onnxruntime-web's 14 MB WASM runs only an operator's YOLO model: cached on first use, not at install.
        .filter((f) => f !== 'sw.js' && f !== 'bench.html' && !f.startsWith('.vite/') && !f.endsWith('.map') && !benchOnly.has(f) && !/\/ort-wasm/.test(f))
        .map((f) => (f === 'index.html' ? '/index.html' : `/${f}`));
      const modelsDir = path.join(REPO, 'public/models');
      const models = OFFLINE_MODELS.flatMap((m) =>
        m.endsWith('/') ? fs.readdirSync(path.join(modelsDir, m)).sort().map((f) => `/models/${m}${f}`) : [`/models/${m}`],
      );
      const appBytes = (p: string) => path.join(outDir, p);
      const modelBytes = (p: string) => path.join(modelsDir, p.slice('/models/'.length));
      const manifest: PrecacheManifest = { appVersion: versionOf(app, appBytes), modelsVersion: versionOf(models, modelBytes), app, models };
      const out = (await build({
        configFile: false,
        root: path.join(REPO, 'client'),
        publicDir: false,
        logLevel: 'warn',
        define: { __LOOKOUT_PRECACHE__: JSON.stringify(manifest) },
        build: {
          write: false,
          emptyOutDir: false,
          target: 'es2022',
          minify: true,
          lib: { entry: path.join(REPO, 'client/src/pwa/sw.ts'), formats: ['iife'], name: 'lookoutServiceWorker', fileName: () => 'sw.js' },
        },
      })) as Rolldown.RolldownOutput | Rolldown.RolldownOutput[];
      const chunk = (Array.isArray(out) ? out : [out]).flatMap((o) => o.output).find((o) => o.type === 'chunk');
      if (!chunk || chunk.type !== 'chunk') throw new Error('the service worker build produced no script');
      fs.writeFileSync(path.join(outDir, 'sw.js'), chunk.code);
      const size = (files: string[], at: (p: string) => string) => files.reduce((n, f) => n + fs.statSync(at(f)).size, 0);
      const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
      this.info(
        `sw.js (app ${manifest.appVersion}, models ${manifest.modelsVersion}) precaches ${app.length} app files (${mb(size(app, appBytes))}) ` +
          `and ${models.length} model files (${mb(size(models, modelBytes))})`,
      );
    },
  };
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
      for (const next of [...item.imports, ...item.dynamicImports, ...(meta?.importedCss ?? []), ...(meta?.importedAssets ?? [])]) visit(next);
    };
    for (const item of Object.values(bundle)) if (item.type === 'chunk' && item.isEntry && item.name === entryName) visit(item.fileName);
    return seen;
  };
  const app = reach('app');
  return new Set([...reach('bench')].filter((f) => !app.has(f)));
}

function listFiles(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(dir, `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/** A short hash of the files' names and bytes: the cache name changes exactly when something to cache does. */
function versionOf(urls: string[], fileOf: (url: string) => string): string {
  const h = createHash('sha256');
  for (const u of urls) h.update(u).update('\0').update(fs.readFileSync(fileOf(u))).update('\0');
  return h.digest('hex').slice(0, 12);
}

export default defineConfig({
  root: 'client',
  // client/public (relative to root): the web app manifest and its icons, copied to dist/client as they are.
  publicDir: 'public',
  plugins: [solid(), offlineKiosk()],
  build: {
    outDir: '../dist/client',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2000,
    // The app, and the in-browser engine bench page (`npm run bench` drives it in headless Chromium).
    rollupOptions: { input: { app: 'client/index.html', bench: 'client/bench.html' } },
  },
  worker: { format: 'es' },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': API, '/models': API },
    // Cross-origin isolation, as the Hono server sends it: SharedArrayBuffer, so WASM threads, in `npm run dev`.
    headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
  },
});
