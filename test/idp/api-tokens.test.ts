/**
 * Lookout's own identity provider and the API under AUTH_MODE=oidc, both real, on 127.0.0.1: the API takes the
 * IdP's tokens (found through its discovery document and JWKS), grants by their roles, and keeps taking them
 * after the IdP rotates its key. The user token comes through the browser flow with a stand-in for the face
 * step (the real one is checked in biometric.test.ts; without one the flow denies, as idp.test.ts shows).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningIdp, startIdp } from '../../server/idp/app.js';
import { KeyStore } from '../../server/idp/keys.js';
import { loadIdpSettings } from '../../server/idp/settings.js';
import { createLogger } from '../../server/logger.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { Browser } from './browser.js';

const REDIRECT = 'http://127.0.0.1:8080/auth/callback';
const SECRET = 'service-secret-0123456789';
const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

let dataDir: string;
let idp: RunningIdp;
let api: TestServer;
let port = 0;

async function start(): Promise<RunningIdp> {
  const settings = loadIdpSettings({
    IDP_PORT: String(port),
    IDP_DATA_DIR: dataDir,
    IDP_SERVICE_CLIENT_SECRET: SECRET,
    IDP_APP_REDIRECT_URIS: REDIRECT,
    LOG_LEVEL: 'silent',
  });
  const running = await startIdp({
    settings,
    log: createLogger('silent'),
    faceVerifier: { verify: async () => ({ granted: true, score: 90 }) },
  });
  port = Number(new URL(running.url).port);
  return running;
}

async function tokenRequest(body: Record<string, string>, auth?: string): Promise<Record<string, any>> {
  const res = await fetch(`${idp.issuer}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(body).toString(),
  });
  const json = (await res.json()) as Record<string, any>;
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json;
}

const serviceToken = async () =>
  (await tokenRequest({ grant_type: 'client_credentials' }, `Basic ${Buffer.from(`lookout-service:${SECRET}`).toString('base64')}`))
    .access_token as string;

/** Signs `username` in through the pages (password, then the stand-in face step) and redeems the code. */
async function userToken(username: string, password: string): Promise<string> {
  const browser = new Browser();
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${idp.issuer}/protocol/openid-connect/auth`);
  for (const [k, v] of Object.entries({
    client_id: 'lookout-app',
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid profile roles',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  const origin = new URL(idp.url).origin;
  const login = await browser.follow(url.href, origin);
  await browser.follow(login.url, origin, await browser.postForm(`${login.url}/password`, { username, password }));
  const done = await browser.follow(login.url, origin, await browser.postForm(`${login.url}/face`, {}));
  const code = new URL(done.res.headers.get('location')!).searchParams.get('code');
  expect(code, done.res.headers.get('location') ?? '').toBeTruthy();
  return (
    await tokenRequest({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT,
      client_id: 'lookout-app',
      code_verifier: verifier,
    })
  ).access_token;
}

async function call(method: string, url: string, token: string) {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'lookout-idp-api-'));
  idp = await start();
  api = await startTestServer({ ...LIGHT, AUTH_MODE: 'oidc', OIDC_ISSUER: idp.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
  const user = await idp.users.add('dora', 'temporary-pass-1', {});
  await idp.users.setPassword(user.id, 'doras-own-password');
  await idp.users.markEnrolled(user.id);
});

afterAll(async () => {
  await api?.close();
  await idp?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the API with Lookout's identity provider", () => {
  it('takes the service client token as an administrator', async () => {
    const token = await serviceToken();
    expect((await call('GET', `${api.url}/api/labels`, token)).status).toBe(200);
    // Allowed to train: no image gives a face yet, so 422, but neither 401 nor 403.
    expect((await call('POST', `${api.url}/api/train`, token)).status).toBe(422);
  });

  it("takes a user's token for reads and refuses it for training (403)", async () => {
    const token = await userToken('dora', 'doras-own-password');
    expect((await call('GET', `${api.url}/api/labels`, token)).status).toBe(200);
    const train = await call('POST', `${api.url}/api/train`, token);
    expect(train.status).toBe(403);
    expect(train.body.error.message).toContain('biometric-admin');
  });

  it('keeps taking tokens after the IdP rotates its key (old and new)', async () => {
    const before = await serviceToken();
    await new KeyStore(dataDir).rotate();
    await idp.close();
    idp = await start();
    const after = await serviceToken();
    expect(after.split('.')[0]).not.toBe(before.split('.')[0]); // another kid in the header
    for (const token of [before, after]) expect((await call('GET', `${api.url}/api/labels`, token)).status).toBe(200);
  });

  it('refuses a token of the IdP whose roles were tampered with (signature broken): 401', async () => {
    const [header, payload, signature] = (await serviceToken()).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = [
      header,
      Buffer.from(JSON.stringify({ ...claims, realm_access: { roles: ['biometric-admin', 'x'] } })).toString('base64url'),
      signature,
    ].join('.');
    expect((await call('GET', `${api.url}/api/labels`, forged)).status).toBe(401);
  });
});
