/**
 * The interaction pages of the browser flow, under `<issuer path>/interaction/<uid>`: oidc-provider sends the
 * browser here when it needs a login or a consent, bound to it by its interaction cookie (checked by
 * `interactionDetails` on every request, so a page cannot be driven from another browser or site).
 *
 * Login runs the state machine of flow.ts, one form per step (POST, then a redirect back to the step page). Its
 * state lives in the file adapter under `LoginFlow`, so a restart mid-sign-in loses nothing. Consent is granted
 * at once: every client of the realm is first-party, as in the spec's Keycloak realm.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Interaction, Provider } from 'oidc-provider';
import type { Logger } from '../logger.js';
import { AttemptLimiter, unknownNameKey } from './attempts.js';
import type { EnrollmentSync } from './enrollment-sync.js';
import type { FileAdapter } from './file-adapter.js';
import {
  type EnrollmentHandler,
  FACE_ONLY,
  type FaceDecision,
  type FaceVerifier,
  faceAllowed,
  passkeyOwed,
  FlowError,
  type FlowState,
  INITIAL,
  type Outcome,
  type SecondFactor,
  type Step,
  transition,
} from './flow.js';
import {
  enrollmentPage,
  facePage,
  messagePage,
  PAGE_CSP,
  passkeyEnrollmentPage,
  passkeyPage,
  passwordPage,
  updatePasswordPage,
} from './pages.js';
import {
  authenticationOptions,
  finishAuthentication,
  finishRegistration,
  type PasskeyPolicy,
  type PasskeyStore,
  registrationOptions,
  type RelyingParty,
} from './passkeys.js';
import { verifyPassword } from './passwords.js';
import { normaliseUsername, type User, UserError, type UserStore } from './users.js';

const MAX_FORM_BYTES = 16 * 1024;
/** The camera steps carry pictures: up to 20 captures of a few hundred KB each, as base64. */
const MAX_PICTURE_FORM_BYTES = 24 * 1024 * 1024;
/** Frames the face page sends in one burst. */
const FACE_FRAMES = 3;

export interface InteractionDeps {
  provider: Provider;
  users: UserStore;
  flows: FileAdapter;
  realm: string;
  /** The issuer's path (`/realms/<realm>`), under which the pages live. */
  mountPath: string;
  faceVerifier: FaceVerifier;
  /** With `checkCapture`, the enrollment page checks each picture as it is taken. */
  enrollment: EnrollmentHandler & { checkCapture?(capture: string): Promise<{ ok: boolean; code?: string; reason?: string }> };
  log: Logger;
  /** What the camera pages ask for. */
  camera?: { width: number; height: number; maxEnrollmentImages: number };
  /** Failed passwords per username (default: 10 in 15 minutes). */
  passwordFailures?: AttemptLimiter;
  /** Failed face steps per username (default: 5 in 15 minutes, BIOMETRIC_MAX_ATTEMPTS). */
  faceFailures?: AttemptLimiter;
  /** #26 deletion: after the password, a user whose face data the API deleted since they enrolled goes to enrollment. */
  enrollmentSync?: Pick<EnrollmentSync, 'checkUser'>;
  /** Passkeys (passkeys.ts): the realm's policy, the relying party (the issuer) and the users' credentials. */
  passkeys?: { policy: PasskeyPolicy; rp: RelyingParty; store: PasskeyStore };
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, html: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.end(html);
}

function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 303;
  res.setHeader('Location', location);
  res.setHeader('Cache-Control', 'no-store');
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(JSON.stringify(body));
}

/** Denials that say nothing about the face shown (the backend or the IdP failed): they do not count as attempts. */
const notTheUsersFault = (code: string) =>
  code.startsWith('backend_') ||
  ['liveness_unavailable', 'verification_error', 'enrollment_removed', 'inconsistent_answer', 'untrusted_threshold'].includes(code);

async function readForm(req: IncomingMessage, maxBytes = MAX_FORM_BYTES): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new HttpProblem(415, 'Unsupported form', 'The form must be sent as application/x-www-form-urlencoded.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpProblem(413, 'Form too large', `The form is larger than ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const STEP_ACTIONS: Record<string, Step> = {
  password: 'password',
  'update-password': 'update-password',
  'biometric-enrollment': 'biometric-enrollment',
  face: 'face',
  'passkey-enrollment': 'passkey-enrollment',
  passkey: 'passkey',
};

