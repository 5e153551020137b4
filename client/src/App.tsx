/**
 * The shell: header with the navigation, a banner while the server cannot be reached, and the current page,
 * routed by @solidjs/router (history mode). The server answers index.html for every app path, and the service
 * worker does offline, so deep links and reloads work. Pages other than the dashboard load on first visit, so
 * the first load stays small.
 */
import { A, Router, useLocation, type RouteDefinition, type RouteSectionProps } from '@solidjs/router';
import { createEffect, lazy, onMount, Show, Suspense, type Component } from 'solid-js';
import { AuthCallback } from './auth/AuthCallback';
import { AuthGate } from './auth/AuthGate';
import { auth, startAuth } from './auth/session';
import { UserMenu } from './auth/UserMenu';
import { Notice } from './components/Notice';
import { MainNav } from './components/shell/MainNav';
import { serverStatus } from './lib/server-status';
import { SyncStatus } from './pwa/SyncStatus';
import { Dashboard } from './pages/Dashboard';

interface PageEntry {
  path: string;
  title: string;
  component: Component;
  /** Under auth, shown to `biometric-admin` only (their API calls need it); `auth`: only under auth at all. */
  admin?: 'auth' | true;
  /** Listed only while this says the page can be used (its route stays, and says why not). */
  available?: () => boolean;
}

export const PAGES: PageEntry[] = [
  { path: '/', title: 'Dashboard', component: Dashboard },
  { path: '/training', title: 'Training', component: lazy(() => import('./pages/Training')), admin: true },
  // #26 faces-page: what Lookout saw, to review (sightings are biometric data: biometric-admin).
  { path: '/faces', title: 'Faces', component: lazy(() => import('./pages/Faces')), admin: true },
  { path: '/recognize', title: 'Live recognition', component: lazy(() => import('./pages/Recognize')) },
  { path: '/objects', title: 'Objects', component: lazy(() => import('./pages/Objects')) },
  // Listed while PPE checks are switched on (and while /api/ready has not answered yet): a menu item that only ever
  // says "switched off" is a dead end.
  {
    path: '/safety',
    title: 'Safety',
    component: lazy(() => import('./pages/Safety')),
    available: () => serverStatus.ready()?.ppe !== 'disabled',
  },
  { path: '/chat', title: 'Chat', component: lazy(() => import('./pages/Chat')) },
  { path: '/config', title: 'Models', component: lazy(() => import('./pages/ModelConfig')), admin: true },
  // #26 audit: listed with auth off too, for its audit log (the IdP's users only under auth).
  { path: '/admin', title: 'Admin', component: lazy(() => import('./pages/Admin')), admin: true },
];

/** Whether the navigation shows a page: all of them with auth off (but Admin, which needs the IdP), else by role. */
function listed(p: PageEntry): boolean {
  if (p.available && !p.available()) return false;
  if (!p.admin) return true;
  if (!auth.enabled()) return p.admin !== 'auth';
  return auth.isAdmin();
}

function NotFound() {
  const location = useLocation();
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{location.pathname}</code>. <A href="/">Go to the dashboard</A>.
      </p>
    </section>
  );
}

function Shell(props: RouteSectionProps) {
  const location = useLocation();
  createEffect(() => {
    const page = PAGES.find((p) => p.path === location.pathname);
    document.title = page ? `${page.title} · Lookout` : 'Lookout';
  });
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <A class="brand" href="/" end>
          Lookout
        </A>
        {/* On a phone the links and the account menu open from a Menu button (components/shell/MainNav.tsx). */}
        <MainNav links={PAGES.filter(listed)}>
          <UserMenu />
        </MainNav>
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
        <AuthGate>
          <Suspense fallback={<p role="status">Loading the page…</p>}>{props.children}</Suspense>
        </AuthGate>
      </main>
    </>
  );
}

/** Whether a page has been shown yet: the first one (a load, a reload) leaves the focus where the browser put it. */
let firstPage = true;

/**
 * Moves the focus to a page's main heading once it is in the document (a page shown by a transition is built before
 * it is put in), as a screen reader user expects after following a link: otherwise the focus stays on the link of
 * the page just left. The heading gets tabindex=-1: focusable from here, not a stop for Tab.
 */
export function focusHeading(root: ParentNode, deadline = performance.now() + 5000): void {
  const h1 = root.querySelector('h1');
  if (h1?.isConnected) {
    if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
    h1.focus();
    return;
  }
  if (performance.now() < deadline) requestAnimationFrame(() => focusHeading(root, deadline));
}

/** A routed page in a box of its own (display: contents), so its heading is found in it and nowhere else. */
function routed(Page: Component): Component {
  return () => {
    let box!: HTMLDivElement;
    onMount(() => {
      if (firstPage) firstPage = false;
      else focusHeading(box);
    });
    return (
      <div ref={box} class="page-root">
        <Page />
      </div>
    );
  };
}

const ROUTES: RouteDefinition[] = [
  ...PAGES.map((p) => ({ path: p.path, component: routed(p.component) })),
  // #36 2: a person's page, reached from the Faces and Training pages (not a menu item).
  { path: '/people/:label', component: routed(lazy(() => import('./pages/Person'))) },
  { path: '/auth/callback', component: AuthCallback },
  { path: '*404', component: routed(NotFound) },
];

export function App() {
  void startAuth();
  return <Router root={Shell}>{ROUTES}</Router>;
}
