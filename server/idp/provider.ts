/**
 * The oidc-provider configuration of a realm: file storage, the persisted keys, the realm's clients, Keycloak's
 * endpoint paths and claims, JWT access tokens for the backend, PKCE required for every authorization request.
 */
import { errors, type KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { Logger } from '../logger.js';
import { customizeAccessToken, extraTokenClaimsWith, findAccountWith, SCOPE_CLAIMS } from './claims.js';
import { clientMetadata, clientNames } from './clients.js';
import { FileAdapter } from './file-adapter.js';
import { SIGNING_ALG, type SigningKey } from './keys.js';
import { escapeHtml, logoutPage, messagePage, PAGE_CSP } from './pages.js';
import type { IdpSettings } from './settings.js';
import type { UserStore } from './users.js';

/** Keycloak's paths under `/realms/<realm>`, so a client set up for a Keycloak realm only changes the host. */
export const KEYCLOAK_ROUTES = {
  authorization: '/protocol/openid-connect/auth',
  token: '/protocol/openid-connect/token',
  jwks: '/protocol/openid-connect/certs',
  userinfo: '/protocol/openid-connect/userinfo',
  end_session: '/protocol/openid-connect/logout',
  introspection: '/protocol/openid-connect/token/introspect',
  revocation: '/protocol/openid-connect/revoke',
};

export interface ProviderDeps {
  issuer: string;
  settings: IdpSettings;
  keys: { signing: SigningKey[]; cookies: string[] };
  users: UserStore;
  /** Where the adapter keeps its records (`IDP_DATA_DIR/oidc`). */
  storeDir: string;
  log: Logger;
}

/** What the page callbacks (errors, sign-out) set of Koa's context. */
interface HtmlContext {
  type: string;
  body: string;
  set(name: string, value: string): void;
}

export function createProvider({ issuer, settings, keys, users, storeDir, log }: ProviderDeps): Provider {
  const mountPath = new URL(issuer).pathname.replace(/\/+$/, '');
  const names = clientNames(settings.realm);
  // Access tokens are for the Lookout API: its URL is the resource indicator, `<realm>-backend` the audience.
  const backend = settings.backendUrl;
  const resourceServer = {
    scope: 'openid profile roles',
    audience: names.backend,
    accessTokenTTL: settings.accessTokenTtl,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: SIGNING_ALG } },
  };

  const provider = new Provider(issuer, {
    adapter: FileAdapter.under(storeDir),
    clients: clientMetadata(settings),
    jwks: { keys: keys.signing },
    cookies: {
      keys: keys.cookies,
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    routes: KEYCLOAK_ROUTES,
    scopes: ['openid', 'profile', 'roles', 'offline_access'],
    claims: Object.fromEntries(Object.entries(SCOPE_CLAIMS).map(([scope, claims]) => [scope, [...claims]])),
    // Keycloak puts the profile claims in the ID token too; the web app reads the user's name and roles there.
    conformIdTokenClaims: false,
    findAccount: findAccountWith(users),
    extraTokenClaims: extraTokenClaimsWith(users, settings.realm),
    // #35: only client-credentials tokens carry `client_id`, as Keycloak's do.
    formats: { customizers: { jwt: customizeAccessToken } },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // The sign-out pages in the IdP's own look: oidc-provider's fail the accessibility check (e2e/auth.spec.ts).
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: HtmlContext, form: string) => {
          ctx.type = 'html';
          ctx.set('Content-Security-Policy', PAGE_CSP);
          ctx.body = logoutPage({ realm: settings.realm, form });
        },
        postLogoutSuccessSource: async (ctx: HtmlContext) => {
          ctx.type = 'html';
          ctx.set('Content-Security-Policy', PAGE_CSP);
          ctx.body = messagePage({ realm: settings.realm, title: 'Signed out', message: 'You are signed out.' });
        },
      },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: KoaContextWithOIDC, _client: unknown, oneOf?: string[]) => oneOf ?? backend,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, indicator: string) => {
          if (indicator.replace(/\/+$/, '') !== backend) throw new errors.InvalidTarget(`the only resource is ${backend}`);
          return resourceServer;
        },
      },
    },
    // Refresh tokens for the web app (a public client: oidc-provider rotates them on every use).
    issueRefreshToken: async (_ctx: KoaContextWithOIDC, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    interactions: { url: async (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `${mountPath}/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: settings.accessTokenTtl,
      ClientCredentials: settings.accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 3600,
      Session: settings.sessionTtl,
      Grant: settings.sessionTtl,
      RefreshToken: settings.sessionTtl,
    },
    renderError: async (ctx: HtmlContext, out: Record<string, string>) => {
      ctx.type = 'html';
      ctx.set('Content-Security-Policy', PAGE_CSP);
      const lines = Object.entries(out).map(([k, v]) => `<p><strong>${escapeHtml(k)}</strong>: ${escapeHtml(String(v))}</p>`);
      ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Sign-in error</title></head><body><main><h1>Sign-in error</h1>${lines.join('')}</main></body></html>`;
    },
  });
  provider.proxy = settings.trustProxy;
  provider.on('server_error', (_ctx, err) =>
    log.error('identity provider error', { error: err instanceof Error ? err.message : String(err) }),
  );
  return provider;
}
