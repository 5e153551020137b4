/**
 * An OpenID issuer's public side on 127.0.0.1, as a Keycloak realm serves it: the discovery document at
 * `/realms/<realm>/.well-known/openid-configuration` and the JWKS at `.../protocol/openid-connect/certs`, with keys
 * made by jose. It signs access tokens shaped as Keycloak writes them (`realm_access.roles`, `aud` with the backend
 * client and `account`, `azp`, `preferred_username`). Keys can be rotated, and the server stopped, to test what a
 * resource server does then.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function makeKey(kid: string = randomUUID()): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface TokenOptions {
  roles?: string[];
  username?: string;
  /** Seconds from now; negative: already expired; null: no `exp` at all. */
  expiresIn?: number | null;
  audience?: string | string[];
  issuer?: string;
  /** Sign with this key instead of the issuer's current one (a forger's, or an old one). */
  key?: SigningKey;
  /** Claims added or replaced. */
  claims?: JWTPayload;
}

export interface IssuerDouble {
  /** `http://127.0.0.1:<port>/realms/<realm>`: the `iss` of its tokens. */
  issuer: string;
  jwksUrl: string;
  /** How many times each document was fetched. */
  fetches: { discovery: number; jwks: number };
  /** The keys the JWKS publishes now; the first signs. */
  keys: SigningKey[];
  /** What the discovery document names as its issuer (default: `issuer`). */
  discoveryIssuer: string;
  /** The JWKS answers with this status instead (e.g. 500). */
  jwksStatus: number;
  token(options?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(realm = 'lookout'): Promise<IssuerDouble> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === `/realms/${realm}/.well-known/openid-configuration`) {
      double.fetches.discovery++;
      return send(200, {
        issuer: double.discoveryIssuer,
        authorization_endpoint: `${double.issuer}/protocol/openid-connect/auth`,
        token_endpoint: `${double.issuer}/protocol/openid-connect/token`,
        jwks_uri: double.jwksUrl,
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (path === `/realms/${realm}/protocol/openid-connect/certs`) {
      double.fetches.jwks++;
      if (double.jwksStatus !== 200) return send(double.jwksStatus, { error: 'unavailable' });
      return send(200, { keys: double.keys.map((k) => k.jwk) });
    }
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/${realm}`;
  const double: IssuerDouble = {
    issuer: base,
    jwksUrl: `${base}/protocol/openid-connect/certs`,
    fetches: { discovery: 0, jwks: 0 },
    keys: [await makeKey()],
    discoveryIssuer: base,
    jwksStatus: 200,
    async token(o: TokenOptions = {}) {
      const key = o.key ?? double.keys[0];
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({
        typ: 'Bearer',
        azp: `${realm}-app`,
        preferred_username: o.username ?? 'alice',
        realm_access: { roles: o.roles ?? ['biometric-user', 'offline_access', `default-roles-${realm}`] },
        resource_access: { account: { roles: ['manage-account'] } },
        scope: 'openid profile email',
        groups: ['biometric-enrolled'],
        ...o.claims,
      })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
        .setIssuer(o.issuer ?? double.issuer)
        .setAudience(o.audience ?? [`${realm}-backend`, 'account'])
        .setSubject(randomUUID())
        .setJti(randomUUID())
        .setIssuedAt(now);
      if (o.expiresIn !== null) jwt.setExpirationTime(now + (o.expiresIn ?? 300));
      return jwt.sign(key.privateKey);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return double;
}
