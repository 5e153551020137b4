/**
 * The sign-in flow `biometric browser` as an explicit state machine: a valid session cookie (handled by
 * oidc-provider before any of this runs), or password AND face. There is no path to `grant` that skips the face
 * step: every state after the password leads through `face`, and `face` grants only on the verifier's word.
 *
 *   password --ok--> update-password   (required action UPDATE_PASSWORD: temporary password)
 *            --ok--> biometric-enrollment (required action pending / not enrolled)
 *            --ok--> face
 *   update-password --changed--> biometric-enrollment | face
 *   biometric-enrollment --enrolled--> face (the enrollment captures do not count as a verification)
 *                        --failed--> denied
 *   face --verified--> granted
 *        --rejected--> denied (with the reason)
 *
 * The real face verification (face-verifier.ts) and enrollment (enrollment.ts) are wired by biometrics.ts when
 * startIdp is asked for them (`npm run idp` does). The defaults below FAIL CLOSED: without them the face step
 * denies every sign-in ("face verification is not available") and enrollment refuses.
 */
import { ACTION_BIOMETRIC_ENROLLMENT, ACTION_UPDATE_PASSWORD, isEnrolled, type User } from './users.js';

export type Step = 'password' | 'update-password' | 'biometric-enrollment' | 'face';

export interface FlowState {
  step: Step;
  /** Set once the password is accepted. */
  userId?: string;
}

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
  | { type: 'face'; decision: FaceDecision };

export type Outcome =
  | { kind: 'continue'; state: FlowState }
  | { kind: 'grant'; userId: string; amr: string[] }
  | { kind: 'deny'; code: string; reason: string };

export const INITIAL: FlowState = { step: 'password' };

/** The first step still owed after the password: pending required actions, then the face. */
export function stepAfterPassword(user: User): Step {
  if (user.requiredActions.includes(ACTION_UPDATE_PASSWORD)) return 'update-password';
  if (user.requiredActions.includes(ACTION_BIOMETRIC_ENROLLMENT) || !isEnrolled(user)) return 'biometric-enrollment';
  return 'face';
}

/** Which event each step accepts; any other event there is a protocol error (a replayed or forged form). */
const ACCEPTS: Record<Step, FlowEvent['type'][]> = {
  password: ['password-accepted'],
  'update-password': ['password-changed'],
  'biometric-enrollment': ['enrolled', 'enrollment-failed'],
  face: ['face'],
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

export function transition(state: FlowState, event: FlowEvent): Outcome {
  if (!ACCEPTS[state.step].includes(event.type)) throw new FlowError(state.step, event.type);
  switch (event.type) {
    case 'password-accepted':
    case 'password-changed':
      return { kind: 'continue', state: { step: stepAfterPassword(event.user), userId: event.user.id } };
    case 'enrolled':
      return { kind: 'continue', state: { step: 'face', userId: event.user.id } };
    case 'enrollment-failed':
      return { kind: 'deny', code: event.code, reason: event.reason };
    case 'face': {
      if (!state.userId) throw new FlowError(state.step, event.type);
      const d = event.decision;
      return d.granted === true
        ? { kind: 'grant', userId: state.userId, amr: ['pwd', 'face'] }
        : { kind: 'deny', code: d.code, reason: d.reason };
    }
  }
}
