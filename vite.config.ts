/**
 * The web app's build (client/ -> dist/client, served by the Hono server at /) and `npm run dev`, which proxies
 * the API and the model files to a server on 127.0.0.1:8080 (`npm start` in another terminal).
 */
import { defineConfig } from 'vite';
import solid from 'vite-plugin-solid';

const API = process.env.LOOKOUT_API ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: 'client',
  publicDir: false,
  plugins: [solid()],
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
  },
});
