/**
 * #28 finding 1: the attempt limits hold against a burst of concurrent requests (over real HTTP on 127.0.0.1).
 * Checking the lock before the ~0.1 s password check and counting the failure after it let every request already
 * in flight be evaluated: 61 guesses at once gave 60 x 401 and a 303 for the right password. Each attempt is now
 * counted before it is checked, so the guesses beyond the limit are 429 without being checked, the right password
 * among them too; the face step likewise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceVerifier } from '../../server/idp/flow.js';
import { addSignedUpUsers, APP_REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { Browser } from './browser.js';

let idp: TestIdp;
let faceChecks = 0;
/** Stand-in face step that takes a while, as the API's verification does; grants only the frame `right`. */
const faceVerifier: FaceVerifier = {
  async verify(_user, evidence) {
    faceChecks++;
    await new Promise((r) => setTimeout(r, 1000));
    return evidence.frames[0] === 'right'
      ? { granted: true, score: 90 }
      : { granted: false, code: 'not_recognised', reason: 'Your face was not recognised.' };
  },
};

/** Resolves once `probe` holds (polled). */
async function until(probe: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !probe(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() > end) throw new Error('timed out');
}

beforeAll(async () => {
  idp = await startTestIdp({ env: { BIOMETRIC_MAX_ATTEMPTS: '3' }, options: { faceVerifier } });
  await addSignedUpUsers(idp.users, [
    ['ada', false],
    ['bob', false],
  ]);
}, 60_000);

afterAll(async () => {
  await idp?.close();
});

/** A new browser at the login page of a new sign-in. */
async function loginPage() {
  const browser = new Browser();
  const origin = new URL(idp.url).origin;
  const login = await browser.follow(authorizeUrl(idp.issuer, APP_REDIRECT, pkce().challenge), origin);
  expect(login.res.status).toBe(200);
  await login.res.arrayBuffer();
  return { browser, url: login.url, origin };
}

describe('attempt limits under a burst of concurrent requests', () => {
  it('answers 429 to the password guesses beyond the limit, the right password sent after them too', async () => {
    // The real password check, made slower (as on a busy machine), so the burst is surely in flight at once.
    const users = idp.users;
    const authenticate = users.authenticate.bind(users);
    let checks = 0;
    users.authenticate = async (name, password) => {
      checks++;
      await new Promise((r) => setTimeout(r, 1000));
      return authenticate(name, password);
    };
    try {
      const pages = await Promise.all(Array.from({ length: 61 }, () => loginPage()));
      const post = async ({ browser, url }: (typeof pages)[number], password: string) => {
        const res = await browser.postForm(`${url}/password`, { username: 'bob', password });
        await res.arrayBuffer();
        return res.status;
      };
      const wrong = pages.slice(0, 60).map((page, i) => post(page, `guess-${i}`));
      await until(() => checks >= 10); // the limit's worth of guesses is being checked
      const right = await post(pages[60], 'bobs-own-password');
      const statuses = [...(await Promise.all(wrong)), right];
      const count = (status: number) => statuses.filter((s) => s === status).length;
      expect({ 401: count(401), 429: count(429), 303: count(303) }).toEqual({ 401: 10, 429: 51, 303: 0 });
      expect(right).toBe(429);
      expect(checks).toBe(10);
      // After the burst, the right password is still refused until the window has passed.
      expect(await post(await loginPage(), 'bobs-own-password')).toBe(429);
    } finally {
      users.authenticate = authenticate;
    }
  }, 120_000);

  it('checks no more faces than the limit allows, and a right face sent after them does not pass', async () => {
    // Ten sign-ins of ada at the face step (the right password: no password failure counted).
    const sessions = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const page = await loginPage();
        const res = await page.browser.postForm(`${page.url}/password`, { username: 'ada', password: 'adas-own-password' });
        expect(res.status).toBe(303);
        await page.browser.follow(page.url, page.origin, res);
        return page;
      }),
    );
    faceChecks = 0;
    const face = async ({ browser, url, origin }: (typeof sessions)[number], frame: string) => {
      const done = await browser.follow(url, origin, await browser.postForm(`${url}/face`, { frame }));
      const params = new URL(done.res.headers.get('location')!).searchParams;
      return params.get('code') ? 'granted' : (params.get('error_description') ?? '');
    };
    const wrong = sessions.slice(0, 9).map((s) => face(s, 'wrong'));
    await until(() => faceChecks >= 3);
    const right = await face(sessions[9], 'right');
    const outcomes = [...(await Promise.all(wrong)), right];
    expect(right).toMatch(/^Too many failed face checks for this user\./);
    expect(faceChecks).toBe(3);
    expect(outcomes.filter((o) => o === 'Your face was not recognised.')).toHaveLength(3);
    expect(outcomes.filter((o) => /^Too many failed face checks for this user\./.test(o))).toHaveLength(7);
  }, 120_000);
});
