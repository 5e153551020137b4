/**
 * The face step of `biometric browser`: grants only when the API's 1:1 verification (`POST /api/verify`) says that
 * every frame of the burst shows exactly one face within its verification threshold of the user's own samples, by
 * a recognizer the IdP trusts (BIOMETRIC_RECOGNITION_MODEL), with a `confidence` of at least
 * BIOMETRIC_CONFIDENCE_THRESHOLD (an extra bar; 0, the default, leaves it to the API), and the frames pass Human's
 * antispoof and liveness models (BIOMETRIC_LIVENESS_MIN). The face is compared with nobody else's samples, so a
 * look-alike of another user never passes as them. Everything else is a denial with a reason code; no failure, of
 * the backend, of its answer or of the models, ever leads to a grant (fails closed).
 *
 * The verifier asks the API for its recognizer (`recognition_model`), whatever the kiosk uses: the embedding
 * recognizer by default, LBPH only while embedding cannot run or is not trained (#17 item 10: LBPH refuses most
 * genuine users across photos), and it still checks the answer's `recognition_model`.
 *
 * With `enrollment` (enrollment-sync.ts, #26 deletion), the API's deletions are checked before the decision: a user
 * whose label the API deleted after they enrolled is marked not enrolled and denied with `enrollment_removed`
 * (an API that cannot answer denies too), and so is one the API answers `not_enrolled` for: the face data is gone,
 * the next sign-in enrolls again.
 *
 * #35 items 6 and 8: a match is taken only from an answer that holds together (every frame and the whole a match,
 * each with a distance of at least 0 within the threshold, the whole's distance the least sure frame's), made with a
 * threshold no looser than the IdP's own bound for that recognizer (BIOMETRIC_MAX_VERIFY_DISTANCE_*): an API whose
 * limits an administrator opened to everyone lets nobody in here. A well-formed answer that does not hold together
 * is denied with `inconsistent_answer`, a loose one with `untrusted_threshold`.
 */
import { normalizeLabel } from '../../shared/api/labels.js';
import type { VerifyFrame, VerifyReason, VerifyResponse } from '../../shared/api/verify.js';
import { BackendError, type Backend } from './backend.js';
import { type Capture, decodeCapture } from './captures.js';
import { ENROLLMENT_REMOVED_REASON, type EnrollmentSync } from './enrollment-sync.js';
import type { FaceDecision, FaceVerifier } from './flow.js';
import type { LivenessChecker } from './liveness.js';
import { isEnrolled } from './users.js';

export interface FaceVerifierOptions {
  backend: Backend;
  liveness: LivenessChecker;
  confidenceThreshold: number;
  livenessMin: number;
  recognitionModel: 'embedding' | 'lbph';
  /** The loosest verification threshold (and distance) trusted, per recognizer (#35 item 6). */
  maxVerifyDistance: { embedding: number; lbph: number };
  /** The link to the API's face data, checked against its deletions before each decision (optional for tests). */
  enrollment?: EnrollmentSync;
}

/** Frames in a burst: at least one, and few enough that a page cannot make the IdP work for long. */
export const MIN_FRAMES = 1;
export const MAX_FRAMES = 5;

/** A denial; `score` is the confidence seen, when a face was recognised at all (for the security log). */
export type FaceDenial = Extract<FaceDecision, { granted: false }> & { score?: number };

const deny = (code: string, reason: string, score?: number): FaceDenial => ({ granted: false, code, reason, score });

/** The recognizers whose answers count for the configured one: LBPH stands in while embedding is unavailable. */
function trusted(setting: 'embedding' | 'lbph'): string[] {
  return setting === 'embedding' ? ['embedding', 'lbph'] : ['lbph'];
}

/** The denial each of the API's reasons leads to (`match` never gets here). */
const DENIALS: Record<Exclude<VerifyReason, 'match'>, [code: string, reason: string]> = {
  no_face: ['no_face', 'No face was found. Look straight at the camera in good light.'],
  several_faces: ['several_faces', 'More than one face was seen. Only you may be in front of the camera.'],
  not_trained: ['not_trained', 'The face recognizer is not trained. Ask an administrator.'],
  not_enrolled: ['not_enrolled', 'The face service holds no face data of yours (it may have been removed). Ask an administrator.'],
  below_threshold: ['not_recognised', 'Your face was not recognised.'],
  copy_of_training_image: ['copy_of_training_image', 'The camera sent a copy of an enrollment picture. Show your face live.'],
  corrected: ['not_recognised', 'Your face was not recognised.'],
};

const INCONSISTENT = deny('inconsistent_answer', 'The face could not be verified.');

/**
 * The burst's verdict from the API's answer, or the denial it leads to: the first frame that does not match
 * decides, and a match is taken only when the answer and every one of its frames say so.
 */
function judge(answer: VerifyResponse, threshold: number): FaceDenial | { frames: VerifyFrame[]; score: number } {
  const frames = answer.frames ?? [];
  const score = answer.confidence;
  const failing = frames.find((f) => !f.match) ?? (answer.match ? undefined : answer);
  if (failing) {
    const [code, reason] = failing.reason === 'match' ? DENIALS.below_threshold : DENIALS[failing.reason];
    return deny(code, reason, failing.distance == null ? undefined : failing.confidence);
  }
  if (!frames.every((f) => f.face)) return deny('verification_error', 'The face could not be verified.');
  // The API gives distance and confidence to the IdP's service client (it may verify anyone): a match without them
  // cannot be checked, so it is no match here (#35 item 8).
  if (score === undefined) return INCONSISTENT;
  if (!(score >= threshold))
    return deny('low_score', `Your face was recognised, but not surely enough (${score.toFixed(1)} < ${threshold}).`, score);
  return { frames, score };
}

