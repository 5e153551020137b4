/**
 * #28 finding 6 for the IdP: usernames are ASCII (users.ts USERNAME), so a zero-width joiner, a tag character or
 * any other invisible or format character is refused when a user is made, and a sign-in with one inside a name
 * is not a sign-in as the visible look-alike. (The API's labels refuse them too: shared/api/labels.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../server/idp/users.js';
import { addSignedUpUsers, APP_REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { mintedUserToken } from '../helpers/idp-admin-token.js';
import { Browser } from './browser.js';

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
  await addSignedUpUsers(idp.users, [
    ['ab', false],
    ['root', true],
  ]);
});

afterAll(async () => {
  await idp?.close();
});

describe('usernames with invisible characters', () => {
  it.each(['a\u200db', 'a\u{e0041}b', 'a\u200bb', 'a\u00adb', 'ab\ufe0f', 'a\u2060b', '\u{e0001}ab'])(
    'refuses to make %j',
    async (name) => {
      const made = idp.users.add(name, 'temporary-pass-1');
      await expect(made).rejects.toBeInstanceOf(UserError);
      await expect(made).rejects.toMatchObject({ code: 'invalid_username' });
      expect((await idp.users.list()).map((u) => u.username)).toEqual(['ab', 'root']);
    },
  );

  it('does not sign in "a\\u200db" as "ab"', async () => {
    const browser = new Browser();
    const origin = new URL(idp.url).origin;
    const login = await browser.follow(authorizeUrl(idp.issuer, APP_REDIRECT, pkce().challenge), origin);
    const res = await browser.postForm(`${login.url}/password`, { username: 'a\u200db', password: 'abs-own-password' });
    expect(res.status).toBe(401);
    const ok = await browser.postForm(`${login.url}/password`, { username: 'ab', password: 'abs-own-password' });
    expect(ok.status).toBe(303);
  });
});

describe("#35 item 3: usernames that read as a client's service account", () => {
  // Keycloak names a client's client-credentials account `service-account-<client>`: a user so named could pass as
  // a client wherever a name is read instead of the token's grant.
  it.each(['service-account-lookout-app', 'Service-Account-mallory', ' SERVICE-ACCOUNT-x', 'service-account-'])(
    'the admin API refuses to make %j with 400 invalid_username',
    async (username) => {
      const res = await fetch(`${new URL(idp.url).origin}/admin/realms/lookout/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await mintedUserToken(idp, 'root')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ username, temporary_password: 'temporary-pass-1' }),
      });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('invalid_username');
      expect(error.message).toContain('service-account-');
      expect((await idp.users.list()).map((u) => u.username)).toEqual(['ab', 'root']);
    },
  );

  it('nor does the user store (the CLI and the bootstrap administrator)', async () => {
    await expect(idp.users.add('service-account-lookout-service', 'temporary-pass-1', { admin: true })).rejects.toMatchObject({
      code: 'invalid_username',
    });
  });

  it('still makes names that merely contain the words', async () => {
    const made = await idp.users.add('my-service-account-x', 'temporary-pass-1');
    expect(made.username).toBe('my-service-account-x');
  });
});
