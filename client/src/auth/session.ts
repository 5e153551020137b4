/**
 * The web app's sign-in state. `GET /api/auth/config` says whether the API wants tokens: with `mode: off` (the
 * default, a kiosk) nothing here does anything and every request goes out as before. With `mode: oidc` the app
 * signs in through the issuer (oidc.ts), keeps the tokens for this tab (sessionStorage: a reload keeps the
 * session, closing the tab ends it), refreshes the access token before it expires, and `authFetch` sends it
 * on every API request.
 *
 * The last config is remembered (localStorage), so an installed app started with the server away still knows
 * whether it runs under auth.
 */
import { createSignal } from 'solid-js';
import {
  type OidcConfig,
  type TokenSet,
  authorizationUrl,
  CALLBACK_PATH,
  exchangeCode,
  type PendingSignIn,
  refresh,
  signOutUrl,
} from './oidc';
import { clearTray } from '../pwa/tray-store';

export type AuthConfig = { mode: 'off' } | ({ mode: 'oidc' } & OidcConfig);

export const ROLE_ADMIN = 'biometric-admin';
const CONFIG_KEY = 'lookout.auth.config';
const TOKENS_KEY = 'lookout.auth.tokens';
const PENDING_KEY = 'lookout.auth.pending';
/** Refresh this long before the access token expires, so a request never leaves with one about to lapse. */
const REFRESH_EARLY_MS = 30_000;
/** The service worker's copy of the trained model (pwa/sw.ts): biometric data, dropped at sign-out. */
const TRAINED_CACHE = 'lookout-trained-v1';

const [config, setConfig] = createSignal<AuthConfig | null>(null);
const [tokens, setTokens] = createSignal<TokenSet | null>(null);
const [problem, setProblem] = createSignal<string | null>(null);

export const auth = {
  /** null until /api/auth/config answered (or failed). */
  config,
  enabled: () => config()?.mode === 'oidc',
  user: () => tokens()?.user ?? null,
  isAdmin: () => tokens()?.user.roles.includes(ROLE_ADMIN) ?? false,
  /** Why signing in failed, for the sign-in page. */
  problem,
};

function read<T>(storage: Storage, key: string): T | null {
  try {
    return JSON.parse(storage.getItem(key) ?? 'null') as T | null;
  } catch {
    return null;
  }
}

