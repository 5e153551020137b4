/**
 * The sign-in flow `biometric browser` as an explicit state machine: a valid session cookie (handled by
 * oidc-provider before any of this runs), or the password AND a second factor, the face or a passkey. There is no
 * path to `grant` that skips the second factor: every state after the password leads through `face` or
 * `passkey`, which grant only on the verifier's word.
 *
 *   password --ok--> update-password   (required action UPDATE_PASSWORD: temporary password)
 *            --ok--> passkey            (passkeys offered and the user has one)
 *            --ok--> passkey-enrollment (a passkey required, by IDP_PASSKEYS=required or for this user, and none yet,
 *                                        and no face enrolled: a user with a face proves it first, #35 item 7)
 *            --ok--> biometric-enrollment (required action pending / not enrolled)
 *            --ok--> face
 *   update-password --changed--> (as after the password)
 *   biometric-enrollment --enrolled--> face (the enrollment captures do not count as a verification)
 *                        --failed--> denied
 *                        --chose-passkey--> passkey-enrollment (IDP_PASSKEYS=alternative: a passkey instead)
 *   passkey-enrollment --registered--> passkey (the registration does not count as a verification), or granted
 *                                      when the face was verified first (a passkey added after a face sign-in)
 *                      --failed--> denied
 *   passkey --verified--> granted
 *           --rejected--> denied
 *           --chose-face--> face (IDP_PASSKEYS=alternative, the user enrolled a face and no passkey is required)
 *   face --verified--> granted, or passkey-enrollment when the user asked to add a passkey or one is required
 *        --rejected--> denied (with the reason)
 *
 * The real face verification (face-verifier.ts) and enrollment (enrollment.ts) are wired by biometrics.ts when
 * startIdp is asked for them (`npm run idp` does). The defaults below FAIL CLOSED: without them the face step
 * denies every sign-in ("face verification is not available") and enrollment refuses.
 */
import { ACTION_BIOMETRIC_ENROLLMENT, ACTION_UPDATE_PASSWORD, isEnrolled, type User } from './users.js';

export type Step = 'password' | 'update-password' | 'biometric-enrollment' | 'face' | 'passkey-enrollment' | 'passkey';

export interface FlowState {
  step: Step;
  /** Set once the password is accepted. */
  userId?: string;
  /** The WebAuthn challenge of the passkey page last shown (base64url); taken out before a response is checked. */
  challenge?: string;
  /** Set once the face was verified in this sign-in (a passkey is being added after it). */
  faceVerified?: boolean;
}

/** What decides the second factor besides the user record: the passkey policy and the user's passkeys. */
export interface SecondFactor {
  /** IDP_PASSKEYS; `off` also where passkeys cannot work (the issuer is an IP address). */
  policy: 'off' | 'alternative' | 'required';
  /** This user's registered passkeys. */
  passkeys: number;
  /** An administrator requires a passkey of this user. */
  userRequired: boolean;
}

export const FACE_ONLY: SecondFactor = { policy: 'off', passkeys: 0, userRequired: false };

/** What the face page sends: a short burst of frames (base64 JPEG or PNG), for recognition and liveness. */
export interface FaceEvidence {
  frames: string[];
}

/** `score` of a denial: the confidence seen when a face was recognised (for the security log). */
export type FaceDecision = { granted: true; score: number } | { granted: false; code: string; reason: string; score?: number };

export interface FaceVerifier {
  verify(user: User, evidence: FaceEvidence): Promise<FaceDecision>;
}

/** `retry`: the captures were refused (a bad picture) and the page may be shown again to retake them. */
export type EnrollmentResult = { ok: true } | { ok: false; code: string; reason: string; retry?: boolean };

export interface EnrollmentHandler {
  /** Uploads the captures under the username, trains, and marks the user enrolled. */
  enroll(user: User, captures: string[]): Promise<EnrollmentResult>;
}

/** The default until the face step is built: every verification is denied (fails closed, never skipped). */
export const FACE_VERIFICATION_UNAVAILABLE: FaceVerifier = {
  async verify() {
    return {
      granted: false,
      code: 'face_verification_unavailable',
      reason: 'Face verification is not available on this identity provider yet.',
    };
  },
};

/** The default until enrollment is built: no one can enrol, so no one reaches a granted face step. */
export const ENROLLMENT_UNAVAILABLE: EnrollmentHandler = {
  async enroll() {
    return { ok: false, code: 'enrollment_unavailable', reason: 'Face enrollment is not available on this identity provider yet.' };
  },
};

export type FlowEvent =
  | { type: 'password-accepted'; user: User }
  | { type: 'password-changed'; user: User }
  | { type: 'enrolled'; user: User }
  | { type: 'enrollment-failed'; code: string; reason: string }
  | { type: 'face'; decision: FaceDecision; addPasskey?: boolean }
  | { type: 'chose-passkey' }
  | { type: 'chose-face' }
  | { type: 'passkey-registered' }
  | { type: 'passkey'; decision: { granted: true } | { granted: false; code: string; reason: string } };

