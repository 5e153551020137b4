/**
 * The IdP's enrollment and face step against a real Lookout API (AUTH_MODE=oidc, taking the IdP's own service
 * token), both on 127.0.0.1: enrollment checks, uploads and trains; the face step grants A's face and denies B's,
 * a failed liveness check, a stopped backend (fails closed) and, past BIOMETRIC_MAX_ATTEMPTS, everyone until the
 * window passes. The "camera frames" are captures made from licensed photos (faces.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_REDIRECT as REDIRECT, authorizeUrl, pkce, serviceToken, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { Browser } from './browser.js';
import { capture, noFace, PERSON_A, PERSON_B } from './faces.js';

let idp: TestIdp;
let api: TestServer;
let clock = Date.now();
const logLines: string[] = [];

/** Restarts the IdP with `env`, its backend the API (once it runs). */
async function restart(env: Record<string, string> = {}): Promise<void> {
  await idp.restart({ IDP_BACKEND_URL: api?.url ?? 'http://127.0.0.1:9', ...env });
}

/** Begins a sign-in as the web app would (code + PKCE S256) and returns the first page's URL. */
async function begin(browser: Browser): Promise<string> {
  const url = authorizeUrl(idp.issuer, REDIRECT, pkce().challenge, { state: 's1' });
  return (await browser.follow(url, new URL(idp.url).origin)).url;
}

/** POSTs a step's form (repeated fields allowed) and follows the IdP's redirects. */
async function submit(browser: Browser, pageUrl: string, step: string, fields: [string, string][]) {
  const res = await browser.request(`${pageUrl}/${step}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  if (res.status !== 303) return { res, url: pageUrl };
  return browser.follow(pageUrl, new URL(idp.url).origin, res);
}

/** Where the IdP sent the browser back to the app, as the query. */
function backAtApp(res: Response): Record<string, string> {
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  return Object.fromEntries(location.searchParams);
}

/** Password, then the face step with `frames`: the app's query at the end (a code, or an error). */
async function signIn(username: string, password: string, frames: string[]): Promise<Record<string, string>> {
  const browser = new Browser();
  const page = await begin(browser);
  const face = await submit(browser, page, 'password', [
    ['username', username],
    ['password', password],
  ]);
  expect(await face.res.text()).toContain('Face verification');
  return backAtApp(
    (
      await submit(
        browser,
        page,
        'face',
        frames.map((f) => ['frame', f]),
      )
    ).res,
  );
}

const lastFaceEvent = () => logLines.filter((l) => l.includes('event=face')).at(-1) ?? '';

beforeAll(async () => {
  // The IdP first (the API needs its issuer), then again with the API as its backend, on the same port.
  idp = await startTestIdp({
    env: { IDP_BACKEND_URL: 'http://127.0.0.1:9', BIOMETRIC_MAX_ATTEMPTS: '3' },
    options: { biometrics: true, now: () => clock },
    logLines,
  });
  api = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'true',
    RECOGNITION_MODEL: 'embedding',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: idp.issuer,
  });
  await restart();
}, 120_000);

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

describe('enrollment (required action biometric-enrollment)', () => {
  /** First sign-in of a new user up to the enrollment page. */
  async function toEnrollment(username: string) {
    await idp.users.add(username, 'temporary-pass-1');
    const browser = new Browser();
    const page = await begin(browser);
    await submit(browser, page, 'password', [
      ['username', username],
      ['password', 'temporary-pass-1'],
    ]);
    const enrol = await submit(browser, page, 'update-password', [
      ['password-new', `${username}-own-password`],
      ['password-confirm', `${username}-own-password`],
    ]);
    return { browser, page, html: await enrol.res.text() };
  }

  async function check(browser: Browser, page: string, picture: string) {
    const res = await browser.request(`${page}/check-capture`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ capture: `data:image/jpeg;base64,${picture}` }).toString(),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { ok: boolean; code?: string; reason?: string };
  }

  it('shows the camera page, checks each picture, refuses too few, then uploads, trains and marks the user enrolled', async () => {
    const { browser, page, html } = await toEnrollment('ada');
    expect(html).toContain('Enrol your face');
    expect(html).toContain('data-width="640" data-height="480" data-min="3" data-max="5"');
    expect(html).toMatch(/<script src="\/realms\/lookout\/assets\/camera\.js"><\/script>/);
    expect(html).not.toMatch(/<script>/); // no inline script: the page runs under the CSP
    const script = await fetch(`${idp.url}/realms/lookout/assets/camera.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script.text()).toContain('getUserMedia');

    expect(await check(browser, page, await noFace())).toMatchObject({ ok: false, code: 'no_face' });
    expect(await check(browser, page, await capture(PERSON_A, 0))).toEqual({ ok: true });

    const two = await submit(browser, page, 'biometric-enrollment', [
      ['capture', await capture(PERSON_A, 0)],
      ['capture', await capture(PERSON_A, 1)],
    ]);
    expect(two.res.status).toBe(422);
    expect(await two.res.text()).toContain('Enrollment takes 3 to 5 pictures; 2 were sent.');

    const bad = await submit(browser, page, 'biometric-enrollment', [
      ['capture', await capture(PERSON_A, 0)],
      ['capture', await noFace()],
      ['capture', await capture(PERSON_A, 2)],
    ]);
    expect(bad.res.status).toBe(422);
    expect(await bad.res.text()).toContain('Picture 2: No face in this picture.');

    const captures = await Promise.all([0, 1, 2].map((i) => capture(PERSON_A, i)));
    const face = await submit(
      browser,
      page,
      'biometric-enrollment',
      captures.map((c) => ['capture', c]),
    );
    expect(face.res.status).toBe(200);
    expect(await face.res.text()).toContain('Face verification');

    const ada = (await idp.users.byUsername('ada'))!;
    expect(ada.attributes.biometric_enrolled).toBe('true');
    expect(ada.groups).toEqual(['biometric-enrolled']);
    expect(ada.requiredActions).toEqual([]);
    // The pictures are on the API under the username, and the model knows it (read with the service token).
    const labels = await fetch(`${api.url}/api/labels`, { headers: { authorization: `Bearer ${await serviceToken(idp.issuer)}` } });
    expect(((await labels.json()) as { details: unknown[] }).details).toMatchObject([{ label: 'ada', images: 3, trained: true }]);
    // #26 audit: kept out of the kiosk gallery (the devices' downloaded models), and the enrollment is in the audit
    // log under the IdP's service client.
    const service = { authorization: `Bearer ${await serviceToken(idp.issuer)}` };
    const models = (await (await fetch(`${api.url}/api/models/trained`, { headers: service })).json()) as { labels: string[] };
    expect(models.labels).not.toContain('ada');
    const audit = (await (await fetch(`${api.url}/api/audit?action=enroll`, { headers: service })).json()) as { entries: unknown[] };
    expect(audit.entries[0]).toMatchObject({ outcome: 'ok', actor: 'lookout-service', actor_kind: 'client', target: 'ada' });
    expect(logLines.join('\n')).toMatch(/event=enrollment username=ada result=enrolled/);
  }, 120_000);

  it('enrols a second person', async () => {
    const { browser, page } = await toEnrollment('bob');
    const captures = await Promise.all([0, 1, 2].map((i) => capture(PERSON_B, i)));
    const face = await submit(
      browser,
      page,
      'biometric-enrollment',
      captures.map((c) => ['capture', c]),
    );
    expect(await face.res.text()).toContain('Face verification');
    expect((await idp.users.byUsername('bob'))?.groups).toEqual(['biometric-enrolled']);
  }, 120_000);
});

