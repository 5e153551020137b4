/**
 * The IdP's user administration API, for the web app's Admin page (and scripts), at Keycloak's admin path
 * `/admin/realms/<realm>/users`:
 *
 *   GET    .../users             the users (never their password hashes)
 *   POST   .../users             { username, temporary_password, admin?, device? } -> 201 the user (must change the
 *                                password and enrol at first sign-in, as `npm run idp -- users add` makes them)
 *   DELETE .../users/<username>  204
 *
 * Every request needs an access token of this IdP (`Authorization: Bearer`, verified against its own signing
 * keys: issuer, audience `<realm>-backend`, expiry) of a user who, as stored now, holds `biometric-admin`: 401
 * without a valid token, 403 without the role or for a client-credentials token (no user behind it: the service
 * client holds `biometric-admin` for the API, never to manage users). The last administrator cannot be removed. The web app is on another origin, so the origins of the app's
 * redirect URIs get CORS answers (the bearer token, not a cookie, is the credential: no CSRF to guard against).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { Logger } from '../logger.js';
import { LockBusyError } from '../storage/file-lock.js';
import { clientNames } from './clients.js';
import { deleteFaceData, type EnrollmentSync, FaceDeletionError } from './enrollment-sync.js';
import { publicJwk, type SigningKey } from './keys.js';
import type { PasskeyAdminRoute } from './passkey-admin.js';
import { isEnrolled, ROLE_ADMIN, type User, UserError, type UserStore } from './users.js';
import type { AdminUser } from '../../shared/api/idp-admin.js';

const MAX_BODY_BYTES = 16 * 1024;

export interface AdminApiDeps {
  issuer: string;
  realm: string;
  signingKeys: SigningKey[];
  users: UserStore;
  /** Origins allowed to call from a browser (the web app's). */
  allowedOrigins: string[];
  /** #26 deletion: the users' links to their face data, checked against the API's deletions before each list. */
  enrollmentSync?: Pick<EnrollmentSync, 'checkAll'>;
  /**
   * The API the IdP enrols faces on (where its biometrics run): a removed user's face data is deleted there first.
   * Absent: the IdP put no face anywhere (its face step is a stand-in), so there is none to delete.
   */
  faceService?: { url: string; timeoutMs: number };
  /** Ends a removed user's sessions, grants and tokens (FileAdapter.revokeAccount); returns how many records went. */
  revokeAccount?: (accountId: string) => Promise<number>;
  /** A user's passkeys: recovery and per-user policy (passkey-admin.ts), after the same authorisation. */
  passkeys?: PasskeyAdminRoute;
  log: Logger;
}

function view(u: User): AdminUser {
  return {
    id: u.id,
    username: u.username,
    roles: u.roles,
    groups: u.groups,
    enrolled: isEnrolled(u),
    required_actions: u.requiredActions,
    created_at: u.createdAt,
  };
}

class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly challenge?: string,
  ) {
    super(message);
  }
}

const STATUS_OF: Record<string, number | undefined> = {
  invalid_username: 400,
  invalid_password: 400,
  user_exists: 409,
  user_not_found: 404,
  last_admin: 409,
};

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw new Problem(415, 'unsupported_media_type', 'Send the user as application/json.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Problem(413, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new Problem(400, 'invalid_json', 'The body must be a JSON object.');
}

/** A path segment as sent: a malformed percent-escape is the client's mistake (400), never a 500. */
function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new Problem(400, 'invalid_path', 'The path holds a malformed percent-escape.');
  }
}