export type Outcome =
  | { kind: 'continue'; state: FlowState }
  | { kind: 'grant'; userId: string; amr: string[] }
  | { kind: 'deny'; code: string; reason: string };

export const INITIAL: FlowState = { step: 'password' };

export const passkeyRequired = (f: SecondFactor) => f.policy === 'required' || (f.policy !== 'off' && f.userRequired);

/** A passkey is required of the user and they have none yet: it is registered after the face (#35 item 7). */
export const passkeyOwed = (f: SecondFactor) => passkeyRequired(f) && f.passkeys === 0;

/** Whether a user at the passkey step may take the face step instead. */
export const faceAllowed = (user: User, f: SecondFactor) => f.policy === 'alternative' && !f.userRequired && isEnrolled(user);

/** The first step still owed after the password: pending required actions, then the passkey or the face. */
export function stepAfterPassword(user: User, f: SecondFactor = FACE_ONLY): Step {
  if (user.requiredActions.includes(ACTION_UPDATE_PASSWORD)) return 'update-password';
  if (f.policy !== 'off' && f.passkeys > 0) return 'passkey';
  // A required passkey is registered right after the password only by a user with no other factor yet (their first
  // sign-in): one with an enrolled face proves it first, so the password alone never adds a factor (#35 item 7).
  if (passkeyRequired(f)) return isEnrolled(user) ? 'face' : 'passkey-enrollment';
  if (user.requiredActions.includes(ACTION_BIOMETRIC_ENROLLMENT) || !isEnrolled(user)) return 'biometric-enrollment';
  return 'face';
}

/** Which event each step accepts; any other event there is a protocol error (a replayed or forged form). */
const ACCEPTS: Record<Step, FlowEvent['type'][]> = {
  password: ['password-accepted'],
  'update-password': ['password-changed'],
  'biometric-enrollment': ['enrolled', 'enrollment-failed', 'chose-passkey'],
  face: ['face'],
  'passkey-enrollment': ['passkey-registered', 'enrollment-failed'],
  passkey: ['passkey', 'chose-face'],
};

export class FlowError extends Error {
  constructor(
    readonly step: Step,
    readonly event: FlowEvent['type'],
  ) {
    super(`the sign-in is at step ${step}, which does not take ${event}`);
    this.name = 'FlowError';
  }
}

/**
 * `factors`: the passkey policy and the user's passkeys now (for the steps after the password, and the choices);
 * the interaction handler reads them, and checks a choice is offered, before sending the event.
 */
export function transition(state: FlowState, event: FlowEvent, factors: SecondFactor = FACE_ONLY): Outcome {
  if (!ACCEPTS[state.step].includes(event.type)) throw new FlowError(state.step, event.type);
  switch (event.type) {
    case 'password-accepted':
    case 'password-changed':
      return { kind: 'continue', state: { step: stepAfterPassword(event.user, factors), userId: event.user.id } };
    case 'enrolled':
      return { kind: 'continue', state: { step: 'face', userId: event.user.id } };
    case 'enrollment-failed':
      return { kind: 'deny', code: event.code, reason: event.reason };
    case 'chose-passkey':
      if (!state.userId || factors.policy !== 'alternative') throw new FlowError(state.step, event.type);
      return { kind: 'continue', state: { step: 'passkey-enrollment', userId: state.userId } };
    case 'chose-face':
      if (!state.userId || factors.policy !== 'alternative' || factors.userRequired) throw new FlowError(state.step, event.type);
      return { kind: 'continue', state: { step: 'face', userId: state.userId } };
    case 'passkey-registered':
      if (!state.userId) throw new FlowError(state.step, event.type);
      return state.faceVerified
        ? { kind: 'grant', userId: state.userId, amr: ['pwd', 'face', 'hwk'] }
        : { kind: 'continue', state: { step: 'passkey', userId: state.userId } };
    case 'passkey': {
      if (!state.userId) throw new FlowError(state.step, event.type);
      const d = event.decision;
      return d.granted === true
        ? { kind: 'grant', userId: state.userId, amr: ['pwd', 'hwk'] }
        : { kind: 'deny', code: d.code, reason: d.reason };
    }
    case 'face': {
      if (!state.userId) throw new FlowError(state.step, event.type);
      const d = event.decision;
      if (d.granted !== true) return { kind: 'deny', code: d.code, reason: d.reason };
      // A passkey added after a verified face (IDP_PASSKEYS not off), asked for or required and none yet: the face,
      // not the password alone, vouches for it.
      if (factors.policy !== 'off' && (event.addPasskey || passkeyOwed(factors)))
        return { kind: 'continue', state: { step: 'passkey-enrollment', userId: state.userId, faceVerified: true } };
      return { kind: 'grant', userId: state.userId, amr: ['pwd', 'face'] };
    }
  }
}
