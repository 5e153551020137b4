/**
 * #28 findings 7b and 7c: the IdP's face step and enrollment against an API double on 127.0.0.1 (a node:http
 * server speaking the Lookout API's wire format: the bodies of /api/health, /api/deletions, /api/verify and
 * /api/recognize as shared/api describes them), the IdP itself real, its own service token included.
 * - An answer that does not fit the contract (a string "99" as confidence) is a denial, never a grant or a pass.
 * - What the API says when it fails never reaches the browser: `error_description` and the pages speak in the
 *   IdP's own words.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeNow, listenLocal } from '../helpers/double-server.js';
import { addSignedUpUsers, APP_REDIRECT, authorizeUrl, pkce, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { Browser } from './browser.js';
import { capture, PERSON_A } from './faces.js';

/** Text an API could put in its error message, which the browser must never see. */
const LEAK = 'pg: connection to 10.0.0.5:5432 refused (user lookout)';
const box = { x: 10, y: 10, w: 100, h: 100 };

/** What the API double answers now, per path. */
const answers: Record<string, { status: number; body: unknown }> = {};
function answerWell(): void {
  answers['/api/health'] = { status: 200, body: { status: 'ok', app: 'Lookout', version: 'test', uptime_s: 1 } };
  answers['/api/deletions'] = { status: 200, body: { deleted: [] } };
  const frame = { match: true, distance: 0.2, confidence: 99, reason: 'match', faces: 1, face: box };
  answers['/api/verify'] = {
    status: 200,
    body: {
      ...frame,
      label: 'ada',
      threshold: 0.45,
      recognition_model: 'embedding',
      detection_method: 'local',
      frames: [frame],
    },
  };
  answers['/api/recognize'] = {
    status: 200,
    body: {
      faces: [{ ...box, label: 'unknown', confidence: 0, reason: 'below_threshold' }],
      count: 1,
      detection_method: 'local',
      recognition_model: 'embedding',
      trained: true,
    },
  };
}

const api = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const answer = answers[new URL(req.url ?? '/', 'http://x').pathname] ?? {
      status: 404,
      body: { error: { code: 'not_found', message: 'no such endpoint' } },
    };
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
});

let idp: TestIdp;
let frame: string;
const logLines: string[] = [];

beforeAll(async () => {
  const port = await listenLocal(api, 0);
  idp = await startTestIdp({
    env: { IDP_BACKEND_URL: `http://127.0.0.1:${port}`, BIOMETRIC_MAX_ATTEMPTS: '1000' },
    options: { biometrics: true },
    logLines,
  });
  await addSignedUpUsers(idp.users, [['ada', false]]);
  await idp.users.add('eve', 'eves-own-password', { temporary: false }); // to enrol
  frame = await capture(PERSON_A, 1);
}, 60_000);

afterAll(async () => {
  await idp?.close();
  await closeNow(api, new Set());
});

/** A new browser past the password: the browser and the step page's URL. */
async function afterPassword(username: string) {
  const browser = new Browser();
  const origin = new URL(idp.url).origin;
  const login = await browser.follow(authorizeUrl(idp.issuer, APP_REDIRECT, pkce().challenge), origin);
  const res = await browser.postForm(`${login.url}/password`, { username, password: `${username}s-own-password` });
  expect(res.status).toBe(303);
  const page = await browser.follow(login.url, origin, res);
  return { browser, url: login.url, origin, page: await page.res.text() };
}

/** The face step with one frame: the query the app gets back. */
async function faceStep(): Promise<Record<string, string>> {
  const { browser, url, origin } = await afterPassword('ada');
  const done = await browser.follow(url, origin, await browser.postForm(`${url}/face`, { frame }));
  return Object.fromEntries(new URL(done.res.headers.get('location')!).searchParams);
}

describe('answers of the API that do not fit the contract', () => {
  it('denies a verification whose confidence is the string "99"', async () => {
    answerWell();
    const body = answers['/api/verify'].body as Record<string, any>;
    answers['/api/verify'].body = { ...body, confidence: '99', frames: [{ ...body.frames[0], confidence: '99' }] };
    const back = await faceStep();
    expect(back.code).toBeUndefined();
    expect(back.error).toBe('access_denied');
  });

  it('does not pass an enrollment picture on a recognition answer of the wrong shape', async () => {
    answerWell();
    const { browser, url, page } = await afterPassword('eve');
    expect(page).toContain('enrol');
    const check = async () => (await browser.postForm(`${url}/check-capture`, { capture: frame })).json();
    // Well-formed: one face, the picture passes.
    expect(await check()).toEqual({ ok: true });
    for (const faces of [
      [{ ...box, label: 'ada', confidence: '99' }],
      [{ confidence: 99 }],
      [{ ...box, label: 'ada', confidence: 99, x: 'left' }],
    ]) {
      answers['/api/recognize'] = { status: 200, body: { ...(answers['/api/recognize'].body as object), faces } };
      expect(await check(), JSON.stringify(faces)).toMatchObject({ ok: false });
    }
    answers['/api/recognize'] = { status: 200, body: { faces: [{ ...box, label: 'ada', confidence: 99 }] } }; // no count, models, trained
    expect(await check()).toMatchObject({ ok: false });
  });
});

