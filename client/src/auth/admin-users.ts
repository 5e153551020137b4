/**
 * The IdP's user administration API (server/idp/admin-api.ts), for the Admin page: at Keycloak's admin path
 * `<issuer origin>/admin/realms/<realm>/users`, with the signed-in administrator's access token.
 */
import { accessToken, auth } from './session';
import type { AdminUser } from '../../../shared/api/idp-admin';

/** The users URL of the issuer's realm, e.g. http://idp:8081/realms/lookout -> http://idp:8081/admin/realms/lookout/users. */
export function usersUrl(issuer: string): string {
  const url = new URL(issuer);
  const realm = /\/realms\/([^/]+)\/?$/.exec(url.pathname)?.[1];
  if (!realm) throw new Error(`the issuer ${issuer} is not a realm URL (…/realms/<realm>)`);
  return `${url.origin}/admin/realms/${realm}/users`;
}

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const cfg = auth.config();
  if (cfg?.mode !== 'oidc') throw new Error('User administration needs sign-in (AUTH_MODE=oidc).');
  const token = await accessToken();
  if (!token) throw new Error('You are signed out. Sign in again.');
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  let res: Response;
  try {
    res = await fetch(`${usersUrl(cfg.issuer)}${path}`, { ...init, headers });
  } catch {
    throw new Error(`Cannot reach the identity provider (${new URL(cfg.issuer).origin}).`);
  }
  if (res.ok) return res;
  const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
  throw new Error(body?.error?.message ?? `The identity provider answered ${res.status}.`);
}

export const adminUsers = {
  list: async (): Promise<AdminUser[]> => ((await (await call('')).json()) as { users: AdminUser[] }).users,
  /** `device`: the role biometric-device, for a kiosk that recognises offline with the trained models. */
  create: async (username: string, temporaryPassword: string, admin: boolean, device = false): Promise<AdminUser> =>
    (await (
      await call('', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, temporary_password: temporaryPassword, admin, ...(device ? { device } : {}) }),
      })
    ).json()) as AdminUser,
  remove: async (username: string): Promise<void> => {
    await call(`/${encodeURIComponent(username)}`, { method: 'DELETE' });
  },
};
