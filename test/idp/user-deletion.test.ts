/**
 * #28 finding 5: removing a user through the IdP's admin API ends them. Against a real API (AUTH_MODE=oidc, the
 * embedding recognizer) and a real IdP running its real face step, as enrollment-deletion.test.ts: their face data
 * leaves the API (a later account of the same name starts with no face, so the old person's face is not taken for
 * the new one), their sessions, grants and refresh tokens end, and an API that cannot delete the face keeps the user
 * (503, nothing lost).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_REDIRECT as REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp, tokenRequest } from '../helpers/idp.js';
import { mintedUserToken } from '../helpers/idp-admin-token.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { Browser } from './browser.js';
import { capture, PERSON_A, PERSON_B } from './faces.js';

let idp: TestIdp;
let api: TestServer;

const origin = () => new URL(idp.url).origin;
const users = () => `${origin()}/admin/realms/lookout/users`;
const framesOf = (person: typeof PERSON_A) => Promise.all([3, 4, 5].map((i) => capture(person, i)));

async function submit(browser: Browser, pageUrl: string, step: string, fields: [string, string][]) {
  const res = await browser.request(`${pageUrl}/${step}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  if (res.status !== 303) return { res, url: pageUrl };
  return browser.follow(pageUrl, origin(), res);
}

/** A sign-in up to the page after the password; `verifier` redeems its code. */
async function afterPassword(username: string, password: string) {
  const browser = new Browser();
  const { verifier, challenge } = pkce();
  const page = (await browser.follow(authorizeUrl(idp.issuer, REDIRECT, challenge, { state: 's1' }), origin())).url;
  const next = await submit(browser, page, 'password', [
    ['username', username],
    ['password', password],
  ]);
  return { browser, page, verifier, html: await next.res.text() };
}

/** The face step with `person`'s frames: the parameters the IdP sent back to the app. */
async function faceStep(browser: Browser, page: string, person: typeof PERSON_A): Promise<Record<string, string>> {
  const { res } = await submit(
    browser,
    page,
    'face',
    (await framesOf(person)).map((f) => ['frame', f]),
  );
  expect(res.status).toBe(303);
  return Object.fromEntries(new URL(res.headers.get('location')!).searchParams);
}

/** A new user's first sign-in: password change and enrollment of `person`'s face, up to the face page. */
async function signUp(username: string, person: typeof PERSON_A) {
  await idp.users.add(username, 'temporary-pass-1');
  const { browser, page } = await afterPassword(username, 'temporary-pass-1');
  await submit(browser, page, 'update-password', [
    ['password-new', `${username}-own-password`],
    ['password-confirm', `${username}-own-password`],
  ]);
  const captures = await Promise.all([0, 1, 2].map((i) => capture(person, i)));
  const face = await submit(
    browser,
    page,
    'biometric-enrollment',
    captures.map((c) => ['capture', c]),
  );
  expect(await face.res.text()).toContain('Face verification');
}

async function removeUser(username: string): Promise<Response> {
  const authorization = `Bearer ${await mintedUserToken(idp, 'root')}`;
  return fetch(`${users()}/${username}`, { method: 'DELETE', headers: { authorization } });
}

/** The records of oidc-provider's `model` that speak for `accountId`. */
async function recordsOf(model: string, accountId: string): Promise<number> {
  const dir = path.join(idp.dataDir, 'oidc', model);
  const names = await readdir(dir).catch(() => [] as string[]);
  let n = 0;
  for (const name of names.filter((f) => f.endsWith('.json'))) {
    const text = await readFile(path.join(dir, name), 'utf8').catch(() => '');
    if (text.includes(accountId)) n++;
  }
  return n;
}