/** The forms that switch the second factor, and the step each is offered at. */
const CHOICES: Record<string, { at: Step; event: 'chose-passkey' | 'chose-face' }> = {
  'choose-passkey': { at: 'biometric-enrollment', event: 'chose-passkey' },
  'choose-face': { at: 'passkey', event: 'chose-face' },
};

export function interactionHandler(deps: InteractionDeps) {
  const { provider, users, flows, log, realm } = deps;
  // Guessing passwords: 10 failures per username in 15 minutes lock that username until the oldest expires.
  const passwordFailures = deps.passwordFailures ?? new AttemptLimiter(10, 15 * 60_000);
  const faceFailures = deps.faceFailures ?? new AttemptLimiter(5, 15 * 60_000);
  const unknownNameSecret = randomBytes(32);
  const camera = deps.camera ?? { width: 640, height: 480, maxEnrollmentImages: 5 };
  const base = (uid: string) => `${deps.mountPath}/interaction/${uid}`;

  const loadState = async (uid: string): Promise<FlowState> => ((await flows.find(uid)) as FlowState | undefined) ?? INITIAL;
  const saveState = async (details: Interaction, state: FlowState) =>
    flows.upsert(details.uid, { ...state }, Math.max(1, details.exp - Math.floor(Date.now() / 1000)));

  // One request at a time per sign-in: a passkey challenge is taken out of the state before it is checked, and a
  // page shown meanwhile must not put it (or an older step) back.
  const queues = new Map<string, Promise<unknown>>();
  function serial<T>(uid: string, work: () => Promise<T>): Promise<T> {
    const run = (queues.get(uid) ?? Promise.resolve()).catch(() => {}).then(work);
    const tail = run.catch(() => {});
    queues.set(uid, tail);
    void tail.then(() => {
      if (queues.get(uid) === tail) queues.delete(uid);
    });
    return run;
  }

  /** The user's passkeys; a store that cannot be read stops the sign-in (never a silent fall back to fewer factors). */
  async function passkeysOf(store: PasskeyStore, user: User) {
    try {
      return await store.forUser(user.id);
    } catch (err) {
      log.error('passkeys unreadable', { error: err instanceof Error ? err.message : String(err) });
      throw new HttpProblem(503, 'Passkeys unavailable', 'The passkeys cannot be read, so the sign-in cannot continue. Try again later.');
    }
  }

  async function factorsOf(user: User): Promise<SecondFactor> {
    const pk = deps.passkeys;
    if (!pk || pk.policy === 'off') return FACE_ONLY;
    const mine = await passkeysOf(pk.store, user);
    return { policy: pk.policy, passkeys: mine.credentials.length, userRequired: mine.required };
  }

  async function finish(req: IncomingMessage, res: ServerResponse, details: Interaction, outcome: Exclude<Outcome, { kind: 'continue' }>) {
    await flows.destroy(details.uid);
    if (outcome.kind === 'grant') {
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: outcome.userId, amr: outcome.amr } },
        { mergeWithLastSubmission: false },
      );
    } else {
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: outcome.reason },
        { mergeWithLastSubmission: false },
      );
    }
  }

  /** First-party clients: grant what the client asked for, as Keycloak does for a client without consent screen. */
  async function consent(req: IncomingMessage, res: ServerResponse, details: Interaction) {
    const accountId = details.session?.accountId;
    const clientId = details.params.client_id;
    if (!accountId || !clientId) throw new HttpProblem(400, 'Sign-in expired', 'This sign-in has no session. Start again from the app.');
    const grant = (details.grantId && (await provider.Grant.find(details.grantId))) || new provider.Grant({ accountId, clientId });
    const missing = details.prompt.details;
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  async function show(res: ServerResponse, details: Interaction, state: FlowState, error?: string, status = 200) {
    const user = state.userId ? await users.byId(state.userId) : undefined;
    if (state.step !== 'password' && !user) throw new HttpProblem(400, 'Sign-in expired', 'This user no longer exists.');
    const common = { realm, base: base(details.uid) };
    const cameraPage = { ...common, mountPath: deps.mountPath, width: camera.width, height: camera.height, error };
    switch (state.step) {
      case 'password':
        return send(res, status, passwordPage({ ...common, username: details.params.login_hint, error }));
      case 'update-password':
        return send(res, status, updatePasswordPage({ ...common, username: user!.username, error }));
      case 'biometric-enrollment': {
        const passkeyInstead = (await factorsOf(user!)).policy === 'alternative';
        return send(
          res,
          status,
          enrollmentPage({ ...cameraPage, username: user!.username, min: 3, max: camera.maxEnrollmentImages, passkeyInstead }),
        );
      }
      case 'face': {
        const factors = await factorsOf(user!);
        // A required passkey follows the face without asking; else adding one is offered.
        const passkeyNext = passkeyOwed(factors);
        const offerPasskey = factors.policy !== 'off' && !passkeyNext;
        return send(res, status, facePage({ ...cameraPage, username: user!.username, frames: FACE_FRAMES, offerPasskey, passkeyNext }));
      }
      case 'passkey-enrollment':
      case 'passkey': {
        const pk = deps.passkeys;
        if (!pk) throw new HttpProblem(409, 'Out of order', 'Passkeys are not offered here.');
        const factors = await factorsOf(user!);
        const mine = await passkeysOf(pk.store, user!);
        // A new challenge for each page shown: the one before it can no longer be answered.
        const options =
          state.step === 'passkey'
            ? await authenticationOptions(pk.rp, mine.credentials)
            : await registrationOptions(pk.rp, user!, mine.credentials);
        await saveState(details, { ...state, challenge: options.challenge });
        const o = { realm, base: base(details.uid), mountPath: deps.mountPath, username: user!.username, options, error };
        return send(
          res,
          status,
          state.step === 'passkey' ? passkeyPage({ ...o, faceInstead: faceAllowed(user!, factors) }) : passkeyEnrollmentPage(o),
        );
      }
    }
  }

  /** Applies the outcome of one step: the next page (by redirect), or the end of the interaction. */
  async function advance(req: IncomingMessage, res: ServerResponse, details: Interaction, outcome: Outcome) {
    if (outcome.kind === 'continue') {
      await saveState(details, outcome.state);
      return redirect(res, base(details.uid));
    }
    return finish(req, res, details, outcome);
  }

  async function post(req: IncomingMessage, res: ServerResponse, details: Interaction, step: Step) {
    const state = await loadState(details.uid);
    if (state.step !== step)
      throw new HttpProblem(409, 'Out of order', 'This sign-in is at another step. Go back to the sign-in page and continue there.');
    const form = await readForm(req, step === 'biometric-enrollment' || step === 'face' ? MAX_PICTURE_FORM_BYTES : MAX_FORM_BYTES);
    const user = state.userId ? await users.byId(state.userId) : undefined;
    if (step !== 'password' && !user) {
      return finish(req, res, details, { kind: 'deny', code: 'user_not_found', reason: 'The user no longer exists.' });
    }
    switch (step) {
      case 'password': {
        const name = form.get('username') ?? '';
        // Users that exist by their name; an unknown name (often a password in the wrong field) only as a keyed hash.
        const known = await users.byUsername(name);
        const key = known ? known.username : unknownNameKey(unknownNameSecret, normaliseUsername(name).slice(0, 64));
        // Counted before the check (attempts.ts `begin`), so guesses in flight at once cannot pass the limit.
        const started = passwordFailures.begin(key);
        if ('lockedForMs' in started) {
          log.info('security event', { event: 'password', username: key, result: 'locked' });
          const minutes = Math.ceil(started.lockedForMs / 60_000);
          return show(
            res,
            details,
            state,
            `Too many failed sign-ins for this user. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
            429,
          );
        }
        const found = await users.authenticate(name, form.get('password') ?? '');
        log.info('security event', { event: 'password', username: key, result: found ? 'accepted' : 'rejected' });
        if (!found) {
          await started.attempt.failed();
          return show(res, details, state, 'Unknown username or wrong password.', 401);
        }
        await started.attempt.release();
        // An API that cannot answer leaves the user as stored: the face step checks again and fails closed.
        const current = (await deps.enrollmentSync?.checkUser(found).catch(() => found)) ?? found;
        return advance(req, res, details, transition(state, { type: 'password-accepted', user: current }, await factorsOf(current)));
      }
      case 'update-password': {
        const next = form.get('password-new') ?? '';
        if (next !== (form.get('password-confirm') ?? '')) return show(res, details, state, 'The two passwords differ.', 400);
        if (await verifyPassword(next, user!.passwordHash))
          return show(res, details, state, 'Choose a password other than the temporary one.', 400);
        try {
          const changed = await users.setPassword(user!.id, next);
          log.info('security event', { event: 'password_changed', username: changed.username, result: 'ok' });
          return advance(req, res, details, transition(state, { type: 'password-changed', user: changed }, await factorsOf(changed)));
        } catch (err) {
          if (err instanceof UserError && err.code === 'invalid_password') return show(res, details, state, `${err.message}.`, 400);
          throw err;
        }
      }
      case 'biometric-enrollment': {
        const result = await deps.enrollment.enroll(user!, form.getAll('capture'));
        log.info('security event', {
          event: 'enrollment',
          username: user!.username,
          result: result.ok ? 'enrolled' : 'refused',
          reason: result.ok ? null : result.code,
        });
        if (!result.ok && result.retry) return show(res, details, state, result.reason, 422);
        if (!result.ok)
          return advance(req, res, details, transition(state, { type: 'enrollment-failed', code: result.code, reason: result.reason }));
        const enrolled = await users.byId(user!.id);
        if (!enrolled) return finish(req, res, details, { kind: 'deny', code: 'user_not_found', reason: 'The user no longer exists.' });
        return advance(req, res, details, transition(state, { type: 'enrolled', user: enrolled }));
      }
      case 'face': {
        const key = user!.username;
        const started = faceFailures.begin(key);
        const minutes = Math.ceil(('lockedForMs' in started ? started.lockedForMs : 0) / 60_000);
        const decision: FaceDecision =
          'lockedForMs' in started
            ? {
                granted: false,
                code: 'too_many_attempts',
                reason: `Too many failed face checks for this user. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
              }
            : await deps.faceVerifier.verify(user!, { frames: form.getAll('frame') });
        // Awaited: the failure is on disk before the answer, so a restart right after it keeps it.
        if ('attempt' in started) {
          if (decision.granted || notTheUsersFault(decision.code)) await started.attempt.release();
          else await started.attempt.failed();
        }
        // Who, result, reason and score; never the frames.
        log.info('security event', {
          event: 'face',
          username: key,
          result: decision.granted ? 'granted' : 'denied',
          reason: decision.granted ? null : decision.code,
          score: decision.score ?? null,
        });
        const addPasskey = decision.granted && form.get('add-passkey') === '1';
        return advance(req, res, details, transition(state, { type: 'face', decision, addPasskey }, await factorsOf(user!)));
      }
      case 'passkey-enrollment':
      case 'passkey': {
        const pk = deps.passkeys;
        if (!pk) throw new HttpProblem(409, 'Out of order', 'Passkeys are not offered here.');
        const response = form.get('response') ?? '';
        if (!response) return show(res, details, state, 'Press the button and follow your browser to use a passkey.', 400);
        // Single use: the challenge leaves the state before the answer is checked, whatever the answer.
        const { challenge, ...rest } = state;
        await saveState(details, rest);
        const ceremony = { rp: pk.rp, store: pk.store, user: user!, challenge, response };
        if (step === 'passkey-enrollment') {
          const result = await finishRegistration(ceremony);
          log.info('security event', {
            event: 'passkey_registration',
            username: user!.username,
            result: result.granted ? 'registered' : 'refused',
            reason: result.granted ? null : result.code,
          });
          if (!result.granted)
            return advance(req, res, details, transition(rest, { type: 'enrollment-failed', code: result.code, reason: result.reason }));
          return advance(req, res, details, transition(rest, { type: 'passkey-registered' }));
        }
        const decision = await finishAuthentication(ceremony);
        log.info('security event', {
          event: 'passkey',
          username: user!.username,
          result: decision.granted ? 'granted' : 'denied',
          reason: decision.granted ? null : decision.code,
        });
        return advance(req, res, details, transition(rest, { type: 'passkey', decision }));
      }
    }
  }

  /** A switch of the second factor (IDP_PASSKEYS=alternative), only at the step that offers it. */
  async function choose(req: IncomingMessage, res: ServerResponse, details: Interaction, choice: (typeof CHOICES)[string]) {
    const state = await loadState(details.uid);
    if (state.step !== choice.at || !state.userId)
      throw new HttpProblem(409, 'Out of order', 'This sign-in is at another step. Go back to the sign-in page and continue there.');
    await readForm(req);
    const user = await users.byId(state.userId);
    if (!user) return finish(req, res, details, { kind: 'deny', code: 'user_not_found', reason: 'The user no longer exists.' });
    const factors = await factorsOf(user);
    if (choice.event === 'chose-face' && !faceAllowed(user, factors))
      throw new HttpProblem(409, 'Out of order', 'This sign-in needs your passkey.');
    return advance(req, res, details, transition(state, { type: choice.event }, factors));
  }

  /** The enrollment page's check of one picture (exactly one face), as JSON; only while enrollment is the step. */
  async function checkCapture(req: IncomingMessage, res: ServerResponse, details: Interaction) {
    const state = await loadState(details.uid);
    if (details.prompt.name !== 'login' || state.step !== 'biometric-enrollment' || !deps.enrollment.checkCapture)
      return sendJson(res, 409, { ok: false, code: 'out_of_order', reason: 'This sign-in is not enrolling a face.' });
    const form = await readForm(req, MAX_PICTURE_FORM_BYTES);
    const verdict = await deps.enrollment.checkCapture(form.get('capture') ?? '');
    return sendJson(res, 200, verdict);
  }

  /** Answers a request under `<mount>/interaction/`; `rest` is the path after it. */
  return async function handle(req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> {
    const [uid, action, extra] = rest.split('/');
    try {
      if (!uid || extra !== undefined) throw new HttpProblem(404, 'Not found', 'There is no such page.');
      let details: Interaction;
      try {
        details = await provider.interactionDetails(req, res);
      } catch {
        throw new HttpProblem(
          400,
          'Sign-in expired',
          'This sign-in has expired or was started in another browser. Start again from the app.',
        );
      }
      if (details.uid !== uid)
        throw new HttpProblem(400, 'Sign-in expired', 'This sign-in page belongs to another sign-in. Start again from the app.');

      if (action === undefined && req.method === 'GET') {
        if (details.prompt.name === 'consent') return await consent(req, res, details);
        if (details.prompt.name !== 'login')
          throw new HttpProblem(400, 'Not supported', `The ${details.prompt.name} prompt is not supported.`);
        return await serial(uid, async () => show(res, details, await loadState(uid)));
      }
      if (action === 'abort' && req.method === 'GET') {
        log.info('security event', { event: 'cancel', result: 'denied', reason: 'cancelled' });
        return await finish(req, res, details, { kind: 'deny', code: 'cancelled', reason: 'The sign-in was cancelled.' });
      }
      if (action === 'check-capture' && req.method === 'POST') return await checkCapture(req, res, details);
      const step = action === undefined ? undefined : STEP_ACTIONS[action];
      const choice = action !== undefined && Object.hasOwn(CHOICES, action) ? CHOICES[action] : undefined;
      if ((step || choice) && req.method === 'POST') {
        if (details.prompt.name !== 'login') throw new HttpProblem(409, 'Out of order', 'This sign-in is not asking for a login.');
        if (choice) return await serial(uid, () => choose(req, res, details, choice));
        return await serial(uid, () => post(req, res, details, step!));
      }
      if (step || choice || action === 'abort' || action === undefined || action === 'check-capture') {
        res.setHeader('Allow', step || choice || action === 'check-capture' ? 'POST' : 'GET');
        throw new HttpProblem(405, 'Method not allowed', `${req.method} is not allowed here.`);
      }
      throw new HttpProblem(404, 'Not found', 'There is no such page.');
    } catch (err) {
      if (err instanceof HttpProblem) return send(res, err.status, messagePage({ realm, title: err.title, message: err.message }));
      if (err instanceof FlowError) return send(res, 409, messagePage({ realm, title: 'Out of order', message: err.message }));
      log.error('interaction failed', { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent)
        send(res, 500, messagePage({ realm, title: 'Something went wrong', message: 'The sign-in could not continue. Try again.' }));
      else res.end();
    }
  };
}
