/**
 * The web app under AUTH_MODE=oidc, in Chromium against the real API server and Lookout's real identity provider
 * (in this process, on 127.0.0.1): sign-in through the IdP's pages with authorization code + PKCE, the user's name
 * and roles in the header, an administrator creating a user on the Admin page, a biometric-user who sees no admin
 * page, and sign-out. The face step is not what this file is about: a test-only verifier approves it (the real one
 * is checked by the IdP's own tests).
 */
import { checkAccessibility, expect, type Page, test } from './helpers/fixtures.js';
import { addSignedUpUsers, APPROVE_EVERY_FACE, startTestIdp, type TestIdp } from '../test/helpers/idp.js';
import { CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { type PpeDetectorDouble, startPpeDetectorDouble } from '../test/helpers/ppe-detector-double.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { screenshot, startLookout, type Lookout, freePort } from './helpers/lookout.js';

// The IdP's face page sends frames of the camera; the test's verifier approves whatever they show.
const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
let idp: TestIdp;
let detector: PpeDetectorDouble;
let datasetDir: string;

test.beforeAll(async () => {
  // The API needs the issuer and the IdP the app's redirect URI: the IdP's port is chosen first, the API starts
  // with the IdP not up yet (it fails closed meanwhile), then the IdP starts naming the API's port.
  const idpPort = await freePort();
  const issuer = `http://127.0.0.1:${idpPort}/realms/lookout`;
  // The Safety page's training-set download is an administrator's (a PPE detector double and a dataset folder).
  detector = await startPpeDetectorDouble({ scene: 'two-persons-one-equipped' });
  datasetDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-auth-dataset-'));
  lookout = await startLookout({
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: issuer,
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    PPE_ENABLED: 'true',
    PPE_ENDPOINT: detector.url,
    PPE_DATASET_DIR: datasetDir,
  });
  idp = await startTestIdp({
    port: idpPort,
    env: {
      IDP_APP_REDIRECT_URIS: `${lookout.url}/auth/callback`,
      IDP_BACKEND_URL: lookout.url,
      // The shortest lifetime: the app refreshes 30 s before expiry, so its first API call after sign-in refreshes.
      IDP_ACCESS_TOKEN_TTL_S: '30',
    },
    options: { faceVerifier: APPROVE_EVERY_FACE },
  });
  await addSignedUpUsers(idp.users, [
    ['ada', true],
    ['bob', false],
  ]);
});

test.afterAll(async () => {
  await idp?.close();
  await lookout?.close();
  await detector?.close();
  if (datasetDir) fs.rmSync(datasetDir, { recursive: true, force: true });
});

/** From the app's sign-in page through the IdP's password and face pages, back to the app. */
async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(lookout.url);
  await expect(page.getByTestId('sign-in-page')).toBeVisible();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === new URL(idp.url).origin);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Enabled once the camera runs.
  await page.getByRole('button', { name: /verify/i }).click({ timeout: 30_000 });
  await page.waitForURL((url) => url.origin === lookout.url);
  await expect(page.getByTestId('user-name')).toHaveText(username);
  // The IdP rotates refresh tokens, and a 30 s access token is refreshed at once: a navigation that cut that first
  // refresh short would leave the tab with a used refresh token (signed out). Let it finish first.
  await page.waitForLoadState('networkidle');
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  // The IdP asks to confirm ending its session, then sends the browser back to the app.
  await page.waitForURL((url) => url.origin === new URL(idp.url).origin);
  await expect(page.getByRole('button', { name: /yes, sign me out/i })).toBeVisible();
  await checkAccessibility(page, 'idp-sign-out');
  await page.getByRole('button', { name: /yes, sign me out/i }).click();
  await page.waitForURL((url) => url.origin === lookout.url);
  await expect(page.getByTestId('sign-in-page')).toBeVisible();
  await expect(page.getByTestId('user-menu')).toHaveCount(0);
}

