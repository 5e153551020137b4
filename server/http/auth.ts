/**
 * Bearer tokens on the API under AUTH_MODE=oidc (docs/identity.md, "Authentication"). Every /api request but the open
 * operations of the role table (shared/api/roles.ts) must carry `Authorization: Bearer <JWT>` signed by a key of
 * OIDC_ISSUER's JWKS, issued by it, for OIDC_AUDIENCE, not expired, with the operation's role in
 * `realm_access.roles` (Keycloak's shape, which Lookout's own identity provider writes too).
 *
 * Fails closed: a path the table does not name needs a valid token too, and when the issuer's keys cannot be
 * fetched the request is denied (503 `auth_unavailable`), never let through. Tokens are never logged or echoed.
 */
import type { MiddlewareHandler } from 'hono';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { normalizeLabel } from '../../shared/api/labels.js';
import { roleAllows, type Access } from '../../shared/api/roles.js';
import type { ApiRoute } from '../../shared/api/route.js';
import { apiRoutes } from '../../shared/api/routes.js';
import type { Logger } from '../logger.js';
import { ApiError, sendError } from './errors.js';

/** Who called, as the token says (set on the context of every authorised request). */
export interface Principal {
  subject: string;
  username: string | null;
  roles: string[];
  /** The client the token was issued to (`azp`, else `client_id`). */
  client: string | null;
  /**
   * `client` for a client-credentials token, `user` otherwise: told by what the token says about its grant, never by a
   * name a user can choose (#35, see clientCredentialsOf).
   */
  kind: 'user' | 'client';
}

declare module 'hono' {
  interface ContextVariableMap {
    /** The caller under AUTH_MODE=oidc (absent with AUTH_MODE=off and on open operations). */
    principal: Principal;
  }
}

export interface BearerAuthOptions {
  /** OIDC_ISSUER, compared exactly with the tokens' `iss` and the discovery document's `issuer`. */
  issuer: string;
  audience: string;
  /** OIDC_JWKS_URL; empty: the discovery document's `jwks_uri`. */
  jwksUrl: string;
  /** Least time between two fetches of the keys (OIDC_JWKS_COOLDOWN_MS). */
  cooldownMs: number;
  log: Logger;
  /** One fetch of the discovery document or the keys (default 5 s). */
  timeoutMs?: number;
  /**
   * When the person of this label was last deleted (`DELETE /api/images/{label}`; null: never). A user's token
   * issued before their label's deletion is refused: the IdP deletes a removed user's face data, so their unexpired
   * access tokens end with it (#28), and a later account of the same name signs in afresh.
   */
  lastDeletion?: (label: string) => Promise<Date | null>;
}

/** Asymmetric signatures only: a JWKS holds public keys, and an HMAC "signed" with one would be forgeable. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Clock skew allowed between the issuer and this server for `exp`, `nbf` and `iat`, in seconds. */
const CLOCK_TOLERANCE_S = 30;
/** Keys are fetched again after this long even when no unknown `kid` comes (jose's default). */
const KEYS_MAX_AGE_MS = 10 * 60_000;
const MAX_TOKEN_CHARS = 16 * 1024;
/** RFC 6750's b64token: `Authorization: Bearer <token>`. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const WWW_REALM = 'lookout';

/** The issuer's keys could not be had: the request is denied with a 503 (fail closed). */
class KeysUnavailable extends Error {}

