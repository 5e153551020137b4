/**
 * Passkeys on the IdP's own pages in Chromium, with Chromium's virtual authenticator (CDP `WebAuthn`, CTAP2,
 * internal transport, resident keys, user verification): a new user chooses a passkey instead of the face at
 * first sign-in, registers it and proves it (a code for the app), signs out, and signs in again with password +
 * passkey; then another authenticator holding a key under the same credential id (a clone without the private
 * key) is denied.
 *
 * The issuer is `http://localhost:<port>`: WebAuthn needs a secure context and an rpID that is a domain; Chromium
 * treats http://localhost as potentially trustworthy, while an IP address (127.0.0.1) cannot be an rpID. The IdP
 * still listens on 127.0.0.1 only. No Lookout API is needed (no face is checked here): the app's redirect URI is
 * a bare page on 127.0.0.1 (so the browser's navigation ends there before the next step), and the test reads what
 * the IdP sent back from the request to it.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import { checkAccessibility, expect, type Page, test } from './helpers/fixtures.js';
import { authorizeUrl as webAppAuthorizeUrl, startTestIdp, type TestIdp } from '../test/helpers/idp.js';
import { freePort } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

let idp: TestIdp;
let callback: string;
let app: http.Server;

test.beforeAll(async () => {
  const [idpPort, appPort] = [await freePort(), await freePort()];
  callback = `http://127.0.0.1:${appPort}/auth/callback`;
  // The app's callback: nothing but a page. With nothing listening, Chromium was still turning the navigation into
  // its error page when the next page.goto began, and that goto was interrupted (a CI run).
  app = http.createServer((_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><html lang="en"><title>App</title><main><h1>Back in the app</h1></main></html>'),
  );
  await new Promise<void>((resolve) => app.listen(appPort, '127.0.0.1', resolve));
  idp = await startTestIdp({
    port: idpPort,
    env: { IDP_ISSUER: `http://localhost:${idpPort}/realms/lookout`, IDP_APP_REDIRECT_URIS: callback, IDP_PASSKEYS: 'alternative' },
  });
  await idp.users.add('ada', 'temporary-pass-1');
});

test.afterAll(async () => {
  await idp?.close();
  await new Promise((resolve) => app?.close(resolve));
});

type Cdp = Awaited<ReturnType<ReturnType<Page['context']>['newCDPSession']>>;

/** A virtual platform authenticator in this page's browser: CTAP2, internal, resident keys, the user verified. */
async function authenticator(page: Page): Promise<{ cdp: Cdp; id: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, id: authenticatorId };
}

const authorizeUrl = () => webAppAuthorizeUrl(idp.issuer, callback, 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');

async function password(page: Page, secret: string): Promise<void> {
  await page.goto(authorizeUrl());
  await page.getByLabel('Username').fill('ada');
  await page.getByLabel('Password').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Presses the passkey button and returns the query the IdP sent the browser back to the app with. */
async function usePasskey(page: Page): Promise<URLSearchParams> {
  await expect(page.getByRole('heading', { name: 'Sign in with your passkey' })).toBeVisible();
  await expect(page.getByRole('status')).toHaveText('Press the button to use your passkey.');
  const sentBack = page.waitForRequest((req) => req.url().startsWith(callback), { timeout: 30_000 });
  await page.getByRole('button', { name: 'Use my passkey' }).click();
  const query = new URL((await sentBack).url()).searchParams;
  await page.waitForURL((url) => url.href.startsWith(callback));
  return query;
}

async function idpSession(page: Page): Promise<boolean> {
  const cookies = await page.context().cookies(`${idp.issuer}/`);
  return cookies.some((c) => c.name === '_session');
}

let credentialId = '';

test('a new user registers a passkey instead of a face, signs in with it, signs out, and signs in again', async ({ page }) => {
  const { cdp, id } = await authenticator(page);
  await password(page, 'temporary-pass-1');
  await page.getByLabel('New password').fill('adas-own-password');
  await page.getByLabel('Repeat it').fill('adas-own-password');
  await page.getByRole('button', { name: 'Change password' }).click();

  await expect(page.getByRole('heading', { name: 'Enrol your face' })).toBeVisible();
  await page.getByRole('button', { name: 'Register a passkey instead' }).click();
  await expect(page.getByRole('heading', { name: 'Register a passkey' })).toBeVisible();
  await expect(page.getByRole('status')).toHaveText('Press the button to create your passkey.');
  await checkAccessibility(page, 'idp-passkey-enrollment');
  await page.getByRole('button', { name: 'Create a passkey' }).click();

  // The registration does not count as the sign-in: the passkey is asked for once more (checked once that page is
  // there, not while the registration's navigation is still going on).
  await expect(page.getByRole('heading', { name: 'Sign in with your passkey' })).toBeVisible({ timeout: 30_000 });
  await checkAccessibility(page, 'idp-passkey');
  const first = await usePasskey(page);
  expect(first.get('error'), first.get('error_description') ?? '').toBeNull();
  expect(first.get('code')).toBeTruthy();
  expect(await idpSession(page)).toBe(true);

  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: id });
  expect(credentials).toHaveLength(1);
  expect(credentials[0].rpId).toBe('localhost');
  credentialId = credentials[0].credentialId;

  // Signing out at the IdP ends its session: the next sign-in asks the password again.
  await page.goto(`${idp.issuer}/protocol/openid-connect/logout`);
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await expect.poll(() => idpSession(page)).toBe(false);

  await password(page, 'adas-own-password');
  const second = await usePasskey(page);
  expect(second.get('error'), second.get('error_description') ?? '').toBeNull();
  expect(second.get('code')).toBeTruthy();
  const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId: id });
  expect(after.credentials[0].signCount).toBeGreaterThan(credentials[0].signCount);
});

test('another authenticator with a key under the same credential id (a clone without the private key) is denied', async ({ page }) => {
  expect(credentialId).not.toBe('');
  const { cdp, id } = await authenticator(page);
  const privateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' });
  await cdp.send('WebAuthn.addCredential', {
    authenticatorId: id,
    credential: {
      credentialId,
      isResidentCredential: true,
      rpId: 'localhost',
      privateKey: privateKey.toString('base64'),
      userHandle: Buffer.from('someone').toString('base64'),
      signCount: 1000,
    },
  });
  await password(page, 'adas-own-password');
  const back = await usePasskey(page);
  expect(back.get('code')).toBeNull();
  expect(back.get('error')).toBe('access_denied');
  expect(back.get('error_description')).toBe('The passkey could not be verified.');
  expect(await idpSession(page)).toBe(false);
});
