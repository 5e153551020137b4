/**
 * The realm's three clients, as the spec's Keycloak realm defines them:
 *
 * - `<realm>-app`: the web app; public (no secret), authorization code with PKCE S256 only (the provider refuses
 *   `plain` and, with `pkce.required` always true, a missing challenge), refresh tokens.
 * - `<realm>-backend`: bearer-only. It is the audience of access tokens and may not sign anyone in: no grant type,
 *   no response type, no redirect URI, so every authorization and token request naming it is refused.
 * - `<realm>-service`: confidential, client credentials only, roles `biometric-admin` and `biometric-verifier` (#35:
 *   the face step verifies anyone, with the distance). The IdP calls the backend with it (enrollment uploads,
 *   training, verification) and integrations may use it. Offered only when a secret is set.
 *   Its role is for the API: the IdP's user administration refuses client-credentials tokens (admin-api.ts).
 */
import type { IdpSettings } from './settings.js';
import { ROLE_ADMIN } from './users.js';

export interface ClientNames {
  app: string;
  backend: string;
  service: string;
}

export function clientNames(realm: string): ClientNames {
  return { app: `${realm}-app`, backend: `${realm}-backend`, service: `${realm}-service` };
}

/** #35: verifies anyone's face on the API, with the distance (the face step); shared/api/roles.ts. */
export const ROLE_VERIFIER = 'biometric-verifier';

/** Realm roles of each service client's service account (Keycloak's `service-account-<client>` user). */
export function serviceAccountRoles(realm: string): Record<string, string[]> {
  return { [clientNames(realm).service]: [ROLE_ADMIN, ROLE_VERIFIER] };
}

export function clientMetadata(
  settings: Pick<IdpSettings, 'realm' | 'appRedirectUris' | 'serviceClientSecret'>,
): Record<string, unknown>[] {
  const names = clientNames(settings.realm);
  const origins = [...new Set(settings.appRedirectUris.map((u) => `${new URL(u).origin}/`))];
  const clients: Record<string, unknown>[] = [
    {
      client_id: names.app,
      application_type: 'web',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: settings.appRedirectUris,
      post_logout_redirect_uris: origins,
    },
    {
      client_id: names.backend,
      token_endpoint_auth_method: 'none',
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
  ];
  if (settings.serviceClientSecret !== undefined) {
    clients.push({
      client_id: names.service,
      client_secret: settings.serviceClientSecret,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    });
  }
  return clients;
}