function keep(next: TokenSet | null): void {
  setTokens(next);
  if (next) sessionStorage.setItem(TOKENS_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(TOKENS_KEY);
}

async function loadConfig(): Promise<AuthConfig> {
  try {
    const res = await fetch('/api/auth/config', { cache: 'no-store' });
    if (res.status === 404) return { mode: 'off' }; // a server from before auth
    if (!res.ok) throw new Error(String(res.status));
    const body = (await res.json()) as { mode: string; issuer: string | null; client_id: string | null };
    const cfg: AuthConfig =
      body.mode === 'oidc' && body.issuer && body.client_id
        ? { mode: 'oidc', issuer: body.issuer, clientId: body.client_id }
        : { mode: 'off' };
    localStorage.setItem(CONFIG_KEY, JSON.stringify(cfg));
    return cfg;
  } catch {
    return read<AuthConfig>(localStorage, CONFIG_KEY) ?? { mode: 'off' };
  }
}

let started: Promise<void> | null = null;

/** Loads the config once, restores the tab's session, and finishes a sign-in when the IdP sent us back. */
export function startAuth(): Promise<void> {
  started ??= (async () => {
    const cfg = await loadConfig();
    if (cfg.mode === 'oidc') {
      setTokens(read<TokenSet>(sessionStorage, TOKENS_KEY));
      if (location.pathname === CALLBACK_PATH) await finishSignIn(cfg);
    }
    setConfig(cfg);
  })();
  return started;
}

async function finishSignIn(cfg: OidcConfig): Promise<void> {
  const pending = read<PendingSignIn>(sessionStorage, PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const here = new URL(location.href);
  try {
    if (!pending) throw new Error('This sign-in was not started here (or was finished already). Sign in again.');
    const signedIn = await exchangeCode(cfg, here, pending);
    keep(signedIn);
    setProblem(null);
    // The service worker keeps the trained model for offline use; it needs the token to fetch it (pwa/sw.ts).
    void navigator.serviceWorker?.ready
      .then((reg) => reg.active?.postMessage({ type: 'keep-trained-model', token: signedIn.accessToken }))
      .catch(() => undefined);
  } catch (err) {
    // The IdP's own reason when it denied (error_description), else what went wrong here.
    const denied = here.searchParams.get('error_description') ?? here.searchParams.get('error');
    setProblem(denied ? `The sign-in was refused: ${denied}` : err instanceof Error ? err.message : String(err));
    // The sign-in page stands in for every page now; drop the spent code from the address bar.
    history.replaceState(null, '', '/');
  }
  returnTo = pending?.returnTo && !pending.returnTo.startsWith(CALLBACK_PATH) ? pending.returnTo : '/';
}

let returnTo = '/';
/** Where the app was when the sign-in started: the callback page goes back there (AuthCallback.tsx). */
export const signedInReturnTo = () => returnTo;

export async function signIn(returnTo = `${location.pathname}${location.search}`): Promise<void> {
  const cfg = config();
  if (cfg?.mode !== 'oidc') return;
  try {
    const { url, pending } = await authorizationUrl(cfg, returnTo);
    sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
    location.assign(url);
  } catch (err) {
    setProblem(`Cannot reach the sign-in service (${cfg.issuer}): ${err instanceof Error ? err.message : String(err)}`);
  }
}

export async function signOut(): Promise<void> {
  const cfg = config();
  const current = tokens();
  keep(null);
  await caches?.delete(TRAINED_CACHE).catch(() => false);
  // The Training page's unsaved photos kept on this device (pwa/tray-store.ts) are faces too.
  await clearTray().catch(() => undefined);
  if (cfg?.mode !== 'oidc') return;
  const url = await signOutUrl(cfg, current).catch(() => null);
  // End the IdP's session too, or the next sign-in would pass through without asking.
  if (url) location.assign(url);
}

let refreshing: Promise<TokenSet | null> | null = null;

/** Refreshes now (concurrent callers share one); null when the session is over (signed out at the IdP, expired). */
function refreshNow(cfg: OidcConfig, current: TokenSet): Promise<TokenSet | null> {
  refreshing ??= refresh(cfg, current)
    .then((next) => {
      keep(next);
      return next;
    })
    .catch((err: unknown) => {
      // No answer (offline): keep the tokens and let the request fail as unreachable; refused: signed out.
      if (err instanceof TypeError) return current;
      keep(null);
      return null;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** A valid access token, refreshed first when it is about to expire; null when off or signed out. */
export async function accessToken(): Promise<string | null> {
  await startAuth();
  const cfg = config();
  const current = tokens();
  if (cfg?.mode !== 'oidc' || !current) return null;
  if (Date.now() < current.expiresAt - REFRESH_EARLY_MS) return current.accessToken;
  return (await refreshNow(cfg, current))?.accessToken ?? null;
}

const isApi = (url: URL) => url.origin === location.origin && url.pathname.startsWith('/api/');

/**
 * fetch for the API: the bearer token on same-origin `/api/` requests under auth; a 401 gets one refresh and
 * one retry (a token revoked or signed by a rotated key). Off: plain fetch.
 */
export async function authFetch(input: string, init: RequestInit = {}): Promise<Response> {
  const url = new URL(input, location.href);
  const token = isApi(url) ? await accessToken() : null;
  if (!token) return fetch(input, init);
  const send = (t: string) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${t}`);
    return fetch(input, { ...init, headers });
  };
  const res = await send(token);
  const cfg = config();
  const current = tokens();
  if (res.status !== 401 || cfg?.mode !== 'oidc' || !current || init.body instanceof ReadableStream) return res;
  const next = await refreshNow(cfg, current);
  return next ? send(next.accessToken) : res;
}
