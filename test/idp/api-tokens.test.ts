/**
 * Lookout's own identity provider and the API under AUTH_MODE=oidc, both real, on 127.0.0.1: the API takes the
 * IdP's tokens (found through its discovery document and JWKS), grants by their roles, and keeps taking them
 * after the IdP rotates its key. The user token comes through the browser flow with a stand-in for the face
 * step (the real one is checked in biometric.test.ts; without one the flow denies, as idp.test.ts shows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStore } from '../../server/idp/keys.js';
import {
  addSignedUpUsers,
  APPROVE_EVERY_FACE,
  serviceToken as issueServiceToken,
  startTestIdp,
  type TestIdp,
  userToken,
} from '../helpers/idp.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

let idp: TestIdp;
let api: TestServer;

const serviceToken = () => issueServiceToken(idp.issuer);

async function call(method: string, url: string, token: string) {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

beforeAll(async () => {
  idp = await startTestIdp({ options: { faceVerifier: APPROVE_EVERY_FACE } });
  api = await startTestServer({ ...LIGHT, AUTH_MODE: 'oidc', OIDC_ISSUER: idp.issuer, OIDC_JWKS_COOLDOWN_MS: '0' });
  await addSignedUpUsers(idp.users, [['dora', false]]);
});

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

describe("the API with Lookout's identity provider", () => {
  it('takes the service client token as an administrator', async () => {
    const token = await serviceToken();
    expect((await call('GET', `${api.url}/api/labels`, token)).status).toBe(200);
    // Allowed to train: no image gives a face yet, so 422, but neither 401 nor 403.
    expect((await call('POST', `${api.url}/api/train`, token)).status).toBe(422);
  });

  it("takes a user's token for reads and refuses it for training (403)", async () => {
    const token = await userToken(idp, 'dora', 'doras-own-password');
    expect((await call('GET', `${api.url}/api/labels`, token)).status).toBe(200);
    const train = await call('POST', `${api.url}/api/train`, token);
    expect(train.status).toBe(403);
    expect(train.body.error.message).toContain('biometric-admin');
  });

  it('keeps taking tokens after the IdP rotates its key (old and new)', async () => {
    const before = await serviceToken();
    await new KeyStore(idp.dataDir).rotate();
    await idp.restart();
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
