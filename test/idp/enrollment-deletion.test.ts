/**
 * #26 deletion: deleting a person on the API (DELETE /api/images/{label}) drops the IdP's link to them. Against a
 * real API and IdP (as biometric.test.ts): after the deletion the admin user list shows the user not enrolled, the
 * next sign-in goes to enrollment, a sign-in already at the face step is denied in words (even when someone else's
 * face has been uploaded under the label since), a re-enrollment afterwards counts, and the API answering
 * `not_enrolled` for a user the IdP thought enrolled drops the link too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENROLLMENT_REMOVED_REASON } from '../../server/idp/enrollment-sync.js';
import { APP_REDIRECT as REDIRECT, authorizeUrl, pkce, serviceToken, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { mintedUserToken } from '../helpers/idp-admin-token.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { Browser } from './browser.js';
import { capture, PERSON_A, PERSON_B } from './faces.js';

let idp: TestIdp;
let api: TestServer;
const logLines: string[] = [];

const origin = () => new URL(idp.url).origin;
const service = async () => ({ authorization: `Bearer ${await serviceToken(idp.issuer)}` });
const framesOf = (person: typeof PERSON_A) => Promise.all([3, 4, 5].map((i) => capture(person, i)));

async function submit(browser: Browser, pageUrl: string, step: string, fields: [string, string][]) {
  const res = await browser.request(`${pageUrl}/${step}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  if (res.status !== 303) return { res, url: pageUrl };
  return browser.follow(pageUrl, origin(), res);
}

function backAtApp(res: Response): Record<string, string> {
  expect(res.status).toBe(303);
  const location = new URL(res.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  return Object.fromEntries(location.searchParams);
}

/** A sign-in up to the page after the password: its URL, the browser and the page's HTML. */
async function afterPassword(username: string, password: string) {
  const browser = new Browser();
  const page = (await browser.follow(authorizeUrl(idp.issuer, REDIRECT, pkce().challenge, { state: 's1' }), origin())).url;
  const next = await submit(browser, page, 'password', [
    ['username', username],
    ['password', password],
  ]);
  return { browser, page, html: await next.res.text() };
}

async function faceStep(browser: Browser, page: string, frames: string[]) {
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

/** Enrolls the captures 0..2 of `person` on the enrollment page; the face page's HTML follows. */
async function enrol(browser: Browser, page: string, person: typeof PERSON_A): Promise<string> {
  const captures = await Promise.all([0, 1, 2].map((i) => capture(person, i)));
  const face = await submit(
    browser,
    page,
    'biometric-enrollment',
    captures.map((c) => ['capture', c]),
  );
  return face.res.text();
}

/** A new user's first sign-in: password change, enrollment of `person`'s face, up to the face page. */
async function signUp(username: string, person: typeof PERSON_A) {
  await idp.users.add(username, 'temporary-pass-1');
  const { browser, page } = await afterPassword(username, 'temporary-pass-1');
  await submit(browser, page, 'update-password', [
    ['password-new', `${username}-own-password`],
    ['password-confirm', `${username}-own-password`],
  ]);
  expect(await enrol(browser, page, person)).toContain('Face verification');
}

async function adminList(): Promise<Record<string, { enrolled: boolean; required_actions: string[]; groups: string[] }>> {
  // User management takes a signed-in administrator's token, never the service client's (#28 finding 2).
  if (!(await idp.users.byUsername('root'))) await idp.users.add('root', 'roots-own-password-1', { admin: true, temporary: false });
  const headers = { authorization: `Bearer ${await mintedUserToken(idp, 'root')}` };
  const res = await fetch(`${origin()}/admin/realms/lookout/users`, { headers });
  expect(res.status).toBe(200);
  const { users } = (await res.json()) as {
    users: { username: string; enrolled: boolean; required_actions: string[]; groups: string[] }[];
  };
  return Object.fromEntries(users.map((u) => [u.username, u]));
}

async function deleteLabel(label: string): Promise<void> {
  const res = await fetch(`${api.url}/api/images/${label}`, { method: 'DELETE', headers: await service() });
  expect(res.status, await res.clone().text()).toBe(200);
}

beforeAll(async () => {
  idp = await startTestIdp({ env: { IDP_BACKEND_URL: 'http://127.0.0.1:9' }, options: { biometrics: true }, logLines });
  api = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'true',
    RECOGNITION_MODEL: 'embedding',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    AUTH_MODE: 'oidc',
    OIDC_ISSUER: idp.issuer,
  });
  // The first recognition loads the models: on a busy machine that is past the default 10 s.
  await idp.restart({ IDP_BACKEND_URL: api.url, BIOMETRIC_BACKEND_TIMEOUT_MS: '60000' });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await idp?.close();
});