function causeOf(err: unknown): string {
  if (err instanceof errors.JWKSTimeout || (err instanceof Error && err.name === 'TimeoutError')) return 'timed out';
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** Errors that are the token's fault (401); anything else while checking one is the issuer's side (503). */
const TOKEN_ERRORS = new Set([
  errors.JWTExpired.code,
  errors.JWTClaimValidationFailed.code,
  errors.JWSSignatureVerificationFailed.code,
  errors.JWKSNoMatchingKey.code,
  errors.JWKSMultipleMatchingKeys.code,
  errors.JWSInvalid.code,
  errors.JWTInvalid.code,
  errors.JOSENotSupported.code,
  errors.JOSEAlgNotAllowed.code,
]);

function isTokenError(err: unknown): err is errors.JOSEError {
  return err instanceof errors.JOSEError && TOKEN_ERRORS.has(err.code);
}

/** Why a token was refused, in words that name no part of it. */
function tokenProblem(err: errors.JOSEError, issuer: string, audience: string): string {
  if (err instanceof errors.JWTExpired) {
    const exp = typeof err.payload.exp === 'number' ? new Date(err.payload.exp * 1000).toISOString() : 'an earlier time';
    return `the token expired at ${exp}; sign in again`;
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return `the token was not issued by ${issuer}`;
    if (err.claim === 'aud') return `the token is not meant for this API: its audience does not include ${audience}`;
    if (err.claim === 'nbf') return 'the token is not valid yet';
    if (err.claim === 'exp') return 'the token has no expiry (exp)';
    return `the token's "${err.claim}" claim is not valid`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify with the issuer's key";
  if (err instanceof errors.JWKSNoMatchingKey) return `the token is signed with a key that ${issuer} does not publish`;
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'the token names no key (kid) and the issuer publishes several';
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
    return `the token's signature algorithm is not accepted (only ${ALGORITHMS.join(', ')})`;
  return 'the token is not a well-formed signed JWT';
}

/**
 * The issuer's signing keys: found through its discovery document (or OIDC_JWKS_URL), fetched by jose's remote JWKS
 * (cached; fetched again for an unknown `kid`, at most once per cooldown, and after KEYS_MAX_AGE_MS). Keys fetched
 * within KEYS_MAX_AGE_MS keep verifying while the issuer is down; a key not among them, or keys older than that,
 * need a fetch, and a failed fetch denies. A failed fetch does not drop the cached keys, so a token with a made-up
 * `kid` sent during an outage cannot lock everyone out.
 */
class IssuerKeys {
  private keys: ReturnType<typeof createRemoteJWKSet> | null = null;
  private finding: Promise<ReturnType<typeof createRemoteJWKSet>> | null = null;
  /** Whether the last fetch worked: a change is logged once, not per request. */
  private reachable: boolean | null = null;

  constructor(private readonly options: BearerAuthOptions) {}

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? 5000;
  }

  /** The key resolver jwtVerify calls: a failure to get the keys becomes KeysUnavailable. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const keys = await this.keySet();
    try {
      const key = await keys(header, token);
      this.setReachable(true, '');
      return key;
    } catch (err) {
      if (isTokenError(err)) throw err;
      const where = this.options.jwksUrl || 'the jwks_uri of the discovery document';
      throw this.unavailable(`the issuer's keys could not be fetched from ${where} (${causeOf(err)})`);
    }
  };

  /** Fetches the keys once at start, so the first request need not wait and a bad setting shows in the log at once. */
  async warmUp(): Promise<void> {
    try {
      await (await this.keySet()).reload();
      this.setReachable(true, '');
    } catch (err) {
      if (err instanceof KeysUnavailable) return;
      this.unavailable(`the issuer's keys could not be fetched from ${this.options.jwksUrl || 'its jwks_uri'} (${causeOf(err)})`);
    }
  }

  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.keys) return this.keys;
    // Concurrent requests share one discovery; a failed one is tried again by the next request.
    this.finding ??= this.find().finally(() => {
      this.finding = null;
    });
    this.keys = await this.finding;
    return this.keys;
  }

  private async find(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const url = this.options.jwksUrl || (await this.discover());
    return createRemoteJWKSet(new URL(url), {
      timeoutDuration: this.timeoutMs,
      cooldownDuration: this.options.cooldownMs,
      cacheMaxAge: KEYS_MAX_AGE_MS,
    });
  }

  /** `jwks_uri` from `<issuer>/.well-known/openid-configuration`, whose `issuer` must be OIDC_ISSUER exactly. */
  private async discover(): Promise<string> {
    const { issuer } = this.options;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(url, {
        redirect: 'manual',
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new Error(`answered ${res.status}`);
      }
      doc = (await res.json()) as typeof doc;
    } catch (err) {
      throw this.unavailable(`the issuer's discovery document ${url} could not be read (${causeOf(err)})`);
    }
    if (doc?.issuer !== issuer)
      throw this.unavailable(`the discovery document ${url} names the issuer ${JSON.stringify(doc?.issuer)}, not OIDC_ISSUER ${issuer}`);
    if (typeof doc.jwks_uri !== 'string' || !/^https?:\/\//.test(doc.jwks_uri))
      throw this.unavailable(`the discovery document ${url} has no http(s) jwks_uri`);
    return doc.jwks_uri;
  }

  private unavailable(reason: string): KeysUnavailable {
    this.setReachable(false, reason);
    return new KeysUnavailable(`${reason}; requests that need a token are denied until it can be checked`);
  }

  private setReachable(ok: boolean, reason: string): void {
    if (this.reachable === ok) return;
    this.reachable = ok;
    if (ok) this.options.log.info(`AUTH_MODE=oidc: the keys of ${this.options.issuer} are fetched; tokens are checked`);
    else this.options.log.warn(`AUTH_MODE=oidc: ${reason}; requests that need a token are denied (503 auth_unavailable)`);
  }
}