beforeAll(async () => {
  idp = await startTestIdp({ env: { IDP_BACKEND_URL: 'http://127.0.0.1:9' }, options: { biometrics: true } });
  api = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'true',
    RECOGNITION_MODEL: 'embedding',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: idp.issuer,
  });
  // The first recognition loads the models: on a busy machine that is past the default 10 s.
  await idp.restart({ IDP_BACKEND_URL: api.url, BIOMETRIC_BACKEND_TIMEOUT_MS: '60000' });
  await idp.users.add('root', 'roots-own-password-1', { admin: true, temporary: false });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

describe('removing a user ends them (#28 finding 5)', () => {
  it("a later account of the same name starts with no face: the old person's face is not taken for it", async () => {
    await signUp('ada', PERSON_A);
    const first = await afterPassword('ada', 'ada-own-password');
    expect((await faceStep(first.browser, first.page, PERSON_A)).code).toBeTruthy();

    expect((await removeUser('ada')).status).toBe(204);

    // A new "ada" (another person, B) enrolls; A, who knows nothing of B's password, is not B's face.
    await signUp('ada', PERSON_B);
    const old = await afterPassword('ada', 'ada-own-password');
    expect(old.html).toContain('Face verification');
    const back = await faceStep(old.browser, old.page, PERSON_A);
    expect(back.code).toBeUndefined();
    expect(back.error).toBe('access_denied');
    // The API holds only the new person's face under "ada".
    const admin = { authorization: `Bearer ${await mintedUserToken(idp, 'root')}` };
    const images = (await (await fetch(`${api.url}/api/images/ada`, { headers: admin })).json()) as { images?: unknown[] };
    expect(images.images).toHaveLength(3);
    const own = await afterPassword('ada', 'ada-own-password');
    expect((await faceStep(own.browser, own.page, PERSON_B)).code).toBeTruthy();
  }, 300_000);

  it('ends their sessions, grants and refresh tokens', async () => {
    await signUp('dee', PERSON_B);
    const { browser, page, verifier } = await afterPassword('dee', 'dee-own-password');
    const { code } = await faceStep(browser, page, PERSON_B);
    const tokens = await tokenRequest(idp.issuer, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: 'lookout-app',
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    const dee = (await idp.users.byUsername('dee'))!;
    expect(await recordsOf('Session', dee.id)).toBeGreaterThan(0);
    expect(await recordsOf('Grant', dee.id)).toBeGreaterThan(0);
    const asDee = { authorization: `Bearer ${tokens.body.access_token}` };
    expect((await fetch(`${api.url}/api/labels`, { headers: asDee })).status).toBe(200);

    expect((await removeUser('dee')).status).toBe(204);
    for (const model of ['Session', 'Grant', 'RefreshToken', 'AccessToken', 'AuthorizationCode', 'Interaction'])
      expect(await recordsOf(model, dee.id), model).toBe(0);
    const refreshed = await tokenRequest(idp.issuer, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: 'lookout-app',
    });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    // Their unexpired access token: refused by the API (issued before their face data was deleted).
    const late = await fetch(`${api.url}/api/labels`, { headers: asDee });
    expect(late.status).toBe(401);
    expect(late.headers.get('www-authenticate')).toMatch(/invalid_token.*removed/);
    // Signed in again in that browser: no session carries them through; the password is asked for again.
    const again = await browser.follow(authorizeUrl(idp.issuer, REDIRECT, pkce().challenge, { state: 's2' }), origin());
    expect(await again.res.text()).toContain('password');
  }, 180_000);

  it('keeps the user when the face service cannot delete their face (503, nothing lost)', async () => {
    await idp.users.add('cy', 'temporary-pass-1');
    await idp.restart({ IDP_BACKEND_URL: 'http://127.0.0.1:9' });
    try {
      const res = await removeUser('cy');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('face_service_unavailable');
      expect(await idp.users.byUsername('cy')).toBeDefined();
    } finally {
      await idp.restart({ IDP_BACKEND_URL: api.url, BIOMETRIC_BACKEND_TIMEOUT_MS: '60000' });
    }
    expect((await removeUser('cy')).status).toBe(204);
  }, 60_000);
});