describe('the face step', () => {
  const framesOf = (person: typeof PERSON_A) => Promise.all([3, 4, 5].map((i) => capture(person, i)));

  it("grants A's password with A's face: a code, logged with the score", async () => {
    const back = await signIn('ada', 'ada-own-password', await framesOf(PERSON_A));
    expect(back.code, JSON.stringify(back)).toBeTruthy();
    expect(lastFaceEvent()).toMatch(/username=ada result=granted reason=null score=9\d/);
  }, 60_000);

  it("denies A's password with B's face, an enrolled user: verified 1:1 against A's samples only", async () => {
    const back = await signIn('ada', 'ada-own-password', await framesOf(PERSON_B));
    expect(back).toMatchObject({ error: 'access_denied', error_description: 'Your face was not recognised.' });
    expect(back.code).toBeUndefined();
    expect(lastFaceEvent()).toMatch(/username=ada result=denied reason=not_recognised/);
  }, 60_000);

  it('denies a picture without a face, and a burst without frames', async () => {
    expect((await signIn('ada', 'ada-own-password', [await noFace()])).error_description).toMatch(/^No face was found/);
    expect((await signIn('ada', 'ada-own-password', [])).error_description).toMatch(/takes 1 to 5 camera frames; 0 were sent/);
    expect(lastFaceEvent()).toMatch(/reason=invalid_frames/);
  }, 60_000);

  it('denies with the liveness reason when BIOMETRIC_LIVENESS_MIN is 1.0', async () => {
    await restart({ BIOMETRIC_LIVENESS_MIN: '1.0' });
    const back = await signIn('bob', 'bob-own-password', await framesOf(PERSON_B));
    expect(back.error).toBe('access_denied');
    expect(back.error_description).toMatch(/^The camera did not see a live face \(liveness 0\.\d\d < 1\)\.$/);
    expect(lastFaceEvent()).toMatch(/username=bob result=denied reason=liveness_failed score=\d/);
    await restart();
  }, 60_000);

  it('locks the face step after BIOMETRIC_MAX_ATTEMPTS failures, even for the right face, until the window passes', async () => {
    const wrong = await framesOf(PERSON_A);
    for (let i = 0; i < 3; i++) expect((await signIn('bob', 'bob-own-password', wrong)).error).toBe('access_denied');
    const locked = await signIn('bob', 'bob-own-password', await framesOf(PERSON_B));
    expect(locked.error_description).toBe('Too many failed face checks for this user. Try again in 15 minutes.');
    expect(lastFaceEvent()).toMatch(/username=bob result=denied reason=too_many_attempts/);
    clock += 15 * 60_000 + 1;
    expect((await signIn('bob', 'bob-own-password', await framesOf(PERSON_B))).code).toBeTruthy();
  }, 90_000);

  it('fails closed when the backend is stopped', async () => {
    await api.close();
    const back = await signIn('ada', 'ada-own-password', await framesOf(PERSON_A));
    expect(back.error).toBe('access_denied');
    expect(back.error_description).toBe('The face service cannot be reached.');
    expect(back.code).toBeUndefined();
    expect(lastFaceEvent()).toMatch(/username=ada result=denied reason=backend_unavailable/);
    api = undefined as unknown as TestServer;
  }, 60_000);

  it('never logs frames or tokens', () => {
    const all = logLines.join('\n');
    expect(all).not.toMatch(/\/9j\//); // the start of every base64 JPEG
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
    expect(all).not.toContain('own-password');
  });
});