export function adminApi(deps: AdminApiDeps) {
  const prefix = `/admin/realms/${deps.realm}/users`;
  const audience = clientNames(deps.realm).backend;
  const jwks = createLocalJWKSet({ keys: deps.signingKeys.map((k) => publicJwk(k)) });
  const origins = new Set(deps.allowedOrigins);

  /**
   * The administrator as the IdP holds them now, or a Problem: 401 for no or a bad token, 403 for a token that
   * speaks for no user (the service client's client-credentials token holds biometric-admin for the API, but no
   * client may manage users) or for a user without biometric-admin. Roles are read from the user store, not the
   * token, so a demoted or removed administrator's unexpired token manages nothing.
   */
  async function authorise(req: IncomingMessage): Promise<User> {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    if (!match) throw new Problem(401, 'missing_token', 'Send an access token: Authorization: Bearer <token>.', 'Bearer');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(match[1], jwks, { issuer: deps.issuer, audience, clockTolerance: 30 }));
    } catch (err) {
      const why = err instanceof Error ? err.message : 'invalid';
      throw new Problem(401, 'invalid_token', `The access token was refused: ${why}.`, 'Bearer error="invalid_token"');
    }
    // A user's token has the user's id as `sub`; a client-credentials token the client's id, which names no user.
    const user = typeof payload.sub === 'string' ? await deps.users.byId(payload.sub) : undefined;
    if (!user)
      throw new Problem(
        403,
        'user_token_required',
        'Managing users needs the access token of a signed-in administrator; client (service account) tokens are refused.',
        'Bearer error="insufficient_scope"',
      );
    if (!user.roles.includes(ROLE_ADMIN))
      throw new Problem(403, 'insufficient_role', `Managing users needs the role ${ROLE_ADMIN}.`, 'Bearer error="insufficient_scope"');
    return user;
  }

  function send(req: IncomingMessage, res: ServerResponse, status: number, body?: unknown): void {
    const origin = req.headers.origin;
    if (origin && origins.has(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', 'www-authenticate');
      res.setHeader('Vary', 'Origin');
    }
    res.setHeader('Cache-Control', 'no-store');
    res.statusCode = status;
    if (body === undefined) return void res.end();
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  }

  async function route(req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS') {
      // A preflight from the web app: no token on a preflight, so it is answered before the check.
      const origin = req.headers.origin;
      if (!origin || !origins.has(origin)) throw new Problem(403, 'forbidden_origin', 'This origin may not call the admin API.');
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
      res.setHeader('Access-Control-Allow-Headers', 'authorization, content-type');
      res.setHeader('Access-Control-Max-Age', '600');
      return send(req, res, 204);
    }
    const caller = await authorise(req);
    const admin = caller.username;
    const passkeyAnswer = await deps.passkeys?.(req, res, rest, admin);
    if (passkeyAnswer) return send(req, res, passkeyAnswer.status, passkeyAnswer.body);
    if (rest === '') {
      if (method === 'GET') {
        // A user whose face the API deleted shows as not enrolled; an API that cannot answer leaves the list as
        // stored (listing grants nothing; the face step checks again and fails closed).
        await deps.enrollmentSync?.checkAll().catch((err: unknown) => {
          deps.log.warn('enrollments not checked against the face service', { error: err instanceof Error ? err.message : String(err) });
        });
        return send(req, res, 200, { users: (await deps.users.list()).map(view) });
      }
      if (method === 'POST') {
        const body = await readJson(req);
        const { username, temporary_password: password, admin: isAdmin, device: isDevice } = body;
        if (typeof username !== 'string' || typeof password !== 'string')
          throw new Problem(400, 'invalid_user', 'Give `username` and `temporary_password` as strings.');
        if (isAdmin !== undefined && typeof isAdmin !== 'boolean') throw new Problem(400, 'invalid_user', '`admin` is true or false.');
        if (isDevice !== undefined && typeof isDevice !== 'boolean') throw new Problem(400, 'invalid_user', '`device` is true or false.');
        const user = await deps.users.add(username, password, { admin: isAdmin === true, device: isDevice === true });
        deps.log.info('security event', {
          event: 'user_created',
          username: user.username,
          by: admin,
          admin: isAdmin === true,
          device: isDevice === true,
        });
        return send(req, res, 201, view(user));
      }
      res.setHeader('Allow', 'GET, POST');
      throw new Problem(405, 'method_not_allowed', `${method} is not allowed here.`);
    }
    if (rest.startsWith('/') && !rest.slice(1).includes('/')) {
      const name = decodePathPart(rest.slice(1));
      if (name.includes('/')) throw new Problem(404, 'not_found', 'There is no such admin resource.');
      if (method === 'DELETE') {
        // #35 item 2: every check and the face's deletion run in one critical section under the users' lock
        // (UserStore.remove), so a removal that is refused (the last administrator, a caller removed or demoted
        // meanwhile) has deleted nothing. Found as the store normalises names, and compared by id, so `ROOT` is root.
        let face: 'deleted' | 'none' | 'not_managed' = 'not_managed';
        const user = await deps.users.remove(name, {
          check(target, users) {
            // The caller as stored now: one removed or demoted while waiting for the lock removes no one.
            if (!users.find((u) => u.id === caller.id)?.roles.includes(ROLE_ADMIN))
              throw new Problem(
                403,
                'insufficient_role',
                `Managing users needs the role ${ROLE_ADMIN}.`,
                'Bearer error="insufficient_scope"',
              );
            if (target.id === caller.id) throw new Problem(409, 'cannot_remove_self', 'An administrator cannot remove their own account.');
          },
          // The face first: when the API cannot delete it the user stays as they were (503, nothing lost, retry), so
          // no face is ever left behind under a name a later account may take.
          async before(target) {
            if (!deps.faceService) return;
            try {
              face = await deleteFaceData({
                ...deps.faceService,
                username: target.username,
                authorization: req.headers.authorization ?? '',
              });
            } catch (err) {
              if (!(err instanceof FaceDeletionError)) throw err;
              res.setHeader('Retry-After', err.busy ? '10' : '60');
              throw new Problem(503, 'face_service_unavailable', `${err.message}; the user was not removed. Try again later.`);
            }
          },
        });
        // Their sessions, grants and refresh tokens end now; access tokens are refused by the IdP (the user is gone).
        const revoked = (await deps.revokeAccount?.(user.id)) ?? 0;
        deps.log.info('security event', { event: 'user_removed', username: user.username, by: admin, face, revoked });
        return send(req, res, 204);
      }
      res.setHeader('Allow', 'DELETE');
      throw new Problem(405, 'method_not_allowed', `${method} is not allowed here.`);
    }
    throw new Problem(404, 'not_found', 'There is no such admin resource.');
  }

  return {
    /** Whether the path is the admin API's. */
    handles: (pathname: string) => pathname === prefix || pathname.startsWith(`${prefix}/`),
    async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const pathname = (req.url ?? '/').split('?')[0];
      try {
        await route(req, res, pathname.slice(prefix.length));
      } catch (err) {
        let problem: Problem;
        if (err instanceof Problem) problem = err;
        else if (err instanceof UserError) problem = new Problem(STATUS_OF[err.code] ?? 400, err.code, `${err.message}.`);
        else if (err instanceof LockBusyError) {
          // Another change of the users (a removal waiting on the face service) holds the lock: nothing was done.
          res.setHeader('Retry-After', '5');
          problem = new Problem(503, 'users_busy', 'Another change of the users is under way; nothing was changed. Try again shortly.');
        } else {
          deps.log.error('admin API failed', { error: err instanceof Error ? err.message : String(err) });
          problem = new Problem(500, 'internal_error', 'The user administration failed; it has been logged.');
        }
        if (problem.challenge) res.setHeader('WWW-Authenticate', `${problem.challenge}, realm="${deps.realm}"`);
        send(req, res, problem.status, { error: { code: problem.code, message: problem.message } });
      }
    },
  };
}