interface Operation {
  method: string;
  pattern: RegExp;
  access: Access;
}

/** The route table's operations under `/api`, with who may call each. */
function operations(): Operation[] {
  return Object.values(apiRoutes as Record<string, ApiRoute & { access: Access }>).map((route) => {
    const literal = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    return { method: route.method.toUpperCase(), pattern: new RegExp(`^/api${literal}$`), access: route.access };
  });
}

/** A header value's quoted-string: no quote, backslash or control character can break out of it. */
function quoted(text: string): string {
  const safe = [...text].map((ch) => (ch === '"' || ch === '\\' || ch < ' ' || ch === '\x7f' ? ' ' : ch)).join('');
  return `"${safe}"`;
}

function rolesOf(payload: JWTPayload): string[] {
  const roles = (payload.realm_access as { roles?: unknown } | undefined)?.roles;
  return Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [];
}

/**
 * #35: the client a client-credentials token was issued to, or null for any other token. Keycloak writes the
 * service account's client in `client_id` (its "Client ID" service-account mapper; `clientId` before Keycloak 21)
 * only into client-credentials tokens, and Lookout's IdP does the same (server/idp/claims.ts; its user tokens carry
 * no `client_id`); the token's user, when it names one, must then be that client's service account. A user cannot
 * choose these claims, so a user named `service-account-...` stays a user (before, the name alone made a client,
 * which skipped the deletion check below and audited them as the app).
 */
function clientCredentialsOf(payload: JWTPayload, username: string | null): string | null {
  const marker = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.clientId === 'string' ? payload.clientId : null;
  if (!marker) return null;
  if (typeof payload.azp === 'string' && payload.azp !== marker) return null;
  return username === null || username === `service-account-${marker}` ? marker : null;
}

/** Who a verified token speaks for. */
export function principalOf(payload: JWTPayload, roles: string[]): Principal {
  const username = typeof payload.preferred_username === 'string' ? payload.preferred_username : null;
  const client = typeof payload.azp === 'string' ? payload.azp : typeof payload.client_id === 'string' ? payload.client_id : null;
  const kind = clientCredentialsOf(payload, username) === null ? 'user' : 'client';
  return { subject: typeof payload.sub === 'string' ? payload.sub : '', username, roles, client, kind };
}

export class BearerAuth {
  private readonly keys: IssuerKeys;
  private readonly operations = operations();

  constructor(private readonly options: BearerAuthOptions) {
    this.keys = new IssuerKeys(options);
  }

  /** Logs the configuration and fetches the keys in the background (the server starts either way). */
  start(): void {
    const { issuer, audience, log } = this.options;
    log.info(`AUTH_MODE=oidc: the API takes bearer tokens of ${issuer} for the audience ${audience}`);
    const { protocol, hostname } = new URL(issuer);
    if (protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(hostname))
      log.warn(`OIDC_ISSUER is plain http: its keys could be replaced on the way; use https beyond this machine`);
    void this.keys.warmUp();
  }

  /** The access an /api request needs: its operation's, or a user's for a path the table does not name. */
  accessFor(method: string, path: string): Access {
    const m = method === 'HEAD' ? 'GET' : method;
    return this.operations.find((op) => op.method === m && op.pattern.test(path))?.access ?? 'biometric-user';
  }