test('an administrator signs in with PKCE, sees their name and roles, creates a user on the Admin page, signs out', async ({ page }) => {
  const authorize: URL[] = [];
  const grants: string[] = [];
  page.on('request', (req) => {
    if (req.url().includes('/protocol/openid-connect/auth')) authorize.push(new URL(req.url()));
    if (req.url().endsWith('/protocol/openid-connect/token') && req.method() === 'POST')
      grants.push(new URLSearchParams(req.postData() ?? '').get('grant_type') ?? '');
  });
  await signIn(page, 'ada', 'adas-own-password');
  const bearer: string[] = [];
  page.on('request', (req) => {
    if (req.url().startsWith(`${lookout.url}/api/labels`)) bearer.push((req.headers().authorization ?? '').split(' ')[0]);
  });
  expect(authorize[0].searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorize[0].searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // The code was redeemed, then the short-lived access token refreshed, and the user is still signed in.
  await expect.poll(() => grants).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
  expect(grants[0]).toBe('authorization_code');
  const roles = page.getByRole('list', { name: 'Roles' });
  await expect(roles).toContainText('biometric-admin');
  await expect(roles).toContainText('biometric-user');
  // Every API call of the signed-in app carries the token (the dashboard reads the labels again on a reload).
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('user-name')).toHaveText('ada');
  await expect.poll(() => bearer.length).toBeGreaterThan(0);
  expect(bearer.every((scheme) => scheme === 'Bearer')).toBe(true);

  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Training' })).toBeVisible();
  await nav.getByRole('link', { name: 'Admin' }).click();
  await expect(page.getByRole('heading', { name: 'Administration' })).toBeVisible();
  const table = page.getByTestId('admin-users');
  await expect(table.locator('tr[data-username="bob"]')).toBeVisible();
  await page.getByLabel('Username').fill('carol');
  await page.getByLabel('Temporary password').fill('carols-temporary-1');
  await page.getByRole('button', { name: 'Create user' }).click();
  await expect(page.getByText('carol was created')).toBeVisible();
  await expect(table.locator('tr[data-username="carol"]')).toContainText('temporary password');
  await checkAccessibility(page, 'admin-user-created');
  const carol = await idp.users.byUsername('carol');
  expect(carol?.roles).toEqual(['biometric-user']);
  expect(carol?.requiredActions).toEqual(['UPDATE_PASSWORD', 'biometric-enrollment']);
  await screenshot(page, 'admin-desktop');

  await signOut(page);
});

test('a biometric-user sees their name and role but no admin page, and the Admin page refuses them', async ({ page }) => {
  await signIn(page, 'bob', 'bobs-own-password');
  const roles = page.getByRole('list', { name: 'Roles' });
  await expect(roles).toHaveText('biometric-user');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Live recognition' })).toBeVisible();
  for (const name of ['Admin', 'Training', 'Models']) await expect(nav.getByRole('link', { name, exact: true })).toHaveCount(0);
  await page.goto(`${lookout.url}/admin`);
  await expect(page.getByTestId('admin-only')).toBeVisible();
  await expect(page.getByTestId('admin-users')).toHaveCount(0);
  await checkAccessibility(page, 'admin-refused');
  await signOut(page);
});

test("the Safety page's training-set download carries the token for an administrator and is not offered to a user", async ({ page }) => {
  await signIn(page, 'ada', 'adas-own-password');
  await page.goto(`${lookout.url}/safety`);
  const link = page.getByRole('link', { name: 'Download training set (zip)' });
  await expect(link).toBeVisible();
  const sent = page.waitForRequest((r) => r.url().endsWith('/api/ppe/dataset.zip'));
  const download = page.waitForEvent('download');
  await link.click();
  // A plain link would leave without the bearer token and get 401: the file comes through an authorised fetch.
  expect((await sent).headers().authorization).toMatch(/^Bearer /);
  const saved = await (await download).path();
  expect(fs.readFileSync(saved).subarray(0, 2).toString()).toBe('PK');
  expect((await download).suggestedFilename()).toBe('ppe-dataset.zip');
  await signOut(page);

  await signIn(page, 'bob', 'bobs-own-password');
  await page.goto(`${lookout.url}/safety`);
  await expect(page.getByRole('heading', { name: /safety/i }).first()).toBeVisible();
  await expect(page.getByTestId('dataset-download')).toHaveCount(0);
  await signOut(page);
});

// #26 audit
test("a biometric-user's Live recognition runs on the server, saying why; the administrator sees the refusal in the audit log", async ({
  page,
}) => {
  await signIn(page, 'bob', 'bobs-own-password');
  // Through the app's own links: a reload now could cut the first token refresh short (the IdP rotates refresh tokens).
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Live recognition' }).click();
  // The trained models (everyone's templates) are for kiosks and devices: the browser is refused them.
  const refused = page.getByTestId('models-refused');
  await expect(refused).toContainText('biometric-device', { timeout: 60_000 });
  await expect(refused).toContainText('recognised on the server');
  await expect(page.getByRole('radio', { name: 'On the server' })).toBeChecked();
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeDisabled();
  await checkAccessibility(page, 'recognize-models-refused');
  await signOut(page);

  await signIn(page, 'ada', 'adas-own-password');
  await nav.getByRole('link', { name: 'Admin' }).click();
  const section = page.getByTestId('audit-log');
  await section.getByLabel('Operation').selectOption('template_download');
  await section.getByLabel('Actor').fill('bob');
  await section.getByRole('button', { name: 'Show' }).click();
  const row = section.locator('tr[data-action="template_download"]').first();
  await expect(row).toContainText('bob');
  await expect(row).toHaveAttribute('data-outcome', 'denied');
  await checkAccessibility(page, 'admin-audit-log-signed-in');
  await signOut(page);
});

test('with the IdP refusing the sign-in, the app says why and stays signed out', async ({ page }) => {
  await page.goto(lookout.url);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.origin === new URL(idp.url).origin);
  await page.getByRole('link', { name: 'Cancel sign-in' }).click();
  await page.waitForURL((url) => url.origin === lookout.url);
  await expect(page.getByTestId('sign-in-problem')).toContainText('cancelled');
  await checkAccessibility(page, 'sign-in-cancelled');
  await expect(page.getByTestId('user-menu')).toHaveCount(0);
});
