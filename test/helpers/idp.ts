/**
 * Lookout's identity provider for tests, in the test's own process on 127.0.0.1 with a temporary IDP_DATA_DIR (so a
 * test can hand it a stand-in face step and a clock), and the token requests tests make of it. Used by the vitest
 * suites under test/idp/ and by the Playwright specs (e2e/auth.spec.ts, e2e/idp-signin.spec.ts): it imports only
 * the IdP, never the API server, so a browser test does not load the engines it runs as a process.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type IdpOptions, type RunningIdp, startIdp } from '../../server/idp/app.js';
import type { FaceVerifier } from '../../server/idp/flow.js';
import { loadIdpSettings } from '../../server/idp/settings.js';
import type { UserStore } from '../../server/idp/users.js';
import { createLogger } from '../../server/logger.js';
import { Browser } from '../idp/browser.js';

/** The web app's redirect URI on its default port (tests that never open the app). */
export const APP_REDIRECT = 'http://127.0.0.1:8080/auth/callback';
export const SERVICE_SECRET = 'service-secret-0123456789';
export const SERVICE_BASIC = `Basic ${Buffer.from(`lookout-service:${SERVICE_SECRET}`).toString('base64')}`;

/** Stands in for the face step where it is not what a test is about (biometric.test.ts checks the real one). */
export const APPROVE_EVERY_FACE: FaceVerifier = { verify: async () => ({ granted: true, score: 90 }) };

export type TestIdpOptions = Omit<IdpOptions, 'settings' | 'log'>;

export interface TestIdp {
  /** The IdP now running (a new one after each restart). */
  readonly running: RunningIdp;
  readonly url: string;
  readonly issuer: string;
  readonly users: UserStore;
  readonly dataDir: string;
  /** Stops it and starts it again on the same port and data, with these settings and options over the first ones. */
  restart(env?: Record<string, string>, options?: TestIdpOptions): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/**
 * Starts the IdP: the service client with SERVICE_SECRET, the app's redirect URI APP_REDIRECT, silent logs (or the
 * lines into `logLines`), on `port` (default: any free one; kept across restarts), `env` over those defaults.
 */
export async function startTestIdp(
  setup: { env?: Record<string, string>; options?: TestIdpOptions; port?: number; logLines?: string[] } = {},
): Promise<TestIdp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'lookout-test-idp-'));
  let port = setup.port ?? 0;
  const log = setup.logLines ? createLogger('info', (line) => setup.logLines!.push(line)) : createLogger('silent');
  const start = async (env: Record<string, string>, options: TestIdpOptions) => {
    const settings = loadIdpSettings({
      HOST: '127.0.0.1',
      IDP_PORT: String(port),
      IDP_DATA_DIR: dataDir,
      IDP_SERVICE_CLIENT_SECRET: SERVICE_SECRET,
      IDP_APP_REDIRECT_URIS: APP_REDIRECT,
      LOG_LEVEL: 'silent',
      ...setup.env,
      ...env,
    });
    const started = await startIdp({ settings, log, ...setup.options, ...options });
    port = Number(new URL(started.url).port);
    return started;
  };
  let running: RunningIdp | undefined;
  try {
    running = await start({}, {});
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  let current = running;
  return {
    get running() {
      return current;
    },
    get url() {
      return current.url;
    },
    get issuer() {
      return current.issuer;
    },
    get users() {
      return current.users;
    },
    dataDir,
    async restart(env = {}, options = {}) {
      await current.close();
      current = await start(env, options);
    },
    async close() {
      await current.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Users who changed their temporary password (to `<name>s-own-password`) and enrolled, as after a first sign-in. */
export async function addSignedUpUsers(users: UserStore, people: readonly (readonly [name: string, admin: boolean])[]): Promise<void> {
  for (const [name, admin] of people) {
    const user = await users.add(name, 'temporary-pass-1', { admin });
    await users.setPassword(user.id, `${name}s-own-password`);
    await users.markEnrolled(user.id);
  }
}

/** A PKCE pair (S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The web app's authorization request (code + PKCE S256), with `extra` parameters over the defaults. */
export function authorizeUrl(issuer: string, redirect: string, challenge: string, extra: Record<string, string> = {}): string {
  const url = new URL(`${issuer}/protocol/openid-connect/auth`);
  for (const [k, v] of Object.entries({
    client_id: 'lookout-app',
    response_type: 'code',
    redirect_uri: redirect,
    scope: 'openid profile roles',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  }))
    url.searchParams.set(k, v);
  return url.href;
}

/** A form POST to the token endpoint: the status and the JSON answer. */
export async function tokenRequest(
  issuer: string,
  body: Record<string, string>,
  auth?: string,
): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${issuer}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The token endpoint's answer for a grant that must succeed (else throws with the IdP's error). */
async function granted(issuer: string, body: Record<string, string>, auth?: string): Promise<Record<string, any>> {
  const answer = await tokenRequest(issuer, body, auth);
  if (answer.status !== 200) throw new Error(`token endpoint: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** An access token of `<realm>-service` (client credentials, role biometric-admin). */
export async function serviceToken(issuer: string): Promise<string> {
  return (await granted(issuer, { grant_type: 'client_credentials' }, SERVICE_BASIC)).access_token as string;
}

/**
 * A user's access token through the IdP's pages (password, then a face step that a stand-in verifier approves;
 * no frames are sent) and the code redeemed with PKCE.
 */
export async function userToken(idp: { url: string; issuer: string }, username: string, password: string): Promise<string> {
  const browser = new Browser();
  const { verifier, challenge } = pkce();
  const origin = new URL(idp.url).origin;
  const login = await browser.follow(authorizeUrl(idp.issuer, APP_REDIRECT, challenge), origin);
  await browser.follow(login.url, origin, await browser.postForm(`${login.url}/password`, { username, password }));
  const done = await browser.follow(login.url, origin, await browser.postForm(`${login.url}/face`, {}));
  const location = done.res.headers.get('location') ?? '';
  const code = location ? new URL(location).searchParams.get('code') : null;
  if (!code) throw new Error(`no code for ${username}: ${done.res.status} ${location}`);
  const body = { grant_type: 'authorization_code', code, redirect_uri: APP_REDIRECT, client_id: 'lookout-app', code_verifier: verifier };
  return (await granted(idp.issuer, body)).access_token as string;
}