  /** For `api.use('*', ...)` on the app mounted at /api. */
  middleware(): MiddlewareHandler {
    const { issuer, audience, log } = this.options;
    return async (c, next) => {
      // A CORS preflight never carries credentials (webSecurity answers or refuses it first).
      if (c.req.method === 'OPTIONS') return next();
      const access = this.accessFor(c.req.method, c.req.path);
      if (access === 'public') return next();

      const deny = (err: ApiError, challenge: string | null): Response => {
        log.debug(`${c.req.method} ${c.req.path} denied: ${err.code}: ${err.message}`, { request_id: c.get('requestId') });
        if (challenge) c.header('www-authenticate', challenge);
        return sendError(c, err);
      };
      const header = c.req.header('authorization');
      // No header, another scheme, or `Bearer` with nothing after it: no token (RFC 6750 3.1: no error code).
      if (!header || !/^Bearer\s+\S/i.test(header)) {
        const scheme = (header ?? '')
          .split(/\s/, 1)[0]
          .replace(/[^A-Za-z0-9-]/g, '')
          .slice(0, 20);
        const got = scheme && scheme.toLowerCase() !== 'bearer' ? `; got ${scheme} authorization` : '';
        return deny(
          new ApiError('missing_token', `this endpoint needs a bearer token from ${issuer} (Authorization: Bearer <access token>)${got}`),
          `Bearer realm="${WWW_REALM}"`,
        );
      }
      const token = header.length <= MAX_TOKEN_CHARS + 7 ? BEARER.exec(header)?.[1] : undefined;
      const invalid = (message: string) =>
        deny(
          new ApiError('invalid_token', message),
          `Bearer realm="${WWW_REALM}", error="invalid_token", error_description=${quoted(message)}`,
        );
      if (!token) return invalid('the Authorization header is not "Bearer <token>" with one well-formed token');

      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, this.keys.getKey, {
          issuer,
          audience,
          algorithms: ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        if (isTokenError(err)) return invalid(tokenProblem(err, issuer, audience));
        if (err instanceof KeysUnavailable) return deny(new ApiError('auth_unavailable', err.message), null);
        // Whatever else went wrong, the token was not verified: deny.
        log.warn(`AUTH_MODE=oidc: a token could not be checked: ${err instanceof Error ? err.message : String(err)}`);
        return deny(new ApiError('auth_unavailable', 'the token could not be checked; try again'), null);
      }

      const roles = rolesOf(payload);
      const principal = principalOf(payload, roles);
      // Set before the deletion and role checks, so a refusal is attributed too (the audit log, server/audit); the
      // request ends there.
      c.set('principal', principal);
      if (principal.kind === 'user' && principal.username !== null && this.options.lastDeletion) {
        const label = normalizeLabel(principal.username);
        let deletedAt: Date | null = null;
        try {
          deletedAt = label.ok ? await this.options.lastDeletion(label.label) : null;
        } catch (err) {
          log.warn(`AUTH_MODE=oidc: deletions could not be read: ${err instanceof Error ? err.message : String(err)}`);
          return deny(new ApiError('auth_unavailable', 'the token could not be checked; try again'), null);
        }
        // `iat` has whole seconds: a token of the deletion's own second is refused too (fail closed; a new account
        // cannot sign up that fast); one without `iat` counts as older.
        const issuedMs = typeof payload.iat === 'number' ? payload.iat * 1000 : Number.NEGATIVE_INFINITY;
        if (deletedAt && issuedMs <= deletedAt.getTime())
          return invalid('the user was removed (their face data deleted) after this token was issued; sign in again');
      }
      if (!roleAllows(access, roles)) {
        const message = `this endpoint needs the role ${access}; the token has ${roles.filter((r) => r.startsWith('biometric-')).join(', ') || 'neither biometric-user nor biometric-admin'}`;
        return deny(
          new ApiError('insufficient_role', message),
          `Bearer realm="${WWW_REALM}", error="insufficient_scope", error_description=${quoted(message)}`,
        );
      }
      return next();
    };
  }
}
