/**
 * Passkeys (WebAuthn) beside the face: the two ceremonies of passkeys.ts against real WebAuthn answers made by a
 * software authenticator (test/helpers/soft-authenticator.ts: real keys, real CBOR, real signatures), each way
 * an answer can be wrong denied; then the sign-in over HTTP with IDP_PASSKEYS=required and =alternative (the
 * issuer on `localhost`: an IP address cannot be a relying party), and the administrator's recovery.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACE_ONLY, stepAfterPassword } from '../../server/idp/flow.js';
import { passkeyAdmin } from '../../server/idp/passkey-admin.js';
import {
  authenticationOptions,
  finishAuthentication,
  finishRegistration,
  PasskeyStore,
  registrationOptions,
  relyingPartyFor,
} from '../../server/idp/passkeys.js';
import { IdpSettingsError, loadIdpSettings } from '../../server/idp/settings.js';
import type { User } from '../../server/idp/users.js';
import { createLogger } from '../../server/logger.js';
import { freePort } from '../helpers/server-process.js';
import { addSignedUpUsers, APP_REDIRECT, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { mintedUserToken } from '../helpers/idp-admin-token.js';
import type { FaceVerifier } from '../../server/idp/flow.js';
import { authenticate, newCredential, register, type SoftCredential } from '../helpers/soft-authenticator.js';
import { Browser } from './browser.js';

const ORIGIN = 'http://localhost:8081';
const rp = relyingPartyFor(`${ORIGIN}/realms/lookout`, 'lookout')!;

function someone(id: string, username: string): User {
  const now = new Date().toISOString();
  return { id, username, passwordHash: '', requiredActions: [], roles: [], groups: [], attributes: {}, createdAt: now, updatedAt: now };
}

describe('the passkey ceremonies fail closed', () => {
  let dir: string;
  let store: PasskeyStore;
  const ada = someone('u-ada', 'ada');
  const bob = someone('u-bob', 'bob');
  let adaKey: SoftCredential;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'lookout-passkeys-'));
    store = new PasskeyStore(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const enroll = async (user: User, bend: Parameters<typeof register>[3] = {}) => {
    const options = await registrationOptions(rp, user, []);
    const { credential, response } = register(options, ORIGIN, newCredential(), bend);
    const result = await finishRegistration({ rp, store, user, challenge: options.challenge, response: JSON.stringify(response) });
    return { credential, result };
  };

  const signIn = async (user: User, credential: SoftCredential, bend: Parameters<typeof authenticate>[3] = {}) => {
    const options = await authenticationOptions(rp, (await store.forUser(user.id)).credentials);
    const response = authenticate(options, ORIGIN, credential, bend);
    return finishAuthentication({ rp, store, user, challenge: options.challenge, response: JSON.stringify(response) });
  };

  it('registers a passkey and signs in with it, the counter advanced in the store', async () => {
    const { credential, result } = await enroll(ada);
    expect(result).toMatchObject({ granted: true });
    adaKey = credential;
    expect(await signIn(ada, adaKey)).toMatchObject({ granted: true });
    expect((await store.forUser(ada.id)).credentials[0]).toMatchObject({ counter: 1, lastUsedAt: expect.any(String) });
  });

  it.each([
    ['another origin', { origin: 'http://evil.example' }],
    ['another rpID', { rpId: 'evil.example' }],
    ['another challenge', { challenge: Buffer.from('not-the-one').toString('base64url') }],
    ['the wrong ceremony type', { type: 'webauthn.get' }],
    ['no user verification', { uv: false }],
  ])('a registration with %s is refused and stores nothing', async (_, bend) => {
    const before = (await store.forUser(bob.id)).credentials.length;
    const { result } = await enroll(bob, bend);
    expect(result.granted).toBe(false);
    expect((await store.forUser(bob.id)).credentials).toHaveLength(before);
  });

  it('a registration without a challenge (used or never issued) or with unreadable JSON is refused', async () => {
    const options = await registrationOptions(rp, bob, []);
    const { response } = register(options, ORIGIN);
    expect(await finishRegistration({ rp, store, user: bob, challenge: undefined, response: JSON.stringify(response) })).toMatchObject({
      granted: false,
      code: 'passkey_challenge',
    });
    expect(await finishRegistration({ rp, store, user: bob, challenge: options.challenge, response: '{not json' })).toMatchObject({
      granted: false,
      code: 'invalid_passkey_response',
    });
  });

  it.each([
    ['another origin', { origin: 'http://evil.example' }],
    ['another rpID', { rpId: 'evil.example' }],
    ['another challenge (a replayed answer)', { challenge: Buffer.from('an-old-challenge').toString('base64url') }],
    ['the wrong ceremony type', { type: 'webauthn.create' }],
    ['no user verification', { uv: false }],
    ['a signature by another key', { signWith: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }],
  ])('a sign-in with %s is denied', async (_, bend) => {
    const counter = (await store.forUser(ada.id)).credentials[0].counter;
    expect(await signIn(ada, adaKey, bend)).toMatchObject({ granted: false });
    expect((await store.forUser(ada.id)).credentials[0].counter).toBe(counter);
  });

  it('a counter that does not advance (a cloned authenticator, or the same answer twice) is denied', async () => {
    const stored = (await store.forUser(ada.id)).credentials[0].counter;
    expect(await signIn(ada, adaKey, { counter: stored })).toMatchObject({ granted: false });
    const options = await authenticationOptions(rp, (await store.forUser(ada.id)).credentials);
    const response = JSON.stringify(authenticate(options, ORIGIN, adaKey));
    expect(await finishAuthentication({ rp, store, user: ada, challenge: options.challenge, response })).toMatchObject({ granted: true });
    expect(await finishAuthentication({ rp, store, user: ada, challenge: options.challenge, response })).toMatchObject({ granted: false });
  });

  it("a credential the store does not hold, or another user's, is denied", async () => {
    expect(await signIn(ada, newCredential())).toMatchObject({ granted: false, code: 'unknown_passkey' });
    const { credential } = await enroll(bob);
    expect(await signIn(ada, credential)).toMatchObject({ granted: false, code: 'unknown_passkey' });
    expect(await signIn(bob, credential)).toMatchObject({ granted: true });
  });

  it('a passkey registered once cannot be registered again (to anyone)', async () => {
    const options = await registrationOptions(rp, bob, []);
    const { response } = register(options, ORIGIN, adaKey);
    expect(
      await finishRegistration({ rp, store, user: bob, challenge: options.challenge, response: JSON.stringify(response) }),
    ).toMatchObject({
      granted: false,
      code: 'passkey_exists',
    });
  });

  it('a store that cannot be read denies every sign-in', async () => {
    const broken = await mkdtemp(path.join(tmpdir(), 'lookout-passkeys-broken-'));
    try {
      await writeFile(path.join(broken, 'passkeys.json'), '{"version":1,"users":{"u-ada":{"credentials":"nope"}}}');
      const brokenStore = new PasskeyStore(broken);
      await expect(brokenStore.forUser(ada.id)).rejects.toThrow(/not a passkeys file/);
      const options = await authenticationOptions(rp, []);
      const response = JSON.stringify(authenticate({ ...options, rpId: rp.id }, ORIGIN, adaKey));
      expect(await finishAuthentication({ rp, store: brokenStore, user: ada, challenge: options.challenge, response })).toMatchObject({
        granted: false,
      });
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
  });

  it('an IP address is no relying party, and IDP_PASSKEYS=required needs a host name', () => {
    expect(relyingPartyFor('http://127.0.0.1:8081/realms/lookout', 'lookout')).toBeUndefined();
    expect(relyingPartyFor('http://[::1]:8081/realms/lookout', 'lookout')).toBeUndefined();
    expect(rp).toEqual({ id: 'localhost', origin: ORIGIN, name: 'lookout' });
    expect(() => loadIdpSettings({ IDP_PASSKEYS: 'required' })).toThrow(IdpSettingsError);
    expect(loadIdpSettings({ IDP_PASSKEYS: 'required', IDP_ISSUER: `${ORIGIN}/realms/lookout` }).passkeys).toBe('required');
    expect(loadIdpSettings({}).passkeys).toBe('alternative');
    expect(() => loadIdpSettings({ IDP_PASSKEYS: 'maybe' })).toThrow(/IDP_PASSKEYS/);
  });

  it('the steps after the password: passkey when the user has one, enrollment when one is required of a user without a face, else the face', () => {
    const enrolled = { ...ada, attributes: { biometric_enrolled: 'true' } };
    expect(stepAfterPassword(enrolled, FACE_ONLY)).toBe('face');
    expect(stepAfterPassword(enrolled, { policy: 'off', passkeys: 2, userRequired: true })).toBe('face');
    expect(stepAfterPassword(enrolled, { policy: 'alternative', passkeys: 1, userRequired: false })).toBe('passkey');
    expect(stepAfterPassword(enrolled, { policy: 'alternative', passkeys: 0, userRequired: false })).toBe('face');
    // #35 item 7: a user with a face proves it before the required passkey is registered.
    expect(stepAfterPassword(enrolled, { policy: 'alternative', passkeys: 0, userRequired: true })).toBe('face');
    expect(stepAfterPassword(enrolled, { policy: 'required', passkeys: 0, userRequired: false })).toBe('face');
    expect(stepAfterPassword(ada, { policy: 'alternative', passkeys: 0, userRequired: true })).toBe('passkey-enrollment');
    expect(stepAfterPassword(ada, { policy: 'required', passkeys: 0, userRequired: false })).toBe('passkey-enrollment');
    expect(stepAfterPassword(ada, { policy: 'alternative', passkeys: 0, userRequired: false })).toBe('biometric-enrollment');
  });
});

/** The WebAuthn options a passkey page carries (its `data-options`, HTML-escaped JSON). */
function pageOptions(html: string): { challenge: string; rp?: { id: string }; rpId?: string; allowCredentials?: { id: string }[] } {
  const raw = /data-options="([^"]*)"/.exec(html)?.[1];
  if (!raw) throw new Error(`no passkey options in the page: ${html.slice(0, 400)}`);
  return JSON.parse(
    raw
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  );
}