describe("deleting a person on the API drops the IdP's link to them", () => {
  it('enrolling stores when it began (biometric_enrolled_at); the face is verified', async () => {
    const before = Date.now();
    await signUp('ada', PERSON_A);
    const ada = (await idp.users.byUsername('ada'))!;
    const at = Date.parse(ada.attributes.biometric_enrolled_at);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    const { browser, page, html } = await afterPassword('ada', 'ada-own-password');
    expect(html).toContain('Face verification');
    expect((await faceStep(browser, page, await framesOf(PERSON_A))).code).toBeTruthy();
    expect((await adminList()).ada).toMatchObject({ enrolled: true, groups: ['biometric-enrolled'], required_actions: [] });
  }, 120_000);

  it('after DELETE /api/images/ada: the admin list shows ada not enrolled, and her next sign-in enrolls again', async () => {
    await deleteLabel('ada');
    expect((await adminList()).ada).toMatchObject({ enrolled: false, groups: [], required_actions: ['biometric-enrollment'] });
    const ada = (await idp.users.byUsername('ada'))!;
    expect(ada.attributes.biometric_enrolled).toBe('false');
    expect(ada.attributes.biometric_enrolled_at).toBeUndefined();
    expect(logLines.join('\n')).toMatch(/event=enrollment_removed username=ada reason=label_deleted/);

    // The next sign-in goes to enrollment, never to a face step against the old link.
    const { browser, page, html } = await afterPassword('ada', 'ada-own-password');
    expect(html).toContain('Enrol your face');
    expect(html).not.toContain('Face verification');
    // Enrolled again after the deletion: the old deletion does not drop the new enrollment.
    expect(await enrol(browser, page, PERSON_A)).toContain('Face verification');
    expect((await faceStep(browser, page, await framesOf(PERSON_A))).code).toBeTruthy();
    expect((await adminList()).ada).toMatchObject({ enrolled: true, required_actions: [] });
    const again = await afterPassword('ada', 'ada-own-password');
    expect(again.html).toContain('Face verification');
  }, 180_000);

  it('denies a sign-in already at the face step, in words, even with another face uploaded under the label since', async () => {
    await signUp('bob', PERSON_B);
    const { browser, page, html } = await afterPassword('bob', 'bob-own-password');
    expect(html).toContain('Face verification');
    // Meanwhile: bob is deleted, and A's pictures are uploaded under "bob" and trained.
    await deleteLabel('bob');
    const headers = await service();
    for (const i of [0, 1, 2]) {
      const form = new FormData();
      form.set('label', 'bob');
      form.set('file', new Blob([new Uint8Array(Buffer.from(await capture(PERSON_A, i), 'base64'))], { type: 'image/jpeg' }), 'a.jpg');
      expect((await fetch(`${api.url}/api/images`, { method: 'POST', headers, body: form })).status).toBeLessThan(300);
    }
    expect((await fetch(`${api.url}/api/train`, { method: 'POST', headers })).status).toBe(200);

    const back = await faceStep(browser, page, await framesOf(PERSON_A));
    expect(back).toMatchObject({ error: 'access_denied', error_description: ENROLLMENT_REMOVED_REASON });
    expect(back.code).toBeUndefined();
    expect(logLines.filter((l) => l.includes('event=face')).at(-1)).toMatch(/username=bob result=denied reason=enrollment_removed/);
    // Caught by the deletion, before the API was asked about A's face under "bob".
    expect(logLines.join('\n')).toMatch(/event=enrollment_removed username=bob reason=label_deleted/);
    expect((await idp.users.byUsername('bob'))?.attributes.biometric_enrolled).toBe('false');
    expect((await afterPassword('bob', 'bob-own-password')).html).toContain('Enrol your face');
  }, 180_000);

  it('drops the link when the API answers not_enrolled for a user the IdP thought enrolled', async () => {
    const cy = await idp.users.add('cy', 'temporary-pass-1');
    await idp.users.setPassword(cy.id, 'cy-own-password');
    await idp.users.markEnrolled(cy.id); // no face of cy on the API, and no deletion either
    const { browser, page, html } = await afterPassword('cy', 'cy-own-password');
    expect(html).toContain('Face verification');
    const back = await faceStep(browser, page, await framesOf(PERSON_A));
    expect(back).toMatchObject({ error: 'access_denied', error_description: ENROLLMENT_REMOVED_REASON });
    expect(logLines.join('\n')).toMatch(/event=enrollment_removed username=cy reason=api_not_enrolled/);
    expect((await adminList()).cy).toMatchObject({ enrolled: false, required_actions: ['biometric-enrollment'] });
  }, 60_000);

  it('fails closed when the API cannot be reached: the face step denies, the admin list is the stored one', async () => {
    await api.close();
    const { browser, page, html } = await afterPassword('ada', 'ada-own-password');
    expect(html).toContain('Face verification');
    const back = await faceStep(browser, page, await framesOf(PERSON_A));
    expect(back).toMatchObject({ error: 'access_denied', error_description: 'The face service cannot be reached.' });
    expect(back.code).toBeUndefined();
    expect((await adminList()).ada.enrolled).toBe(true);
    api = undefined as unknown as TestServer;
  }, 60_000);
});