/**
 * Why a match the API claims is not to be trusted, or undefined when it holds together and stays within `bound`
 * (the IdP's own limit for the answer's recognizer). The distance is required: the IdP's service client may read it.
 */
function matchProblem(answer: VerifyResponse, frames: VerifyFrame[], bound: number): FaceDenial | undefined {
  const { threshold } = answer;
  if (!(Number.isFinite(threshold) && threshold >= 0)) return INCONSISTENT;
  if (threshold > bound)
    return deny(
      'untrusted_threshold',
      'The face service verifies with a limit looser than this sign-in trusts. Ask an administrator to check its verification limits.',
    );
  const holds = (v: { match: boolean; reason: string; distance?: number | null }) =>
    v.match === true && v.reason === 'match' && typeof v.distance === 'number' && v.distance >= 0 && v.distance <= threshold;
  if (frames.length === 0 || !holds(answer) || !frames.every(holds)) return INCONSISTENT;
  // The whole's distance is the least sure frame's: one nearer than a frame's is not the API's arithmetic.
  if (frames.some((f) => (f.distance as number) > (answer.distance as number))) return INCONSISTENT;
  return undefined;
}

/**
 * The verification with the recognizer to ask: the configured one; for `embedding`, LBPH when the API answers that
 * embedding cannot run here (409 `model_unavailable`) or has no model (`not_trained`).
 */
async function verifyWithTrusted(options: FaceVerifierOptions, label: string, frames: Buffer[]): Promise<VerifyResponse> {
  if (options.recognitionModel === 'lbph') return options.backend.verify(label, frames, 'lbph');
  try {
    const answer = await options.backend.verify(label, frames, 'embedding');
    return answer.reason === 'not_trained' ? options.backend.verify(label, frames, 'lbph') : answer;
  } catch (err) {
    if (err instanceof BackendError && err.apiCode === 'model_unavailable') return options.backend.verify(label, frames, 'lbph');
    throw err;
  }
}

export function createFaceVerifier(options: FaceVerifierOptions): FaceVerifier {
  const accepted = trusted(options.recognitionModel);
  return {
    async verify(user, evidence) {
      if (evidence.frames.length < MIN_FRAMES || evidence.frames.length > MAX_FRAMES)
        return deny(
          'invalid_frames',
          `The face step takes ${MIN_FRAMES} to ${MAX_FRAMES} camera frames; ${evidence.frames.length} were sent.`,
        );
      const frames: Capture[] = [];
      for (const text of evidence.frames) {
        const frame = decodeCapture(text);
        if (!frame) return deny('invalid_frames', 'A camera frame is not a JPEG or PNG picture.');
        frames.push(frame);
      }
      // The label the API knows the user by (enrollment uploaded under the username, normalised the same way).
      const label = normalizeLabel(user.username);
      if (!label.ok) return deny('not_enrolled', 'Your face is not enrolled with the face service. Ask an administrator.');
      try {
        await options.backend.health();
        if (options.enrollment) {
          const current = await options.enrollment.checkUser(user);
          if (!current || !isEnrolled(current)) return deny('enrollment_removed', ENROLLMENT_REMOVED_REASON);
        }
        const answer = await verifyWithTrusted(
          options,
          label.label,
          frames.map((f) => f.bytes),
        );
        if (!accepted.includes(answer.recognition_model))
          return deny(
            'untrusted_recognizer',
            `The face service answers with ${answer.recognition_model || 'an unknown recognizer'}, which this sign-in does not accept.`,
          );
        // An answer about someone else is no answer about this user.
        if (answer.label !== label.label) return deny('verification_error', 'The face could not be verified.');
        const verdict = judge(answer, options.confidenceThreshold);
        if ('granted' in verdict && verdict.code === 'not_enrolled' && options.enrollment) {
          // The IdP thought the user enrolled, the API holds none of their face data: the link is dropped.
          await options.enrollment.drop(user, 'api_not_enrolled');
          return deny('enrollment_removed', ENROLLMENT_REMOVED_REASON);
        }
        if ('granted' in verdict) return verdict;
        const { score } = verdict;
        const bound = options.maxVerifyDistance[answer.recognition_model === 'lbph' ? 'lbph' : 'embedding'];
        const problem = matchProblem(answer, verdict.frames, bound);
        if (problem) return { ...problem, score };
        let antispoof = 0;
        let liveness = 0;
        try {
          for (let i = 0; i < frames.length; i++) {
            const s = await options.liveness.score(frames[i].bytes, verdict.frames[i].face!);
            antispoof += s.antispoof / frames.length;
            liveness += s.liveness / frames.length;
          }
        } catch {
          return deny('liveness_unavailable', 'The liveness check could not run.', score);
        }
        const live = Math.min(antispoof, liveness);
        if (!(live >= options.livenessMin))
          return deny(
            'liveness_failed',
            `The camera did not see a live face (liveness ${live.toFixed(2)} < ${options.livenessMin}).`,
            score,
          );
        return { granted: true, score };
      } catch (err) {
        if (err instanceof BackendError) {
          if (err.apiCode === 'invalid_image' || err.apiCode === 'image_too_large' || err.status === 400 || err.status === 413)
            return deny('invalid_frames', 'The face service could not read a camera frame.');
          return deny(err.code, err.message);
        }
        // A bug of ours is a denial too, never a grant.
        return deny('verification_error', 'The face could not be verified.');
      }
    },
  };
}
