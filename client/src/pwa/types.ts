/** Types shared by the service worker, its build step (vite.config.ts) and the page side of offline mode. */

/** What the build tells the service worker to download at install (injected by vite.config.ts). */
export interface PrecacheManifest {
  /** The app build's version: a hash of every precached app file, so any change is a new cache. */
  appVersion: string;
  /** The model files' version: a hash of their bytes, so a rebuild without model changes keeps them. */
  modelsVersion: string;
  /** index.html, every built asset the app uses, the web app manifest and its icons (URL paths). */
  app: string[];
  /** The model files the in-browser engines load from /models/ (URL paths). */
  models: string[];
}

/** Messages the page sends the service worker. */
export type SwMessage = { type: 'skip-waiting' };
