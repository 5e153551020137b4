/// <reference types="vite-plugin-pwa/vanillajs" />
/**
 * Offline support, started once from main.tsx: the sync loop for captures and results queued offline (in
 * every build), and the service worker that keeps the app and its models on the device (production builds
 * only: in `npm run dev` a worker caching Vite's modules would only get in the way). Registration and the
 * update prompt are vite-plugin-pwa's (workbox-window): `/sw.js`, scope `/`, registered after the page's load.
 */
import { createSignal } from 'solid-js';
import { registerSW } from 'virtual:pwa-register';
import { startSync } from './sync';

/** Kiosk tabs stay open for days: ask for a new version this often (the browser also checks on navigation). */
const UPDATE_CHECK_MS = 60 * 60 * 1000;

const [updateReady, setUpdateReady] = createSignal(false);
/** True when a new version of the app is downloaded and waits for `applyUpdate()`. */
export { updateReady };

let update: ((reloadPage?: boolean) => Promise<void>) | null = null;

export function registerOffline(): void {
  startSync();
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  // Not immediate: after the page's own downloads, so the worker fetches the models without slowing the first paint.
  update = registerSW({
    // A new worker installed while an old one controls the page (the very first install is not an update).
    onNeedRefresh: () => setUpdateReady(true),
    onRegisteredSW: (_url, reg) => {
      if (reg) setInterval(() => void reg.update().catch(() => undefined), UPDATE_CHECK_MS);
    },
    onRegisterError: (err: unknown) => console.warn('Lookout: offline mode is not available:', err),
  });
  // An installed kiosk asks the browser not to evict its caches and queue under storage pressure.
  if (matchMedia('(display-mode: standalone)').matches) void navigator.storage?.persist?.().catch(() => false);
}

/** Switches to the downloaded new version; the page reloads once it controls (queued items are in IndexedDB). */
export function applyUpdate(): void {
  void update?.(true);
}
