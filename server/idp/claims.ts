/**
 * What tokens say, shaped as a Keycloak realm writes it so the backend accepts Lookout's IdP and a Keycloak
 * realm alike: access tokens carry `aud` `<realm>-backend`, `azp`, `preferred_username`, the realm roles in
 * `realm_access.roles` and the groups (names without Keycloak's leading `/`) in `groups`. Client-credentials
 * tokens speak for Keycloak's `service-account-<client>` user with the client's service-account roles.
 */
import type { Account, KoaContextWithOIDC, TokenInfo } from 'oidc-provider';
import { serviceAccountRoles } from './clients.js';
import { ATTRIBUTE_ENROLLED, type User, type UserStore } from './users.js';

/** Scopes and the claims each releases in ID tokens and at userinfo (`amr`: how the user signed in, pwd and face). */
export const SCOPE_CLAIMS = {
  openid: ['sub', 'amr'],
  profile: ['preferred_username', 'name', ATTRIBUTE_ENROLLED],
  roles: ['realm_access', 'groups'],
} as const;

export function userClaims(user: User): Record<string, unknown> {
  return {
    sub: user.id,
    preferred_username: user.username,
    name: user.username,
    [ATTRIBUTE_ENROLLED]: user.attributes[ATTRIBUTE_ENROLLED] === 'true',
    realm_access: { roles: [...user.roles] },
    groups: [...user.groups],
  };
}

export function findAccountWith(users: UserStore) {
  return async (_ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
    const user = await users.byId(sub);
    if (!user) return undefined;
    return { accountId: user.id, claims: () => userClaims(user) };
  };
}

/** Extra claims of every access token (oidc-provider's `extraTokenClaims`). */
export function extraTokenClaimsWith(users: UserStore, realm: string) {
  const serviceRoles = serviceAccountRoles(realm);
  return async (_ctx: KoaContextWithOIDC, token: TokenInfo): Promise<Record<string, unknown> | undefined> => {
    const clientId = token.clientId ?? token.client?.clientId;
    if (token.accountId) {
      const user = await users.byId(token.accountId);
      if (!user) return { azp: clientId, realm_access: { roles: [] }, groups: [] };
      return { azp: clientId, preferred_username: user.username, realm_access: { roles: [...user.roles] }, groups: [...user.groups] };
    }
    if (clientId) {
      return {
        azp: clientId,
        // #35: the mark of a client-credentials token, as Keycloak's service-account "Client ID" mapper writes it (and
        // its name before Keycloak 21): the API tells clients from users by it, never by the username.
        clientId,
        preferred_username: `service-account-${clientId}`,
        realm_access: { roles: [...(serviceRoles[clientId] ?? [])] },
        groups: [],
      };
    }
    return undefined;
  };
}

/**
 * #35 (oidc-provider's `formats.customizers.jwt`): a user's access token carries no `client_id`, as Keycloak writes
 * it (`azp` names the app): only client-credentials tokens carry it, so it says the grant (server/http/auth.ts).
 */
export async function customizeAccessToken(
  _ctx: unknown,
  token: { accountId?: string },
  jwt: { payload: Record<string, unknown> },
): Promise<void> {
  if (token.accountId) delete jwt.payload.client_id;
}