describe('passkey sign-in over HTTP', () => {
  let idp: TestIdp;
  let issuerOrigin: string;

  beforeAll(async () => {
    const port = await freePort();
    issuerOrigin = `http://localhost:${port}`;
    idp = await startTestIdp({ port, env: { IDP_ISSUER: `${issuerOrigin}/realms/lookout`, IDP_PASSKEYS: 'required' } });
  }, 60_000);
  afterAll(() => idp?.close());

  function authorizeUrl(): string {
    const url = new URL(`${idp.issuer}/protocol/openid-connect/auth`);
    const params = {
      client_id: 'lookout-app',
      response_type: 'code',
      redirect_uri: APP_REDIRECT,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.href;
  }

  async function submit(browser: Browser, pageUrl: string, step: string, fields: Record<string, string>) {
    const res = await browser.postForm(`${pageUrl}/${step}`, fields);
    if (res.status !== 303) return { res, url: pageUrl };
    return browser.follow(pageUrl, issuerOrigin, res);
  }

  /** Password accepted: the page after it. */
  async function password(browser: Browser, username: string, secret: string) {
    const login = await browser.follow(authorizeUrl(), issuerOrigin);
    const next = await submit(browser, login.url, 'password', { username, password: secret });
    return { url: login.url, res: next.res, html: await next.res.text() };
  }

  /** The query the IdP sent the browser back to the app with, past its own resume redirect. */
  async function backAtApp(browser: Browser, pageUrl: string, res: Response): Promise<URLSearchParams> {
    const last = await browser.follow(pageUrl, issuerOrigin, res);
    expect(last.res.status).toBe(303);
    const location = new URL(last.res.headers.get('location')!, last.url);
    expect(`${location.origin}${location.pathname}`).toBe(APP_REDIRECT);
    return location.searchParams;
  }

  let key: SoftCredential;
  let oldAnswer: string;

  it('required: a new user registers a passkey at first sign-in, proves it, and gets a code', async () => {
    const user = await idp.users.add('ada', 'temporary-pass-1');
    await idp.users.setPassword(user.id, 'adas-own-password');
    const browser = new Browser();
    const first = await password(browser, 'ada', 'adas-own-password');
    expect(first.html).toContain('Register a passkey');
    expect(first.html).not.toContain('Enrol your face');
    const options = pageOptions(first.html);
    expect(options.rp?.id).toBe('localhost');
    const reg = register(options as { challenge: string; rp: { id: string } }, issuerOrigin);
    key = reg.credential;
    const proving = await submit(browser, first.url, 'passkey-enrollment', { response: JSON.stringify(reg.response) });
    const html = await proving.res.text();
    expect(html).toContain('Sign in with your passkey');
    expect(html).not.toContain('Use my face instead');
    const auth = pageOptions(html);
    expect(auth.allowCredentials?.map((c) => c.id)).toEqual([key.id.toString('base64url')]);
    oldAnswer = JSON.stringify(authenticate(auth, issuerOrigin, key));
    const done = await browser.postForm(`${proving.url}/passkey`, { response: oldAnswer });
    const back = await backAtApp(browser, proving.url, done);
    expect(back.get('error')).toBeNull();
    expect(back.get('code')).toBeTruthy();
  });

  it('the next sign-in asks the passkey; an answer to an earlier challenge is denied', async () => {
    const browser = new Browser();
    const next = await password(browser, 'ada', 'adas-own-password');
    expect(next.html).toContain('Sign in with your passkey');
    const back = await backAtApp(browser, next.url, await browser.postForm(`${next.url}/passkey`, { response: oldAnswer }));
    expect(back.get('code')).toBeNull();
    expect(back.get('error')).toBe('access_denied');
  });

  it('a challenge is single-use: the same answer posted twice in one sign-in gets a code once', async () => {
    const browser = new Browser();
    const next = await password(browser, 'ada', 'adas-own-password');
    const answer = JSON.stringify(authenticate(pageOptions(next.html), issuerOrigin, key));
    const [a, b] = await Promise.all([
      browser.postForm(`${next.url}/passkey`, { response: answer }),
      browser.postForm(`${next.url}/passkey`, { response: answer }),
    ]);
    // One answer is checked and ends the sign-in; the other finds the challenge gone (or the sign-in over).
    const codes: string[] = [];
    for (const res of [a, b]) {
      if (res.status !== 303) continue;
      const last = await browser.follow(next.url, issuerOrigin, res);
      const location = last.res.headers.get('location');
      const code = location ? new URL(location, last.url).searchParams.get('code') : null;
      if (code) codes.push(code);
    }
    expect(codes).toHaveLength(1);
  });

  it('a wrong key for the registered credential id is denied', async () => {
    const browser = new Browser();
    const next = await password(browser, 'ada', 'adas-own-password');
    const forged = { ...newCredential(), id: key.id, counter: key.counter + 10 };
    const answer = JSON.stringify(authenticate(pageOptions(next.html), issuerOrigin, forged));
    const back = await backAtApp(browser, next.url, await browser.postForm(`${next.url}/passkey`, { response: answer }));
    expect(back.get('error')).toBe('access_denied');
  });

  it('a store that cannot be read stops the sign-in after the password (no code, no face fall back)', async () => {
    const file = path.join(idp.dataDir, 'passkeys.json');
    const { readFile } = await import('node:fs/promises');
    const kept = await readFile(file, 'utf8');
    await writeFile(file, 'not json');
    try {
      const browser = new Browser();
      const next = await password(browser, 'ada', 'adas-own-password');
      expect(next.res.status).toBe(503);
      expect(next.html).toContain('Passkeys unavailable');
    } finally {
      await writeFile(file, kept);
    }
  });

  it("recovery: an administrator removes the user's passkeys, and the next sign-in registers a new one", async () => {
    const admin = passkeyAdmin({ store: new PasskeyStore(idp.dataDir), users: idp.users, log: createLogger('silent') });
    const req = (method: string) => ({ method, headers: {} }) as never;
    const headers: Record<string, string> = {};
    const res = {
      setHeader: (name: string, value: string) => {
        headers[name] = value;
      },
    } as never;
    // Through the admin API, the same authorisation first: no token, no recovery.
    const anonymous = await fetch(`${idp.url}/admin/realms/lookout/users/ada/passkeys`, { method: 'DELETE' });
    expect(anonymous.status).toBe(401);
    expect(await admin(req('GET'), res, '/ada/passkeys', 'root')).toMatchObject({
      status: 200,
      body: { passkeys: [{ id: key.id.toString('base64url') }] },
    });
    expect(await admin(req('GET'), res, '/%E0/passkeys', 'root')).toMatchObject({ status: 400 });
    expect(await admin(req('GET'), res, '/nobody/passkeys', 'root')).toMatchObject({ status: 404 });
    expect(await admin(req('GET'), res, '/ada', 'root')).toBeUndefined();
    expect(await admin(req('POST'), res, '/ada/passkeys', 'root')).toMatchObject({ status: 405 });
    expect(headers.Allow).toBe('GET, DELETE');
    expect(await admin(req('DELETE'), res, '/ADA/passkeys', 'root')).toEqual({ status: 204 });
    const browser = new Browser();
    const next = await password(browser, 'ada', 'adas-own-password');
    expect(next.html).toContain('Register a passkey');
  });

  it('alternative: a face-enrolled user without a passkey gets the face step, and cannot swap it for a new passkey', async () => {
    await idp.restart({ IDP_PASSKEYS: 'alternative' });
    try {
      const user = await idp.users.add('grace', 'temporary-pass-1');
      await idp.users.setPassword(user.id, 'graces-own-password');
      const browser = new Browser();
      const first = await password(browser, 'grace', 'graces-own-password');
      expect(first.html).toContain('Enrol your face');
      expect(first.html).toContain('Register a passkey instead');
      await idp.users.markEnrolled(user.id);
      const again = new Browser();
      const next = await password(again, 'grace', 'graces-own-password');
      expect(next.html).toContain('Face verification');
      expect(next.html).toContain('Add a passkey after this check');
      const swap = await again.postForm(`${next.url}/choose-passkey`, {});
      expect(swap.status).toBe(409);
      const enroll = await again.postForm(`${next.url}/passkey-enrollment`, { response: '{}' });
      expect(enroll.status).toBe(409);
      // The first sign-in (not enrolled then) may choose a passkey instead of the face.
      const chosen = await submit(browser, first.url, 'choose-passkey', {});
      expect(await chosen.res.text()).toContain('Register a passkey');
    } finally {
      await idp.restart();
    }
  });
});

describe('#35 item 7: a passkey required of a user with a face is added only after the face', () => {
  let idp: TestIdp;
  let issuerOrigin: string;
  /** Grants only the frame "hoppers-face": anyone else at the camera is denied. */
  const onlyHopper: FaceVerifier = {
    verify: async (_user, { frames }) =>
      frames.length === 1 && frames[0] === 'hoppers-face'
        ? { granted: true, score: 90 }
        : { granted: false, code: 'not_recognised', reason: 'Your face was not recognised.' },
  };

  beforeAll(async () => {
    const port = await freePort();
    issuerOrigin = `http://localhost:${port}`;
    idp = await startTestIdp({
      port,
      env: { IDP_ISSUER: `${issuerOrigin}/realms/lookout`, IDP_PASSKEYS: 'alternative' },
      options: { faceVerifier: onlyHopper },
    });
    // hopper signed up with her face (enrolled), no passkey; root is an administrator.
    await addSignedUpUsers(idp.users, [
      ['hopper', false],
      ['root', true],
    ]);
    // The administrator requires a passkey of hopper, over the admin API.
    const res = await fetch(`${idp.url}/admin/realms/lookout/users/hopper/passkeys/required`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await mintedUserToken(idp, 'root')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ required: true }),
    });
    expect(res.status).toBe(200);
  }, 60_000);
  afterAll(() => idp?.close());

  function authorizeUrl(): string {
    const url = new URL(`${idp.issuer}/protocol/openid-connect/auth`);
    const params = {
      client_id: 'lookout-app',
      response_type: 'code',
      redirect_uri: APP_REDIRECT,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.href;
  }

  async function afterPassword(browser: Browser) {
    const login = await browser.follow(authorizeUrl(), issuerOrigin);
    const res = await browser.postForm(`${login.url}/password`, { username: 'hopper', password: 'hoppers-own-password' });
    expect(res.status).toBe(303);
    const next = await browser.follow(login.url, issuerOrigin, res);
    return { url: login.url, html: await next.res.text() };
  }

  async function backAtApp(browser: Browser, pageUrl: string, res: Response): Promise<URLSearchParams> {
    const last = await browser.follow(pageUrl, issuerOrigin, res);
    const location = new URL(last.res.headers.get('location')!, last.url);
    expect(`${location.origin}${location.pathname}`).toBe(APP_REDIRECT);
    return location.searchParams;
  }

  it('someone with the password alone gets the face step, not "Register a passkey", and registers nothing', async () => {
    const browser = new Browser();
    const next = await afterPassword(browser);
    expect(next.html).not.toContain('Register a passkey');
    expect(next.html).toContain('Face verification');
    // The registration cannot be reached past the face: out of order.
    const early = await browser.postForm(`${next.url}/passkey-enrollment`, {
      response: JSON.stringify(register({ challenge: 'AAAA', rp: { id: 'localhost' } }, issuerOrigin).response),
    });
    expect(early.status).toBe(409);
    // A stranger at the camera is denied; no passkey was stored.
    const back = await backAtApp(browser, next.url, await browser.postForm(`${next.url}/face`, { frame: 'a-strangers-face' }));
    expect(back.get('error')).toBe('access_denied');
    const hopper = (await idp.users.byUsername('hopper'))!;
    expect((await new PasskeyStore(idp.dataDir).forUser(hopper.id)).credentials).toHaveLength(0);
  });

  it('hopper proves her face, then registers the required passkey, and is signed in with both', async () => {
    const browser = new Browser();
    const next = await afterPassword(browser);
    expect(next.html).toContain('Face verification');
    const res = await browser.postForm(`${next.url}/face`, { frame: 'hoppers-face' });
    expect(res.status).toBe(303);
    const page = await browser.follow(next.url, issuerOrigin, res);
    const html = await page.res.text();
    expect(html).toContain('Register a passkey');
    const reg = register(pageOptions(html) as { challenge: string; rp: { id: string } }, issuerOrigin);
    const done = await browser.postForm(`${next.url}/passkey-enrollment`, { response: JSON.stringify(reg.response) });
    const back = await backAtApp(browser, next.url, done);
    expect(back.get('error')).toBeNull();
    expect(back.get('code')).toBeTruthy();
    // From now on the passkey is asked for.
    const later = await afterPassword(new Browser());
    expect(later.html).toContain('Sign in with your passkey');
  });
});
