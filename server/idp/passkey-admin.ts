/**
 * Passkey recovery and per-user policy for administrators, under the admin API (admin-api.ts authorises the
 * request first and hands over the path after `/admin/realms/<realm>/users`):
 *
 *   GET    .../users/<username>/passkeys           { required, passkeys: [{ id, created_at, last_used_at }] }
 *   DELETE .../users/<username>/passkeys           204: every passkey removed (a lost device); the user enrolls a
 *                                                  new one (or the face) at the next sign-in, after the password
 *   PUT    .../users/<username>/passkeys/required  { "required": true | false } -> 200: a passkey required of this
 *                                                  user whatever IDP_PASSKEYS allows (except `off`)
 *
 * Errors: 400 `invalid_username` (a malformed escape), `invalid_body`; 404 `user_not_found`; 405; 415; 413.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { PasskeyStore } from './passkeys.js';
import type { UserStore } from './users.js';

const MAX_BODY_BYTES = 4 * 1024;

export type AdminAnswer = { status: number; body?: unknown };

const problem = (status: number, code: string, message: string): AdminAnswer => ({ status, body: { error: { code, message } } });

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') return problem(415, 'unsupported_media_type', 'Send the policy as application/json.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return problem(413, 'payload_too_large', `The body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  try {
    return { json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return problem(400, 'invalid_body', 'The body must be JSON: { "required": true | false }.');
  }
}

/** `res` only for headers (Allow); the admin API sends the answer (CORS, no-store). */
export type PasskeyAdminRoute = (
  req: IncomingMessage,
  res: ServerResponse,
  rest: string,
  admin: string,
) => Promise<AdminAnswer | undefined>;

/** The route; undefined for paths that are not a user's passkeys (the admin API answers those). */
export function passkeyAdmin(deps: { store: PasskeyStore; users: UserStore; log: Logger }): PasskeyAdminRoute {
  return async (req, res, rest, admin) => {
    const match = /^\/([^/]+)\/passkeys(\/required)?$/.exec(rest);
    if (!match) return undefined;
    let name: string;
    try {
      name = decodeURIComponent(match[1]);
    } catch {
      return problem(400, 'invalid_username', 'The username in the path is not a valid percent-encoding.');
    }
    const user = await deps.users.byUsername(name);
    if (!user) return problem(404, 'user_not_found', 'No such user.');
    const method = req.method ?? 'GET';
    if (match[2]) {
      if (method !== 'PUT') {
        res.setHeader('Allow', 'PUT');
        return problem(405, 'method_not_allowed', `${method} is not allowed here.`);
      }
      const read = await readJson(req);
      if (read && typeof read === 'object' && 'status' in read) return read as AdminAnswer;
      const body = (read as { json: unknown }).json;
      const required = (body as { required?: unknown } | null)?.required;
      if (typeof required !== 'boolean') return problem(400, 'invalid_body', 'Give `required` as true or false.');
      await deps.store.setRequired(user.id, required);
      deps.log.info('security event', { event: 'passkey_policy', username: user.username, required, by: admin });
      return { status: 200, body: { required } };
    }
    if (method === 'GET') {
      const mine = await deps.store.forUser(user.id);
      return {
        status: 200,
        body: {
          required: mine.required,
          passkeys: mine.credentials.map((c) => ({ id: c.id, created_at: c.createdAt, last_used_at: c.lastUsedAt })),
        },
      };
    }
    if (method === 'DELETE') {
      const removed = await deps.store.removeAll(user.id);
      deps.log.info('security event', { event: 'passkeys_removed', username: user.username, count: removed, by: admin });
      return { status: 204 };
    }
    res.setHeader('Allow', 'GET, DELETE');
    return problem(405, 'method_not_allowed', `${method} is not allowed here.`);
  };
}
