/**
 * What talks to the API and the IdP with a token of its own, all real on 127.0.0.1 (Lookout's IdP, the API under
 * AUTH_MODE=oidc, the event processor): the Keycloak biometric extension's calls replayed in its order with the
 * service client's token, the processor polling with its client-credentials token, and the IdP's user
 * administration API behind `biometric-admin`.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addSignedUpUsers,
  APPROVE_EVERY_FACE,
  serviceToken as issueServiceToken,
  SERVICE_SECRET,
  startTestIdp,
  type TestIdp,
  userToken as issueUserToken,
} from '../helpers/idp.js';
import { startProcessor, tempDir, waitFor } from '../helpers/processor-harness.js';
import { readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';

const APP_ORIGIN = 'http://127.0.0.1:8080';
const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

let idp: TestIdp;
let api: TestServer;

const serviceToken = () => issueServiceToken(idp.issuer);
const userToken = (username: string, password: string) => issueUserToken(idp, username, password);

beforeAll(async () => {
  // The face step is not what these tests are about: a stand-in approves it (the real one is tested elsewhere).
  idp = await startTestIdp({ options: { faceVerifier: APPROVE_EVERY_FACE } });
  api = await startTestServer({ ...LIGHT, AUTH_MODE: 'oidc', OIDC_ISSUER: idp.issuer });
  await addSignedUpUsers(idp.users, [
    ['ada', true],
    ['bob', false],
  ]);
});

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

describe('the Keycloak biometric extension, replayed with the service token', () => {
  it('health, upload (multipart label+file), train, recognize, verify, labels: in its order, every one allowed', async () => {
    const auth = { authorization: `Bearer ${await serviceToken()}` };
    const photo = await readTestImage('faces/grace_hopper.jpg');

    const health = await fetch(`${api.url}/api/health`, { headers: auth });
    expect(health.status).toBe(200);

    const form = new FormData();
    form.set('label', 'grace');
    form.set('file', new Blob([photo], { type: 'image/jpeg' }), 'capture-1.jpg');
    const upload = await fetch(`${api.url}/api/images`, { method: 'POST', headers: auth, body: form });
    expect(upload.status, await upload.clone().text()).toBe(200);

    const train = await fetch(`${api.url}/api/train`, { method: 'POST', headers: auth });
    expect(train.status, await train.clone().text()).toBe(200);

    const recognize = await fetch(`${api.url}/api/recognize`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ image: photo.toString('base64') }),
    });
    expect(recognize.status).toBe(200);
    const { faces } = (await recognize.json()) as { faces: { label: string; confidence: number }[] };
    expect(faces).toHaveLength(1);

    // The IdP's own face step verifies 1:1 with the same token.
    const verify = await fetch(`${api.url}/api/verify`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'grace', frames: [photo.toString('base64')] }),
    });
    expect(verify.status, await verify.clone().text()).toBe(200);
    const verdict = (await verify.json()) as { label: string; distance?: number | null; frames: unknown[] };
    expect(verdict.frames).toHaveLength(1);
    // #35: the service client holds biometric-verifier: it verifies anyone, and is told the distance.
    expect(typeof verdict.distance).toBe('number');

    const labels = await fetch(`${api.url}/api/labels`, { headers: auth });
    expect(labels.status).toBe(200);
    expect(((await labels.json()) as { labels: string[] }).labels).toContain('grace');
  });

  it('the same calls without a token are refused (401), so the extension cannot run without its client', async () => {
    for (const [method, p] of [
      ['POST', '/api/train'],
      ['GET', '/api/labels'],
    ]) {
      const res = await fetch(`${api.url}${p}`, { method });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });
});

describe('the web app under AUTH_MODE=oidc', () => {
  it("may call the issuer: its origin is in the page's connect-src, and only then", async () => {
    const csp = (await fetch(`${api.url}/api/health`)).headers.get('content-security-policy') ?? '';
    expect(csp).toContain(`connect-src 'self' ${new URL(idp.issuer).origin};`);
    const config = (await (await fetch(`${api.url}/api/auth/config`)).json()) as Record<string, string>;
    expect(config).toEqual({ mode: 'oidc', issuer: idp.issuer, client_id: 'lookout-app' });
  });
});

describe('the event processor under AUTH_MODE=oidc', () => {
  it('polls the labels with its client-credentials token; without one its polls are refused', async () => {
    const env = { PROCESSOR_BACKEND_URL: api.url, PROCESSOR_POLL_INTERVAL_MS: '250', LOG_LEVEL: 'silent' };
    const dirs = [await tempDir(), await tempDir()];
    const withToken = await startProcessor({
      ...env,
      DATA_DIR: dirs[0],
      PROCESSOR_OIDC_TOKEN_URL: `${idp.issuer}/protocol/openid-connect/token`,
      PROCESSOR_OIDC_CLIENT_SECRET: SERVICE_SECRET,
    });
    const without = await startProcessor({ ...env, DATA_DIR: dirs[1] });
    try {
      const ok = await waitFor('a labels poll with the token', async () => {
        const r = await withToken.ready();
        return r.polls.labels.last_at && r.polls.labels.ok ? r : null;
      });
      expect(ok.polls.labels.known_labels).toBeGreaterThanOrEqual(1);
      const refused = await waitFor('a labels poll without a token', async () => {
        const r = await without.ready();
        return r.polls.labels.last_at ? r : null;
      });
      expect(refused.polls.labels.ok).toBe(false);
      expect(refused.polls.labels.error).toMatch(/token/i);
    } finally {
      await withToken.close();
      await without.close();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the IdP's user administration API", () => {
  const users = () => `${new URL(idp.url).origin}/admin/realms/lookout/users`;
  const as = (token: string, init: RequestInit = {}) => ({ ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });

  it('lets an administrator list, create (with a temporary password, optionally admin) and remove users', async () => {
    const token = await userToken('ada', 'adas-own-password');
    const list = await fetch(users(), as(token));
    expect(list.status).toBe(200);
    const listed = ((await list.json()) as { users: Record<string, unknown>[] }).users;
    expect(listed.map((u) => u.username)).toEqual(expect.arrayContaining(['ada', 'bob']));
    expect(JSON.stringify(listed)).not.toContain('scrypt'); // never the password hashes

    const created = await fetch(
      users(),
      as(token, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'Carol', temporary_password: 'carols-temporary-1', admin: true }),
      }),
    );
    expect(created.status).toBe(201);
    const carol = (await created.json()) as Record<string, unknown>;
    expect(carol).toMatchObject({ username: 'carol', roles: ['biometric-user', 'biometric-admin'], enrolled: false });
    expect(carol.required_actions).toEqual(['UPDATE_PASSWORD', 'biometric-enrollment']);
    expect((await idp.users.authenticate('carol', 'carols-temporary-1'))?.username).toBe('carol');

    const again = await fetch(
      users(),
      as(token, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'carol', temporary_password: 'x1234567890' }),
      }),
    );
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('user_exists');

    const removed = await fetch(`${users()}/carol`, as(token, { method: 'DELETE' }));
    expect(removed.status).toBe(204);
    expect(await idp.users.byUsername('carol')).toBeUndefined();
    expect((await fetch(`${users()}/carol`, as(token, { method: 'DELETE' }))).status).toBe(404);
    const self = await fetch(`${users()}/ada`, as(token, { method: 'DELETE' }));
    expect(self.status).toBe(409);
  });

  it('refuses a bad request with a reason (400, 415)', async () => {
    const token = await userToken('ada', 'adas-own-password');
    const post = (body: string, type = 'application/json') =>
      fetch(users(), as(token, { method: 'POST', headers: { 'content-type': type }, body }));
    const weak = await post(JSON.stringify({ username: 'dan', temporary_password: 'x' }));
    expect(weak.status).toBe(400);
    expect(((await weak.json()) as { error: { code: string } }).error.code).toBe('invalid_password');
    expect((await post(JSON.stringify({ username: 'bad name!', temporary_password: 'long-enough-pass' }))).status).toBe(400);
    expect((await post('{"username":')).status).toBe(400);
    expect((await post('username=dan', 'application/x-www-form-urlencoded')).status).toBe(415);
  });

  it('refuses no token or a forged one (401), a user without biometric-admin and the service client (403)', async () => {
    const none = await fetch(users());
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const [h, p] = (await serviceToken()).split('.');
    expect((await fetch(users(), as(`${h}.${p}.${randomBytes(256).toString('base64url')}`))).status).toBe(401);
    const bob = await fetch(users(), as(await userToken('bob', 'bobs-own-password')));
    expect(bob.status).toBe(403);
    expect(((await bob.json()) as { error: { message: string } }).error.message).toContain('biometric-admin');
    // The service client holds biometric-admin for the API, but no client manages users (#28 finding 2).
    expect((await fetch(users(), as(await serviceToken()))).status).toBe(403);
  });

  it("answers the web app's origin with CORS, preflight included, and no other origin", async () => {
    const preflight = await fetch(users(), {
      method: 'OPTIONS',
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    const list = await fetch(users(), as(await userToken('ada', 'adas-own-password'), { headers: { origin: APP_ORIGIN } }));
    expect(list.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const other = await fetch(users(), {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
