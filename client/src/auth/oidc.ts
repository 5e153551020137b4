/**
 * The OpenID Connect protocol steps of the web app, with oauth4webapi: discovery, the authorization request
 * (code + PKCE S256, state), the code exchange, refresh, revocation and the end-session URL. The app is a public
 * client (`lookout-app`): no secret, PKCE binds the code to this browser.
 */
import * as oauth from 'oauth4webapi';

export interface OidcConfig {
  issuer: string;
  clientId: string;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** Epoch ms at which the access token expires. */
  expiresAt: number;
  user: { name: string; roles: string[] };
}

export const CALLBACK_PATH = '/auth/callback';
const SCOPE = 'openid profile roles';

/** Plain http only where nothing here has TLS (a kiosk on 127.0.0.1, the tests): never an http issuer from an https app. */
function insecureAllowed(issuer: string): boolean {
  return new URL(issuer).protocol === 'http:' && location.protocol === 'http:';
}

const servers = new Map<string, Promise<oauth.AuthorizationServer>>();

export function authorizationServer(cfg: OidcConfig): Promise<oauth.AuthorizationServer> {
  let found = servers.get(cfg.issuer);
  if (!found) {
    const issuer = new URL(cfg.issuer);
    found = oauth
      .discoveryRequest(issuer, { algorithm: 'oidc', [oauth.allowInsecureRequests]: insecureAllowed(cfg.issuer) })
      .then((res) => oauth.processDiscoveryResponse(issuer, res));
    // A failed discovery (IdP down) is tried again next time.
    found.catch(() => servers.delete(cfg.issuer));
    servers.set(cfg.issuer, found);
  }
  return found;
}

const options = (cfg: OidcConfig) => ({ [oauth.allowInsecureRequests]: insecureAllowed(cfg.issuer) });
const client = (cfg: OidcConfig): oauth.Client => ({ client_id: cfg.clientId });
export const redirectUri = () => `${location.origin}${CALLBACK_PATH}`;

/** What must survive the round trip through the IdP (sessionStorage): the PKCE verifier, the state, where to go back. */
export interface PendingSignIn {
  verifier: string;
  state: string;
  returnTo: string;
}

export async function authorizationUrl(cfg: OidcConfig, returnTo: string): Promise<{ url: string; pending: PendingSignIn }> {
  const as = await authorizationServer(cfg);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', cfg.clientId);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', redirectUri());
  url.searchParams.set('scope', SCOPE);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url: url.href, pending: { verifier, state, returnTo } };
}

/** The user as the ID token names them: `preferred_username` and `realm_access.roles`, as Keycloak writes them. */
function userOf(claims: Record<string, unknown> | undefined, previous?: TokenSet['user']): TokenSet['user'] {
  if (!claims) return previous ?? { name: '', roles: [] };
  const roles = (claims.realm_access as { roles?: unknown } | undefined)?.roles;
  return {
    name: String(claims.preferred_username ?? claims.name ?? claims.sub ?? ''),
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [],
  };
}

function tokenSet(res: oauth.TokenEndpointResponse, previous?: TokenSet): TokenSet {
  return {
    accessToken: res.access_token,
    // A refresh answer may omit a new refresh token (keep the old) or rotate it (take the new).
    refreshToken: res.refresh_token ?? previous?.refreshToken,
    idToken: res.id_token ?? previous?.idToken,
    expiresAt: Date.now() + (res.expires_in ?? 60) * 1000,
    user: userOf(oauth.getValidatedIdTokenClaims(res) as Record<string, unknown> | undefined, previous?.user),
  };
}

/** Redeems the code of the IdP's redirect (`currentUrl`), checking the state and the PKCE verifier. */
export async function exchangeCode(cfg: OidcConfig, currentUrl: URL, pending: PendingSignIn): Promise<TokenSet> {
  const as = await authorizationServer(cfg);
  const params = oauth.validateAuthResponse(as, client(cfg), currentUrl, pending.state);
  const res = await oauth.authorizationCodeGrantRequest(
    as,
    client(cfg),
    oauth.None(),
    params,
    redirectUri(),
    pending.verifier,
    options(cfg),
  );
  return tokenSet(await oauth.processAuthorizationCodeResponse(as, client(cfg), res, { requireIdToken: true }));
}

export async function refresh(cfg: OidcConfig, current: TokenSet): Promise<TokenSet> {
  if (!current.refreshToken) throw new Error('no refresh token');
  const as = await authorizationServer(cfg);
  const res = await oauth.refreshTokenGrantRequest(as, client(cfg), oauth.None(), current.refreshToken, options(cfg));
  return tokenSet(await oauth.processRefreshTokenResponse(as, client(cfg), res), current);
}

/** Revokes the refresh token (best effort) and gives the IdP's end-session URL to leave through, if it has one. */
export async function signOutUrl(cfg: OidcConfig, current: TokenSet | null): Promise<string | null> {
  const as = await authorizationServer(cfg);
  if (current?.refreshToken && as.revocation_endpoint) {
    await oauth
      .revocationRequest(as, client(cfg), oauth.None(), current.refreshToken, options(cfg))
      .then((res) => oauth.processRevocationResponse(res))
      .catch(() => undefined);
  }
  if (!as.end_session_endpoint) return null;
  const url = new URL(as.end_session_endpoint);
  url.searchParams.set('client_id', cfg.clientId);
  url.searchParams.set('post_logout_redirect_uri', `${location.origin}/`);
  if (current?.idToken) url.searchParams.set('id_token_hint', current.idToken);
  return url.href;
}
