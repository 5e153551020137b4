/**
 * The IdP's own enrollment and face pages in Chromium with the fake camera, against the real API (embedding
 * recognizer, AUTH_MODE=oidc taking the IdP's service token) and the real face step: a new user's first sign-in
 * (temporary password changed, 3 pictures taken, checked and enrolled), then a sign-in with the same face that
 * gets a code, and one with another person's face that is denied. The app's redirect URI is answered by the test
 * (page.route): the web app's side of sign-in is auth.spec.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, expect, type Page, test } from '@playwright/test';
import { type RunningIdp, startIdp } from '../server/idp/app.js';
import { loadIdpSettings } from '../server/idp/settings.js';
import { createLogger } from '../server/logger.js';
import { CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { type Lookout, startLookout, freePort } from './helpers/lookout.js';

let lookout: Lookout;
let idp: RunningIdp;
let idpDir: string;
const browsers: Browser[] = [];

const callback = () => `${lookout.url}/auth/callback`;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const idpPort = await freePort();
  lookout = await startLookout({
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: `http://127.0.0.1:${idpPort}/realms/lookout`,
    EMBEDDING_ENABLED: 'true',
    RECOGNITION_MODEL: 'embedding',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
  });
  idpDir = mkdtempSync(path.join(os.tmpdir(), 'lookout-e2e-idp-face-'));
  const settings = loadIdpSettings({
    IDP_PORT: String(idpPort),
    IDP_DATA_DIR: idpDir,
    IDP_APP_REDIRECT_URIS: callback(),
    IDP_BACKEND_URL: lookout.url,
    IDP_SERVICE_CLIENT_SECRET: 'service-secret-0123456789',
    LOG_LEVEL: 'silent',
  });
  idp = await startIdp({ settings, log: createLogger('silent'), biometrics: true });
  await idp.users.add('ada', 'temporary-pass-1');
});

test.afterAll(async () => {
  for (const b of browsers) await b.close();
  await idp?.close();
  await lookout?.close();
  if (idpDir) rmSync(idpDir, { recursive: true, force: true });
});

/** A page whose fake camera shows `photo`; the app's redirect URI is answered here, so where it lands is visible. */
async function cameraPage(photo: string): Promise<Page> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: fakeCameraArgs(await makeFakeCamera(photo)) });
  browsers.push(browser);
  const page = await browser.newPage();
  await page.route(`${callback()}*`, (route) => route.fulfill({ contentType: 'text/plain', body: 'back at the app' }));
  return page;
}

/** The authorization request of the web app (code + PKCE S256; the verifier is never needed here). */
function authorizeUrl(): string {
  const url = new URL(`${idp.issuer}/protocol/openid-connect/auth`);
  for (const [k, v] of Object.entries({
    client_id: 'lookout-app',
    response_type: 'code',
    redirect_uri: callback(),
    scope: 'openid profile roles',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  return url.href;
}

async function password(page: Page, username: string, secret: string): Promise<void> {
  await page.goto(authorizeUrl());
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The face step: the burst goes when the camera shows a picture; returns the query the app got back. */
async function face(page: Page): Promise<URLSearchParams> {
  await expect(page.getByRole('heading', { name: 'Face verification' })).toBeVisible();
  await expect(page.getByRole('status')).toHaveText('Look at the camera, then press the button.');
  await page.getByRole('button', { name: 'Verify my face' }).click();
  await page.waitForURL((url) => url.href.startsWith(callback()), { timeout: 60_000 });
  return new URL(page.url()).searchParams;
}

test("a new user changes the password, enrols A's face from the camera, and signs in with it", async () => {
  test.setTimeout(180_000);
  const page = await cameraPage('faces/grace_hopper.jpg');
  await password(page, 'ada', 'temporary-pass-1');
  await page.getByLabel('New password').fill('adas-own-password');
  await page.getByLabel('Repeat it').fill('adas-own-password');
  await page.getByRole('button', { name: 'Change password' }).click();

  await expect(page.getByRole('heading', { name: 'Enrol your face' })).toBeVisible();
  const finish = page.getByRole('button', { name: 'Finish enrollment' });
  await expect(finish).toBeDisabled();
  for (let n = 1; n <= 3; n++) {
    await page.getByRole('button', { name: 'Take picture' }).click(); // waits until the camera and the last check are done
    await expect(page.getByText('Accepted')).toHaveCount(n, { timeout: 60_000 });
  }
  await expect(page.getByRole('status')).toHaveText('3 of 3 to 5 pictures accepted: you can finish, or take more.');
  await finish.click();

  const back = await face(page);
  expect(back.get('error'), back.get('error_description') ?? '').toBeNull();
  expect(back.get('code')).toBeTruthy();
  expect((await idp.users.byUsername('ada'))?.groups).toEqual(['biometric-enrolled']);
});

test("A's password with B's face is denied", async () => {
  test.setTimeout(120_000);
  const page = await cameraPage('faces/astronaut.png');
  await password(page, 'ada', 'adas-own-password');
  const back = await face(page);
  expect(back.get('code')).toBeNull();
  expect(back.get('error')).toBe('access_denied');
  expect(back.get('error_description')).toMatch(/^(The face seen is not yours\.|Your face was not recognised\.)$/);
});
