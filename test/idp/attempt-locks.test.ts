/**
 * The attempt locks survive a restart of the IdP (over real HTTP on 127.0.0.1, the IdP's own clock hook standing in
 * for the 15 minutes): a user locked out of the face step, or a username locked by wrong passwords, is still
 * locked after the restart, and free once the window has passed. The file holds usernames and times only.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaceDecision, FaceVerifier } from '../../server/idp/flow.js';
import { addSignedUpUsers, APP_REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { Browser } from './browser.js';

let idp: TestIdp;
let clock = Date.now();
const logLines: string[] = [];
/** What the stand-in face step decides next. */
let decision: FaceDecision = { granted: false, code: 'not_recognised', reason: 'Your face was not recognised.' };
const faceVerifier: FaceVerifier = { verify: async () => decision };
const WINDOW_MS = 15 * 60_000;

beforeAll(async () => {
  idp = await startTestIdp({ env: { BIOMETRIC_MAX_ATTEMPTS: '2' }, options: { faceVerifier, now: () => clock }, logLines });
  await addSignedUpUsers(idp.users, [
    ['ada', false],
    ['bob', false],
  ]);
});

afterAll(async () => {
  await idp?.close();
});

/** A new browser's sign-in up to the password answer: the response and the login page's URL. */
async function password(username: string, secret: string) {
  const browser = new Browser();
  const origin = new URL(idp.url).origin;
  const login = await browser.follow(authorizeUrl(idp.issuer, APP_REDIRECT, pkce().challenge), origin);
  const res = await browser.postForm(`${login.url}/password`, { username, password: secret });
  return { browser, login, res };
}

/** Password, then the face step: what the IdP sent back to the app (a code, or the error and its reason). */
async function faceSignIn(username: string): Promise<Record<string, string>> {
  const { browser, login, res } = await password(username, `${username}s-own-password`);
  expect(res.status).toBe(303);
  const origin = new URL(idp.url).origin;
  await browser.follow(login.url, origin, res);
  const done = await browser.follow(login.url, origin, await browser.postForm(`${login.url}/face`, {}));
  return Object.fromEntries(new URL(done.res.headers.get('location')!).searchParams);
}

const TOO_MANY = /^Too many failed face checks for this user\. Try again in \d+ minutes?\.$/;

describe('attempt locks across a restart', () => {
  it('keeps a face lock over a restart and lifts it when the window has passed', async () => {
    for (let i = 0; i < 2; i++) expect((await faceSignIn('ada')).error_description).toBe('Your face was not recognised.');
    decision = { granted: true, score: 90 };
    expect((await faceSignIn('ada')).error_description).toMatch(TOO_MANY);

    await idp.restart();
    const locked = await faceSignIn('ada');
    expect(locked.code).toBeUndefined();
    expect(locked.error_description).toMatch(TOO_MANY);
    expect((await faceSignIn('bob')).code).toBeTruthy(); // only ada is locked

    // Stored: usernames and times, nothing else, readable by the IdP's user only.
    const file = path.join(idp.dataDir, 'attempts-face.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, failures: { ada: [expect.any(Number), expect.any(Number)] } });
    expect((await stat(file)).mode & 0o077).toBe(0);

    clock += WINDOW_MS + 1;
    await idp.restart(); // loading drops what left the window
    expect((await faceSignIn('ada')).code).toBeTruthy();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, failures: {} });
  });

  it('keeps a password lock over a restart, until the window has passed', async () => {
    for (let i = 0; i < 10; i++) expect((await password('bob', `guess-${i}`)).res.status).toBe(401);
    await idp.restart();
    const locked = await password('bob', 'bobs-own-password');
    expect(locked.res.status).toBe(429);
    expect(await locked.res.text()).toContain('Too many failed sign-ins for this user. Try again in 15 minutes.');
    clock += WINDOW_MS + 1;
    expect((await password('bob', 'bobs-own-password')).res.status).toBe(303);
  });

  it('starts afresh, and says so, when the file is not one it wrote', async () => {
    await writeFile(path.join(idp.dataDir, 'attempts-face.json'), '{"version": 1, "failures": ');
    await idp.restart();
    expect(logLines.join('\n')).toMatch(/attempt limits lost: the file is not readable, starting with none/);
    decision = { granted: false, code: 'not_recognised', reason: 'Your face was not recognised.' };
    expect((await faceSignIn('ada')).error_description).toBe('Your face was not recognised.');
    expect(JSON.parse(await readFile(path.join(idp.dataDir, 'attempts-face.json'), 'utf8')).failures.ada).toHaveLength(1);
  });
});
