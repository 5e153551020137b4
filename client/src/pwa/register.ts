/**
 * Offline support, started once from main.tsx: the sync loop for captures and results queued offline (in
 * every build), and the service worker that keeps the app and its models on the device (production builds
 * only: in `npm run dev` a worker caching Vite's modules would only get in the way).
 */
import { createSignal } from 'solid-js';
import type { SwMessage } from './types';
import { startSync } from './sync';

/** Kiosk tabs stay open for days: ask for a new version this often (the browser also checks on navigation). */
const UPDATE_CHECK_MS = 60 * 60 * 1000;

const [updateReady, setUpdateReady] = createSignal(false);
/** True when a new version of the app is downloaded and waits for `applyUpdate()`. */
export { updateReady };

let waiting: ServiceWorker | null = null;
let applying = false;

export function registerOffline(): void {
  startSync();
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  const register = () => {
    navigator.serviceWorker
      .register('/sw.js', { scope: '/' })
      .then(watch)
      .catch((err: unknown) => console.warn('Lookout: offline mode is not available:', err));
  };
  // After the page's own downloads: the worker then fetches the models without slowing the first paint.
  if (document.readyState === 'complete') register();
  else window.addEventListener('load', register, { once: true });
  // An installed kiosk asks the browser not to evict its caches and queue under storage pressure.
  if (matchMedia('(display-mode: standalone)').matches) void navigator.storage?.persist?.().catch(() => false);
}

function watch(reg: ServiceWorkerRegistration): void {
  const hadController = navigator.serviceWorker.controller !== null;
  // A new worker installed while an old one controls the page is an update (the very first install is not).
  const offer = (sw: ServiceWorker | null) => {
    if (!sw || !navigator.serviceWorker.controller) return;
    waiting = sw;
    setUpdateReady(true);
  };
  offer(reg.waiting);
  reg.addEventListener('updatefound', () => {
    const sw = reg.installing;
    sw?.addEventListener('statechange', () => {
      if (sw.state === 'installed') offer(sw);
    });
  });
  setInterval(() => void reg.update().catch(() => undefined), UPDATE_CHECK_MS);
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    // The new version took over at our request: reload onto its files (queued items are in IndexedDB).
    if (hadController && applying) location.reload();
  });
}

/** Switches to the downloaded new version and reloads the page. */
export function applyUpdate(): void {
  if (!waiting) return;
  applying = true;
  waiting.postMessage({ type: 'skip-waiting' } satisfies SwMessage);
}
