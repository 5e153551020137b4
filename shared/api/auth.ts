/** GET /api/auth/config: how the web app signs in (or that it need not). */
import { z } from 'zod';

export const AUTH_MODES = ['off', 'oidc'] as const;

export const authConfigResponse = z
  .object({
    mode: z.enum(AUTH_MODES).meta({
      description: '`off`: the API takes no token (the default); `oidc`: every endpoint but the open ones needs a bearer token.',
    }),
    issuer: z.string().nullable().meta({
      description:
        'The OpenID issuer to sign in with (its discovery document is `<issuer>/.well-known/openid-configuration`); null when off.',
    }),
    client_id: z
      .string()
      .nullable()
      .meta({ description: "The web app's public client at the issuer (authorization code with PKCE S256); null when off." }),
  })
  .meta({
    id: 'AuthConfig',
    description: 'How the web app signs in.',
    example: { mode: 'oidc', issuer: 'http://127.0.0.1:8081/realms/lookout', client_id: 'lookout-app' },
  });
export type AuthConfigResponse = z.infer<typeof authConfigResponse>;
