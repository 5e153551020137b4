/**
 * The API under AUTH_MODE=oidc, against a real issuer on 127.0.0.1 (discovery document and JWKS with keys made by
 * jose) and tokens shaped as Keycloak writes them: accepted, refused (401), short of a role (403), the issuer's key
 * rotated, the issuer unreachable (denied, never let through), and the open probes. Every answer is also checked
 * against the contract by the test server.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '../../server/config/settings.js';
import { makeKey, startIssuer, type IssuerDouble } from '../helpers/oidc-issuer.js';
import { readTestImage, REPO_ROOT, startTestServer, type TestServer } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };
const ADMIN = ['biometric-admin', 'offline_access'];

async function call(url: string, token?: string | null, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (metrics, the docs page).
  }
  return { status: res.status, body, challenge: res.headers.get('www-authenticate') };
}

describe('AUTH_MODE=oidc with the issuer up', () => {
  let issuer: IssuerDouble;
  let server: TestServer;
  let user: string;
  let admin: string;

  beforeAll(async () => {
    issuer = await startIssuer();
    server = await startTestServer({ ...LIGHT, AUTH_MODE: 'oidc', OIDC_ISSUER: issuer.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
    user = await issuer.token();
    admin = await issuer.token({ roles: ADMIN, username: 'root' });
  });
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it('keeps the probes, metrics, the docs and the sign-in configuration open', async () => {
    expect((await call(`${server.url}/api/health`)).status).toBe(200);
    expect([200, 503]).toContain((await call(`${server.url}/api/ready`)).status);
    expect((await call(`${server.url}/metrics`)).status).toBe(200);
    expect((await call(`${server.url}/api/openapi.json`)).status).toBe(200);
    expect((await call(`${server.url}/api/docs`)).status).toBe(200);
    const config = await call(`${server.url}/api/auth/config`);
    expect(config).toMatchObject({ status: 200, body: { mode: 'oidc', issuer: issuer.issuer, client_id: 'lookout-app' } });
  });

  it('found the keys through the discovery document', () => {
    expect(issuer.fetches.discovery).toBeGreaterThanOrEqual(1);
  });

  it('accepts a user token for reads and a user operation, and an admin token for them too', async () => {
    for (const token of [user, admin]) {
      expect((await call(`${server.url}/api/labels`, token)).status).toBe(200);
      expect((await call(`${server.url}/api/models/config`, token)).status).toBe(200);
    }
    const image = (await readTestImage('faces/grace_hopper.jpg')).toString('base64');
    const recognized = await call(`${server.url}/api/recognize`, user, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ image }),
    });
    expect(recognized.status).toBe(200);
    expect(recognized.body.faces.length).toBeGreaterThan(0);
  });

  it('answers 401 with a Bearer challenge and no error code when the token is missing', async () => {
    const variants: Record<string, string>[] = [{}, { authorization: 'Basic YWxpY2U6c2VjcmV0' }, { authorization: 'Bearer' }];
    for (const headers of variants) {
      const res = await call(`${server.url}/api/labels`, null, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.error.code).toBe('missing_token');
      expect(res.body.error.message).toContain(issuer.issuer);
      expect(res.challenge).toBe('Bearer realm="lookout"');
    }
  });

  it('answers 401 invalid_token for a malformed, forged, expired, wrong-audience or wrong-issuer token', async () => {
    const forger = await makeKey(issuer.keys[0].kid); // the issuer's kid, another key
    const stranger = await makeKey(); // a kid the issuer does not publish
    const hmac = await new SignJWT({ realm_access: { roles: ADMIN } })
      .setProtectedHeader({ alg: 'HS256', kid: issuer.keys[0].kid })
      .setIssuer(issuer.issuer)
      .setAudience('lookout-backend')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a secret anyone could pick, 32 bytes long'));
    const [header, payload] = user.split('.');
    const cases: [string, string, RegExp][] = [
      ['not a JWT', 'not-a-jwt', /well-formed/],
      ['two tokens', `${user} ${user}`, /one well-formed token/],
      ['unsigned', `${header}.${payload}.`, /well-formed|signature/],
      ['forged with the same kid', await issuer.token({ key: forger, roles: ADMIN }), /signature does not verify/],
      ['signed with an unknown key', await issuer.token({ key: stranger, roles: ADMIN }), /does not publish/],
      ['HMAC with a made-up secret', hmac, /algorithm is not accepted/],
      ['expired', await issuer.token({ expiresIn: -120 }), /expired at/],
      ['for another audience', await issuer.token({ audience: ['lookout-app', 'account'] }), /audience does not include lookout-backend/],
      ['from another issuer', await issuer.token({ issuer: 'http://127.0.0.1:1/realms/other' }), /not issued by/],
      ['without an expiry', await issuer.token({ expiresIn: null }), /no expiry/],
    ];
    for (const [what, token, message] of cases) {
      const res = await call(`${server.url}/api/labels`, null, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, what).toBe(401);
      expect(res.body.error.code, what).toBe('invalid_token');
      expect(res.body.error.message, what).toMatch(message);
      expect(res.challenge, what).toMatch(/^Bearer realm="lookout", error="invalid_token", error_description="[^"]+"$/);
      // The token itself is never echoed.
      expect(JSON.stringify(res.body), what).not.toContain(token.slice(-20));
    }
  });

  it('answers 403 insufficient_role to a user token on POST /api/train, and trains for an admin', async () => {
    const refused = await call(`${server.url}/api/train`, user, { method: 'POST' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_role');
    expect(refused.body.error.message).toMatch(/needs the role biometric-admin; the token has biometric-user/);
    expect(refused.challenge).toMatch(/error="insufficient_scope"/);

    const form = new FormData();
    form.set('label', 'Grace Hopper');
    form.set('file', new Blob([await readTestImage('faces/grace_hopper.jpg')]), 'grace.jpg');
    expect((await call(`${server.url}/api/images`, user, { method: 'POST', body: form })).status).toBe(403);
    expect((await call(`${server.url}/api/images`, admin, { method: 'POST', body: form })).status).toBe(200);
    const trained = await call(`${server.url}/api/train`, admin, { method: 'POST' });
    expect(trained.status).toBe(200);
    expect(trained.body.labels).toContain('grace-hopper');
    // The stored photographs are for administrators; the labels are a read.
    expect((await call(`${server.url}/api/images/grace-hopper`, user)).status).toBe(403);
    expect((await call(`${server.url}/api/images/grace-hopper`, admin)).status).toBe(200);
    expect((await call(`${server.url}/api/labels`, user)).body.labels).toContain('grace-hopper');
  });

  it('answers 403 to a valid token without either role, and guards paths the table does not name', async () => {
    const none = await issuer.token({ roles: ['offline_access'] });
    const res = await call(`${server.url}/api/labels`, none);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toMatch(/neither biometric-user nor biometric-admin/);
    expect((await call(`${server.url}/api/no-such-endpoint`)).status).toBe(401);
    expect((await call(`${server.url}/api/no-such-endpoint`, user)).status).toBe(404);
    // A documented path asked with another method: a token first, then the 405.
    expect((await call(`${server.url}/api/train`)).status).toBe(401);
    expect((await call(`${server.url}/api/train`, user)).status).toBe(405);
  });

  it("accepts a token of the issuer's new key after a rotation, fetching the keys again", async () => {
    const before = issuer.fetches.jwks;
    const old = issuer.keys[0];
    issuer.keys = [await makeKey()];
    const rotated = await issuer.token({ roles: ADMIN });
    expect((await call(`${server.url}/api/labels`, rotated)).status).toBe(200);
    expect(issuer.fetches.jwks).toBeGreaterThan(before);
    // The old key is gone from the JWKS: its tokens no longer verify.
    const res = await call(`${server.url}/api/labels`, await issuer.token({ key: old }));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
  });

  it('denies a token of a key it has not seen when the keys cannot be fetched again', async () => {
    const known = await issuer.token();
    const unseen = await issuer.token({ key: await makeKey() });
    issuer.jwksStatus = 500;
    const failing = await call(`${server.url}/api/labels`, unseen);
    expect(failing.status).toBe(503);
    expect(failing.body.error.code).toBe('auth_unavailable');
    expect(failing.body.error.message).toMatch(/keys could not be fetched .*denied/);
    issuer.jwksStatus = 200;
    await issuer.close();
    const down = await call(`${server.url}/api/labels`, unseen);
    expect(down.status).toBe(503);
    expect(down.body.error.message).toMatch(/ECONNREFUSED|could not be/);
    expect((await call(`${server.url}/api/train`, unseen, { method: 'POST' })).status).toBe(503);
    // A key fetched within the last 10 minutes still verifies: the failed fetches did not drop it.
    expect((await call(`${server.url}/api/labels`, known)).status).toBe(200);
    // The probes do not depend on the issuer.
    expect((await call(`${server.url}/api/health`)).status).toBe(200);
  });
});

describe('AUTH_MODE=oidc with OIDC_JWKS_URL and a cooldown', () => {
  let issuer: IssuerDouble;
  let server: TestServer;

  beforeAll(async () => {
    issuer = await startIssuer('plant');
    server = await startTestServer({
      ...LIGHT,
      AUTH_MODE: 'oidc',
      OIDC_ISSUER: issuer.issuer,
      OIDC_AUDIENCE: 'plant-backend',
      OIDC_CLIENT_ID: 'plant-app',
      OIDC_JWKS_URL: issuer.jwksUrl,
      OIDC_JWKS_COOLDOWN_MS: '60000',
    });
  });
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it('reads the keys from OIDC_JWKS_URL without discovery, and tells the web app its client', async () => {
    expect((await call(`${server.url}/api/labels`, await issuer.token())).status).toBe(200);
    expect(issuer.fetches.discovery).toBe(0);
    expect((await call(`${server.url}/api/auth/config`)).body).toEqual({ mode: 'oidc', issuer: issuer.issuer, client_id: 'plant-app' });
  });

  it('does not let tokens with made-up key ids make it fetch the keys again within the cooldown', async () => {
    const before = issuer.fetches.jwks;
    for (let i = 0; i < 5; i++) {
      const res = await call(`${server.url}/api/labels`, await issuer.token({ key: await makeKey() }));
      expect(res.status).toBe(401);
    }
    expect(issuer.fetches.jwks).toBe(before);
  });
});

describe('AUTH_MODE=oidc with the issuer unreachable', () => {
  let issuer: IssuerDouble;
  let server: TestServer;

  beforeAll(async () => {
    issuer = await startIssuer();
    issuer.discoveryIssuer = 'https://impostor.example/realms/lookout';
    server = await startTestServer({ ...LIGHT, AUTH_MODE: 'oidc', OIDC_ISSUER: issuer.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
  });
  afterAll(async () => {
    await server?.close();
    await issuer?.close();
  });

  it('denies with 503 auth_unavailable when the discovery document names another issuer', async () => {
    const res = await call(`${server.url}/api/labels`, await issuer.token({ roles: ADMIN }));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('auth_unavailable');
    expect(res.body.error.message).toMatch(/names the issuer "https:\/\/impostor.example\/realms\/lookout", not OIDC_ISSUER/);
  });

  it('denies with 503 when the issuer is down, and 401 still without a token; the probes stay open', async () => {
    const token = await issuer.token({ roles: ADMIN });
    await issuer.close();
    for (const [method, path] of [
      ['GET', '/api/labels'],
      ['POST', '/api/train'],
      ['GET', '/api/models/trained'],
    ]) {
      const res = await call(`${server.url}${path}`, token, { method });
      expect(res.status, path).toBe(503);
      expect(res.body.error.message, path).toMatch(
        /discovery document .* could not be read \(ECONNREFUSED\); requests that need a token are denied/,
      );
    }
    expect((await call(`${server.url}/api/labels`)).status).toBe(401);
    expect((await call(`${server.url}/api/health`)).status).toBe(200);
    expect((await call(`${server.url}/api/auth/config`)).status).toBe(200);
  });
});

describe('AUTH_MODE settings', () => {
  it('is off by default, and GET /api/auth/config says so', async () => {
    const settings = loadSettings({}, REPO_ROOT);
    expect(settings.authMode).toBe('off');
    expect(settings.oidcAudience).toBe('lookout-backend');
    expect(settings.oidcClientId).toBe('lookout-app');
    const server = await startTestServer(LIGHT);
    try {
      expect((await call(`${server.url}/api/auth/config`)).body).toEqual({ mode: 'off', issuer: null, client_id: null });
      // Nothing changes: no token is asked for.
      expect((await call(`${server.url}/api/labels`)).status).toBe(200);
      expect((await call(`${server.url}/api/train/status`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('refuses AUTH_MODE=oidc without OIDC_ISSUER, and an unknown mode', () => {
    expect(() => loadSettings({ AUTH_MODE: 'oidc' }, REPO_ROOT)).toThrow(/OIDC_ISSUER: must be set with AUTH_MODE=oidc/);
    expect(() => loadSettings({ AUTH_MODE: 'keycloak' }, REPO_ROOT)).toThrow(SettingsError);
    expect(() => loadSettings({ AUTH_MODE: 'oidc', OIDC_ISSUER: 'ftp://idp/realms/x' }, REPO_ROOT)).toThrow(/OIDC_ISSUER/);
  });
});
