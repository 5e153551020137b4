/**
 * The shell: header with the navigation, a banner while the server cannot be reached, and the current page.
 * Pages other than the dashboard load on first visit, so the first load stays small.
 */
import { createMemo, For, lazy, Show, Suspense, type Component } from 'solid-js';
import { Dynamic } from 'solid-js/web';
import { Notice } from './components/Notice';
import { navigate, path } from './lib/router';
import { serverStatus } from './lib/server-status';
import { SyncStatus } from './pwa/SyncStatus';
import { Dashboard } from './pages/Dashboard';

interface PageEntry {
  path: string;
  title: string;
  component: Component;
}

export const PAGES: PageEntry[] = [
  { path: '/', title: 'Dashboard', component: Dashboard },
  { path: '/training', title: 'Training', component: lazy(() => import('./pages/Training')) },
  { path: '/recognize', title: 'Live recognition', component: lazy(() => import('./pages/Recognize')) },
  { path: '/objects', title: 'Objects', component: lazy(() => import('./pages/Objects')) },
  { path: '/chat', title: 'Chat', component: lazy(() => import('./pages/Chat')) },
  { path: '/config', title: 'Models', component: lazy(() => import('./pages/ModelConfig')) },
];

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{path()}</code>. <a href="/" onClick={(e) => (e.preventDefault(), navigate('/'))}>Go to the dashboard</a>.
      </p>
    </section>
  );
}

export function App() {
  const page = createMemo(() => PAGES.find((p) => p.path === path()));
  createMemo(() => (document.title = page() ? `${page()!.title} · Lookout` : 'Lookout'));
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <a class="brand" href="/" onClick={(e) => (e.preventDefault(), navigate('/'))}>
          Lookout
        </a>
        <nav aria-label="Main">
          <ul>
            <For each={PAGES}>
              {(p) => (
                <li>
                  <a href={p.path} aria-current={path() === p.path ? 'page' : undefined} onClick={(e) => (e.preventDefault(), navigate(p.path))}>
                    {p.title}
                  </a>
                </li>
              )}
            </For>
          </ul>
        </nav>
        <SyncStatus />
      </header>
      <Show when={serverStatus.reachable() === false}>
        <div class="banner">
          <Notice kind="error" title="Server unreachable" testId="server-unreachable">
            {serverStatus.error()} Lookout keeps trying every few seconds.
          </Notice>
        </div>
      </Show>
      <main id="main" tabindex="-1">
        <Suspense fallback={<p role="status">Loading the page…</p>}>
          <Dynamic component={page()?.component ?? NotFound} />
        </Suspense>
      </main>
    </>
  );
}
