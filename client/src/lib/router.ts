/**
 * A small history router: the app has six flat pages, so a signal holding the path is all it needs. The
 * server answers every non-API path with index.html, so deep links and reloads work.
 */
import { createSignal } from 'solid-js';

const [path, setPath] = createSignal(location.pathname);
window.addEventListener('popstate', () => setPath(location.pathname));

export { path };

export function navigate(to: string): void {
  if (to === location.pathname) return;
  history.pushState(null, '', to);
  setPath(to);
  window.scrollTo(0, 0);
}
