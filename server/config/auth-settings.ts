/** Bearer tokens on the API (`AUTH_MODE=oidc`): which issuer, audience and keys the server trusts. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { httpUrlOrEmpty, integer, type SettingSpec } from './setting-schemas.js';

export const AUTH_SETTINGS = {
  authMode: {
    env: 'AUTH_MODE',
    schema: z.enum(['off', 'oidc']),
    default: 'off',
    doc: '`off`: the API takes no token; `oidc`: every endpoint but the probes, the docs and `/api/auth/config` needs a bearer token of OIDC_ISSUER with the role it names (docs/identity.md, "Authentication").',
  },
  oidcIssuer: {
    env: 'OIDC_ISSUER',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "The OpenID issuer whose access tokens the API accepts, exactly as its tokens' `iss` (e.g. `https://idp.example/realms/lookout`); required with AUTH_MODE=oidc.",
  },
  oidcAudience: {
    env: 'OIDC_AUDIENCE',
    schema: z.string().trim().min(1),
    default: 'lookout-backend',
    doc: "The audience (`aud`) an access token must name: the realm's bearer-only backend client.",
  },
  oidcClientId: {
    env: 'OIDC_CLIENT_ID',
    schema: z.string().trim().min(1),
    default: 'lookout-app',
    doc: "The web app's public client at the issuer (PKCE), told to the app by `GET /api/auth/config`.",
  },
  oidcJwksUrl: {
    env: 'OIDC_JWKS_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "Where the issuer's signing keys (JWKS) are; empty: the `jwks_uri` of `<OIDC_ISSUER>/.well-known/openid-configuration`.",
  },
  oidcJwksCooldownMs: {
    env: 'OIDC_JWKS_COOLDOWN_MS',
    schema: integer(0, 3_600_000),
    default: '10000',
    doc: "Least time between two fetches of the issuer's keys for a token with an unknown `kid`, in milliseconds.",
  },
} as const satisfies Record<string, SettingSpec>;
