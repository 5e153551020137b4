/**
 * Lookout's identity provider over real HTTP on 127.0.0.1: discovery and JWKS, PKCE S256 only, the bearer-only
 * backend client, client credentials, the browser flow through the password, the temporary password change and
 * the biometric steps (which deny when no verifier is wired; biometric.test.ts has the real ones), and what a restart and a key rotation keep.
 */
import http from 'node:http';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../server/idp/cli.js';
import { KeyStore } from '../../server/idp/keys.js';
import {
  APPROVE_EVERY_FACE as approveEveryFace,
  pkce,
  APP_REDIRECT as REDIRECT,
  SERVICE_SECRET,
  startTestIdp,
  type TestIdp,
  type TestIdpOptions,
  tokenRequest,
} from '../helpers/idp.js';
import { Browser } from './browser.js';

const APP = 'lookout-app';

let idp: TestIdp;
const logLines: string[] = [];
const port = () => Number(new URL(idp.url).port);

/** Restarts the IdP on the same port and data, with the default (denying) face step unless `options` says. */
async function restart(options: TestIdpOptions = {}): Promise<void> {
  await idp.restart({}, options);
}

function authorizeUrl(params: Record<string, string>): string {
  const url = new URL(`${idp.issuer}/protocol/openid-connect/auth`);
  const all = { client_id: APP, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid profile roles', state: 's1', ...params };
  for (const [k, v] of Object.entries(all)) url.searchParams.set(k, v);
  return url.href;
}

/** Starts an authorization request and follows it to the first page on the IdP (or the redirect back to the app). */
async function begin(browser: Browser, params: Record<string, string>) {
  return browser.follow(authorizeUrl(params), new URL(idp.url).origin);
}

/** Where the IdP sent the browser back to the app, with the query as an object. */
function backAtApp(res: Response): Record<string, string> {
  expect(res.status).toBeGreaterThanOrEqual(300);
  expect(res.status).toBeLessThan(400);
  const location = new URL(res.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  return Object.fromEntries(location.searchParams);
}

/** POSTs one step's form and follows the IdP's redirects: to the next page, or back to the app. */
async function submit(browser: Browser, pageUrl: string, step: string, fields: Record<string, string>) {
  const res = await browser.postForm(`${pageUrl}/${step}`, fields);
  if (res.status !== 303) return { res, url: pageUrl };
  return browser.follow(pageUrl, new URL(idp.url).origin, res);
}

const token = (body: Record<string, string>, auth?: string) => tokenRequest(idp.issuer, body, auth);

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function verifyAccessToken(jwt: string) {
  const jwks = createRemoteJWKSet(new URL(`${idp.issuer}/protocol/openid-connect/certs`));
  return (await jwtVerify(jwt, jwks, { issuer: idp.issuer, audience: 'lookout-backend' })).payload as Record<string, any>;
}

async function serviceToken(): Promise<string> {
  const { status, body } = await token({ grant_type: 'client_credentials' }, basic('lookout-service', SERVICE_SECRET));
  expect(status, JSON.stringify(body)).toBe(200);
  return body.access_token;
}

beforeAll(async () => {
  idp = await startTestIdp({ env: { IDP_ADMIN_USERNAME: 'root-admin', IDP_ADMIN_PASSWORD: 'bootstrap-password-1' }, logLines });
});

afterAll(async () => {
  await idp?.close();
});

describe('discovery, keys and health', () => {
  it("publishes the discovery document at Keycloak's paths, with S256 as the only PKCE method", async () => {
    expect(idp.issuer).toBe(`http://127.0.0.1:${port()}/realms/lookout`);
    const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, any>;
    expect(doc.issuer).toBe(idp.issuer);
    expect(doc.authorization_endpoint).toBe(`${idp.issuer}/protocol/openid-connect/auth`);
    expect(doc.token_endpoint).toBe(`${idp.issuer}/protocol/openid-connect/token`);
    expect(doc.jwks_uri).toBe(`${idp.issuer}/protocol/openid-connect/certs`);
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'client_credentials', 'refresh_token']));
    expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'roles']));
  });

  it('publishes the public signing key only', async () => {
    const jwks = (await (await fetch(`${idp.issuer}/protocol/openid-connect/certs`)).json()) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(jwks.keys[0].kid).toBeTruthy();
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(secret);
  });

  it('answers only for its own host names and IP addresses (DNS rebinding)', async () => {
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.get(
          { host: '127.0.0.1', port: port(), path: '/realms/lookout/.well-known/openid-configuration', headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
      });
    expect(await statusFor(`localhost:${port()}`)).toBe(200);
    expect(await statusFor(`127.0.0.1:${port()}`)).toBe(200);
    expect(await statusFor(`rebound.attacker.example:${port()}`)).toBe(421);
  });

  it('answers /health and /ready for the process', async () => {
    for (const probe of ['/health', '/ready']) {
      const res = await fetch(`${idp.url}${probe}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toMatch(/^(ok|ready)$/);
    }
  });
});

describe('clients', () => {
  it('refuses an authorization request without a code challenge', async () => {
    const { res } = await begin(new Browser(), {});
    const back = backAtApp(res);
    expect(back.error).toBe('invalid_request');
    expect(back.error_description).toMatch(/requires PKCE/);
  });

  it('refuses the plain PKCE method', async () => {
    const { res } = await begin(new Browser(), { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
    const back = backAtApp(res);
    expect(back.error).toBe('invalid_request');
    expect(back.error_description).toMatch(/code_challenge_method/);
  });

  it('gives the service client a token for the backend with role biometric-admin', async () => {
    const claims = await verifyAccessToken(await serviceToken());
    expect(claims.aud).toBe('lookout-backend');
    expect(claims.azp).toBe('lookout-service');
    expect(claims.preferred_username).toBe('service-account-lookout-service');
    expect(claims.realm_access.roles).toContain('biometric-admin');
    // #35: the face step verifies anyone; the token says its grant as Keycloak's service-account tokens do.
    expect(claims.realm_access.roles).toContain('biometric-verifier');
    expect(claims).toMatchObject({ client_id: 'lookout-service', clientId: 'lookout-service' });
  });

  it('refuses the service client with a wrong secret', async () => {
    const { status, body } = await token({ grant_type: 'client_credentials' }, basic('lookout-service', 'wrong-secret-0123456789'));
    expect(status).toBe(401);
    expect(body.error).toBe('invalid_client');
  });

  it('does not let the bearer-only backend client sign in or get tokens', async () => {
    const { challenge } = pkce();
    const res = await fetch(authorizeUrl({ client_id: 'lookout-backend', code_challenge: challenge, code_challenge_method: 'S256' }), {
      redirect: 'manual',
    });
    // No redirect URI is registered for it, so the refusal is shown here, not sent anywhere.
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('invalid_redirect_uri');
    const bare = new URL(authorizeUrl({ client_id: 'lookout-backend', code_challenge: challenge, code_challenge_method: 'S256' }));
    bare.searchParams.delete('redirect_uri');
    const without = await fetch(bare, { redirect: 'manual' });
    expect(without.status).toBe(400);
    expect(await without.text()).toContain('requested response_type is not allowed for this client');
    const creds = await token({ grant_type: 'client_credentials', client_id: 'lookout-backend' });
    expect(creds.status).toBe(400);
    expect(creds.body).toEqual({ error: 'invalid_request', error_description: 'requested grant type is not allowed for this client' });
  });
});

describe('the browser flow', () => {
  const temporary = 'temporary-pass-1';
  const chosen = 'alices-own-password';

  it('creates users from the command line, and the bootstrap administrator at start', async () => {
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) };
    expect(await runCli(['users', 'add', 'Alice', '--temporary-password', temporary], idp.dataDir, io)).toBe(0);
    expect(await runCli(['users', 'add', 'alice', '--temporary-password', temporary], idp.dataDir, io)).toBe(2);
    expect(await runCli(['users', 'add', 'bad name', '--temporary-password', temporary], idp.dataDir, io)).toBe(2);
    expect(await runCli(['users', 'add', 'bob', '--temporary-password', 'short'], idp.dataDir, io)).toBe(2);
    expect(await runCli(['users', 'add', 'carol', '--temporary-password', temporary, '--admin'], idp.dataDir, io)).toBe(0);
    expect(await runCli(['users', 'remove', 'carol'], idp.dataDir, io)).toBe(0);
    expect(await runCli(['users', 'remove', 'carol'], idp.dataDir, io)).toBe(2);
    out.length = 0;
    expect(await runCli(['users', 'list'], idp.dataDir, io)).toBe(0);
    expect(out.join('\n')).toMatch(/^alice\troles=biometric-user\tenrolled=false\trequired=UPDATE_PASSWORD,biometric-enrollment/m);
    expect(out.join('\n')).toMatch(/^root-admin\troles=biometric-user,biometric-admin\tenrolled=false\trequired=biometric-enrollment\t/m);
    expect(out.join('\n')).not.toMatch(/carol/);
    expect(out.join('\n')).not.toContain(temporary);
  });

  it('takes the password, makes the temporary one be changed, then stops at enrollment and denies', async () => {
    const browser = new Browser();
    const { challenge } = pkce();
    const login = await begin(browser, { code_challenge: challenge, code_challenge_method: 'S256' });
    expect(login.res.status).toBe(200);
    expect(login.url).toMatch(new RegExp(`^${idp.issuer}/interaction/[\\w-]+$`));
    expect(await login.res.text()).toContain('name="password"');

    const wrong = await submit(browser, login.url, 'password', { username: 'alice', password: 'not-her-password' });
    expect(wrong.res.status).toBe(401);
    expect(await wrong.res.text()).toContain('Unknown username or wrong password');

    const change = await submit(browser, login.url, 'password', { username: 'ALICE', password: temporary });
    expect(change.res.status).toBe(200);
    expect(await change.res.text()).toContain('name="password-new"');

    const differ = await submit(browser, login.url, 'update-password', { 'password-new': chosen, 'password-confirm': `${chosen}x` });
    expect(differ.res.status).toBe(400);
    const same = await submit(browser, login.url, 'update-password', { 'password-new': temporary, 'password-confirm': temporary });
    expect(same.res.status).toBe(400);
    expect(await same.res.text()).toContain('other than the temporary one');
    // A later step cannot be posted before its turn.
    expect((await browser.postForm(`${login.url}/face`, {})).status).toBe(409);

    const enrol = await submit(browser, login.url, 'update-password', { 'password-new': chosen, 'password-confirm': chosen });
    expect(enrol.res.status).toBe(200);
    expect(await enrol.res.text()).toContain('Enrol your face');

    const denied = await submit(browser, login.url, 'biometric-enrollment', {});
    const back = backAtApp(denied.res);
    expect(back).toMatchObject({ error: 'access_denied', state: 's1' });
    expect(back.error_description).toMatch(/enrollment is not available/);
    expect(back.code).toBeUndefined();

    // The temporary password is gone, the chosen one works.
    expect(await idp.users.authenticate('alice', temporary)).toBeUndefined();
    expect((await idp.users.authenticate('alice', chosen))?.requiredActions).toEqual(['biometric-enrollment']);
  });

  it('sends a cancelled sign-in back to the app as access_denied', async () => {
    const browser = new Browser();
    const { challenge } = pkce();
    const login = await begin(browser, { code_challenge: challenge, code_challenge_method: 'S256' });
    const back = backAtApp((await browser.follow(`${login.url}/abort`, new URL(idp.url).origin)).res);
    expect(back).toMatchObject({ error: 'access_denied', error_description: 'The sign-in was cancelled.', state: 's1' });
  });

  it('locks a username after 10 wrong passwords, even for the right one', async () => {
    const browser = new Browser();
    const { challenge } = pkce();
    const login = await begin(browser, { code_challenge: challenge, code_challenge_method: 'S256' });
    for (let i = 0; i < 10; i++)
      expect((await browser.postForm(`${login.url}/password`, { username: 'root-admin', password: `guess-${i}` })).status).toBe(401);
    const locked = await browser.postForm(`${login.url}/password`, { username: 'Root-Admin', password: 'bootstrap-password-1' });
    expect(locked.status).toBe(429);
    expect(await locked.text()).toContain('Too many failed sign-ins for this user. Try again in 15 minutes.');
    expect(logLines.join('')).toMatch(/event=password username=root-admin result=locked/);
  });

  it('requires the face for an enrolled user and denies it when no face verifier is wired (fails closed)', async () => {
    const alice = (await idp.users.byUsername('alice'))!;
    await idp.users.markEnrolled(alice.id);
    const browser = new Browser();
    const { challenge } = pkce();
    const login = await begin(browser, { code_challenge: challenge, code_challenge_method: 'S256' });
    const face = await submit(browser, login.url, 'password', { username: 'alice', password: chosen });
    expect(face.res.status).toBe(200);
    expect(await face.res.text()).toContain('Face verification');
    const back = backAtApp((await submit(browser, login.url, 'face', {})).res);
    expect(back.error).toBe('access_denied');
    expect(back.error_description).toMatch(/Face verification is not available/);
    expect(back.code).toBeUndefined();
    expect(logLines.join('')).toMatch(/security event .*event=face username=alice result=denied reason=face_verification_unavailable/);
    for (const secret of [chosen, temporary]) expect(logLines.join('')).not.toContain(secret);
  });
});

describe('tokens, sessions and restarts', () => {
  const chosen = 'alices-own-password';
  const browser = new Browser();
  let accessToken: string;

  it('issues Keycloak-shaped tokens for code + PKCE S256 once the face step grants', async () => {
    await restart({ faceVerifier: approveEveryFace });
    const { verifier, challenge } = pkce();
    const login = await begin(browser, { code_challenge: challenge, code_challenge_method: 'S256', nonce: 'n1' });
    await submit(browser, login.url, 'password', { username: 'alice', password: chosen });
    const back = backAtApp((await submit(browser, login.url, 'face', {})).res);
    expect(back.state).toBe('s1');
    expect(back.code).toBeTruthy();

    const missing = await token({ grant_type: 'authorization_code', code: back.code, redirect_uri: REDIRECT, client_id: APP });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_grant');

    // That attempt consumed the code; a new one (the session cookie spares the sign-in) must pass the verifier.
    const again = pkce();
    const { res } = await begin(browser, { code_challenge: again.challenge, code_challenge_method: 'S256' });
    const code = backAtApp(res).code;
    const wrong = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: APP, code_verifier: verifier });
    expect(wrong.body.error).toBe('invalid_grant');

    const third = pkce();
    const ok = backAtApp((await begin(browser, { code_challenge: third.challenge, code_challenge_method: 'S256' })).res);
    const tokens = await token({
      grant_type: 'authorization_code',
      code: ok.code,
      redirect_uri: REDIRECT,
      client_id: APP,
      code_verifier: third.verifier,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(tokens.body.refresh_token).toBeTruthy();
    accessToken = tokens.body.access_token;
    const claims = await verifyAccessToken(accessToken);
    expect(claims).toMatchObject({
      aud: 'lookout-backend',
      azp: APP,
      preferred_username: 'alice',
      realm_access: { roles: ['biometric-user'] },
      groups: ['biometric-enrolled'],
    });
    // #35: as Keycloak's, a user's token names no `client_id`: only client-credentials tokens do.
    expect(claims).not.toHaveProperty('client_id');
    expect(claims).not.toHaveProperty('clientId');
    const idToken = await jwtVerify(tokens.body.id_token, createRemoteJWKSet(new URL(`${idp.issuer}/protocol/openid-connect/certs`)), {
      issuer: idp.issuer,
      audience: APP,
    });
    expect(idToken.payload).toMatchObject({ preferred_username: 'alice', biometric_enrolled: true, amr: ['pwd', 'face'] });

    // The access token is for the API only: the userinfo endpoint refuses it (read the user from the ID token).
    const userinfo = await fetch(`${idp.issuer}/protocol/openid-connect/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(userinfo.status).toBe(401);

    // The web app refreshes without the user: a new access token, the refresh token rotated (a public client).
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: APP });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(await verifyAccessToken(refreshed.body.access_token)).toMatchObject({ preferred_username: 'alice', aud: 'lookout-backend' });
  });

  it('shows a sign-in page only to the browser that started it', async () => {
    const { challenge } = pkce();
    const login = await begin(new Browser(), { code_challenge: challenge, code_challenge_method: 'S256' });
    const other = new Browser();
    const res = await other.get(login.url);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('started in another browser');
    const post = await other.postForm(`${login.url}/password`, { username: 'alice', password: chosen });
    expect(post.status).toBe(400);
  });

  it('keeps users, keys, sessions and grants across a restart', async () => {
    const jwksBefore = await (await fetch(`${idp.issuer}/protocol/openid-connect/certs`)).json();
    await restart(); // the default, denying face step: only the session can let alice in now
    expect(await (await fetch(`${idp.issuer}/protocol/openid-connect/certs`)).json()).toEqual(jwksBefore);
    expect(await verifyAccessToken(accessToken)).toMatchObject({ preferred_username: 'alice' });
    expect(await idp.users.authenticate('alice', chosen)).toBeDefined();

    const { verifier, challenge } = pkce();
    const { res } = await begin(browser, { code_challenge: challenge, code_challenge_method: 'S256' });
    const back = backAtApp(res);
    expect(back.code).toBeTruthy();
    const tokens = await token({
      grant_type: 'authorization_code',
      code: back.code,
      redirect_uri: REDIRECT,
      client_id: APP,
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    expect(await verifyAccessToken(tokens.body.access_token)).toMatchObject({ preferred_username: 'alice' });

    // A browser without the session still has to pass the (denying) face step.
    const stranger = new Browser();
    const login = await begin(stranger, { code_challenge: challenge, code_challenge_method: 'S256' });
    await submit(stranger, login.url, 'password', { username: 'alice', password: chosen });
    expect(backAtApp((await submit(stranger, login.url, 'face', {})).res).error).toBe('access_denied');
  });

  it('publishes a rotated key, signs with it, and keeps the old one for verification', async () => {
    const before = await serviceToken();
    const oldKid = decodeProtectedHeader(before).kid;
    const out: string[] = [];
    expect(await runCli(['keys', 'rotate'], idp.dataDir, { out: (l) => out.push(l), err: (l) => out.push(l) })).toBe(0);
    const newKid = out[0].match(/New signing key ([\w-]+)/)![1];
    await restart();
    const jwks = (await (await fetch(`${idp.issuer}/protocol/openid-connect/certs`)).json()) as JSONWebKeySet;
    expect(jwks.keys.map((k) => k.kid)).toEqual([newKid, oldKid]);
    const after = await serviceToken();
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    const local = createLocalJWKSet(jwks);
    for (const jwt of [before, after, accessToken]) await jwtVerify(jwt, local, { issuer: idp.issuer, audience: 'lookout-backend' });

    // A second rotation (keep 2) drops the first key.
    expect(await new KeyStore(idp.dataDir).rotate(2)).toMatchObject({ dropped: [oldKid] });
  });
});
