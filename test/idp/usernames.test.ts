/**
 * #28 finding 6 for the IdP: usernames are ASCII (users.ts USERNAME), so a zero-width joiner, a tag character or
 * any other invisible or format character is refused when a user is made, and a sign-in with one inside a name
 * is not a sign-in as the visible look-alike. (The API's labels refuse them too: shared/api/labels.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../server/idp/users.js';
import { addSignedUpUsers, APP_REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { Browser } from './browser.js';

let idp: TestIdp;

beforeAll(async () => {
  idp = await startTestIdp();
  await addSignedUpUsers(idp.users, [['ab', false]]);
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
      expect((await idp.users.list()).map((u) => u.username)).toEqual(['ab']);
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