describe("the API's own words stay out of the browser", () => {
  it.each([
    ['/api/health', 503],
    ['/api/verify', 500],
    ['/api/verify', 400],
    ['/api/verify', 403],
  ])('when %s answers %i with its error text', async (path, status) => {
    answerWell();
    answers[path] = { status, body: { error: { code: 'internal_error', message: LEAK } } };
    const back = await faceStep();
    expect(back.error).toBe('access_denied');
    expect(back.error_description).toBeTruthy();
    expect(back.error_description).not.toContain('10.0.0.5');
    expect(back.error_description).not.toContain('pg:');
  });

  it('and out of the enrollment page', async () => {
    answerWell();
    const { browser, url } = await afterPassword('eve');
    for (const status of [500, 422, 401]) {
      answers['/api/recognize'] = { status, body: { error: { code: 'internal_error', message: LEAK } } };
      const verdict = (await (await browser.postForm(`${url}/check-capture`, { capture: frame })).json()) as Record<string, unknown>;
      expect(verdict.ok).toBe(false);
      expect(JSON.stringify(verdict)).not.toContain('10.0.0.5');
    }
  });
});

/** The reason code of the last face step in the security log (`granted` for a grant). */
function lastFaceReason(): string {
  const line = logLines.filter((l) => l.includes('event=face')).at(-1) ?? '';
  return line.includes('result=granted') ? 'granted' : (/reason=([a-z_]+)/.exec(line)?.[1] ?? '');
}

/** Sets the double's verification answer: `top` over a consistent match, `frame` over its one frame. */
function verifyAnswer(top: Record<string, unknown>, frameOver: Record<string, unknown> = {}): void {
  answerWell();
  const body = answers['/api/verify'].body as Record<string, any>;
  answers['/api/verify'].body = { ...body, ...top, frames: [{ ...body.frames[0], ...frameOver }] };
}

describe('#35 item 8: a verification answer that does not hold together is a denial', () => {
  it.each([
    ['a match further than the threshold', { distance: 0.6 }, { distance: 0.6 }],
    ["a frame's match further than the threshold", {}, { distance: 0.6 }],
    ['a negative distance', { distance: -0.1 }, { distance: -0.1 }],
    ['a match without a distance', { distance: null }, { distance: null }],
    ["a frame's match without a distance", {}, { distance: null }],
    ['a top-level reason other than match', { reason: 'below_threshold' }, {}],
    ["a frame's reason other than match", {}, { reason: 'no_face' }],
    ['a threshold that is negative', { threshold: -1, distance: -2 }, { distance: -2 }],
    ['a top-level distance nearer than its frame', { distance: 0.1 }, { distance: 0.3 }],
  ])('%s', async (_what, top, frameOver) => {
    verifyAnswer(top, frameOver);
    const back = await faceStep();
    expect(back.code).toBeUndefined();
    expect(back.error).toBe('access_denied');
    expect(lastFaceReason()).toBe('inconsistent_answer');
  });

  it('a match without any distance (as the API answers callers without the verifier role)', async () => {
    answerWell();
    const { distance: _d, frames, ...rest } = answers['/api/verify'].body as Record<string, any>;
    const { distance: _f, ...frame0 } = frames[0];
    answers['/api/verify'].body = { ...rest, frames: [frame0] };
    const back = await faceStep();
    expect(back.error).toBe('access_denied');
    expect(['inconsistent_answer', 'backend_error']).toContain(lastFaceReason());
  });
});

describe('#35 item 6: the IdP does not trust a verification limit looser than its own bound', () => {
  it.each([
    ['the whole distance range (max = sure_max = verify_max = 2)', { threshold: 2, distance: 1.2 }, { distance: 1.2 }],
    ['threshold 99', { threshold: 99 }, {}],
    ["a limit just past the embedding recognizer's calibrated bound", { threshold: 0.9, distance: 0.85 }, { distance: 0.85 }],
    ['an LBPH limit past its bound', { threshold: 90, distance: 60, recognition_model: 'lbph' }, { distance: 60 }],
  ])('denies an answer made with %s', async (_what, top, frameOver) => {
    verifyAnswer(top, frameOver);
    const back = await faceStep();
    expect(back.code).toBeUndefined();
    expect(back.error).toBe('access_denied');
    expect(lastFaceReason()).toBe('untrusted_threshold');
    expect(back.error_description).toContain('limit');
  });

  it('honours a stricter bound of the operator (BIOMETRIC_MAX_VERIFY_DISTANCE_EMBEDDING)', async () => {
    await idp.restart({ BIOMETRIC_MAX_VERIFY_DISTANCE_EMBEDDING: '0.4' });
    try {
      verifyAnswer({});
      const back = await faceStep();
      expect(back.error).toBe('access_denied');
      expect(lastFaceReason()).toBe('untrusted_threshold');
    } finally {
      await idp.restart({});
    }
  });

  it('passes a consistent answer within the bound on to the liveness check', async () => {
    verifyAnswer({ threshold: 0.82, distance: 0.5, recognition_model: 'embedding' }, { distance: 0.5 });
    await faceStep();
    expect(lastFaceReason()).toBe('granted');
    verifyAnswer({ threshold: 75, distance: 60, recognition_model: 'lbph' }, { distance: 60 });
    await faceStep();
    expect(lastFaceReason()).toBe('granted');
  });
});
