/**
 * The face step of `biometric browser`: grants only when every frame of the burst shows exactly one face, named
 * with the user's own label by a recognizer the IdP trusts (BIOMETRIC_RECOGNITION_MODEL), with a `confidence` of
 * at least BIOMETRIC_CONFIDENCE_THRESHOLD, and the frames pass Human's antispoof and liveness models
 * (BIOMETRIC_LIVENESS_MIN). Everything else is a denial with a reason code; no failure, of the backend or of the
 * models, ever leads to a grant (fails closed).
 *
 * The verifier asks the API for its recognizer on every frame (`recognition_model`), whatever the kiosk uses: the
 * embedding recognizer by default, LBPH only while embedding cannot run or is not trained (#17 item 10: LBPH
 * refuses most genuine users across photos), and it still checks each answer's `recognition_model`.
 */
import type { Backend, RecognizedFace } from './backend.js';
import { BackendError } from './backend.js';
import { type Capture, decodeCapture } from './captures.js';
import type { FaceDecision, FaceVerifier } from './flow.js';
import type { LivenessChecker } from './liveness.js';
import type { User } from './users.js';

export interface FaceVerifierOptions {
  backend: Backend;
  liveness: LivenessChecker;
  confidenceThreshold: number;
  livenessMin: number;
  recognitionModel: 'embedding' | 'lbph';
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

/** The one face of a frame judged against the user, or the denial it leads to. */
function judge(user: User, faces: RecognizedFace[], threshold: number): FaceDenial | { face: RecognizedFace } {
  if (faces.length === 0) return deny('no_face', 'No face was found. Look straight at the camera in good light.');
  if (faces.length > 1) return deny('several_faces', 'More than one face was seen. Only you may be in front of the camera.');
  const [face] = faces;
  if (face.label === 'unknown' && face.reason === 'not_trained')
    return deny('not_trained', 'The face recognizer is not trained. Ask an administrator.');
  if (face.label === 'unknown') return deny('not_recognised', 'Your face was not recognised.');
  if (face.label !== user.username) return deny('another_person', 'The face seen is not yours.', face.confidence);
  if (!(face.confidence >= threshold))
    return deny(
      'low_score',
      `Your face was recognised, but not surely enough (${face.confidence.toFixed(1)} < ${threshold}).`,
      face.confidence,
    );
  return { face };
}

/**
 * The recognizer to ask: the configured one; for `embedding`, LBPH when the API answers that embedding cannot
 * run here (409 `model_unavailable`) or has no model, found with an empty probe image of 1x1 pixel.
 */
async function recognizerFor(options: FaceVerifierOptions): Promise<'embedding' | 'lbph'> {
  if (options.recognitionModel === 'lbph') return 'lbph';
  try {
    const probe = await options.backend.recognize(PROBE_PNG, 'embedding');
    return probe.trained ? 'embedding' : 'lbph';
  } catch (err) {
    if (err instanceof BackendError && err.apiCode === 'model_unavailable') return 'lbph';
    throw err;
  }
}

/** A 1x1 gray PNG: asks the API whether a recognizer is trained without any face in it. */
const PROBE_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==', 'base64');

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
      try {
        await options.backend.health();
        const recognizer = await recognizerFor(options);
        const faces: RecognizedFace[] = [];
        for (const frame of frames) {
          const answer = await options.backend.recognize(frame.bytes, recognizer);
          if (!answer.trained) return deny('not_trained', 'The face recognizer is not trained. Ask an administrator.');
          if (!accepted.includes(answer.recognitionModel))
            return deny(
              'untrusted_recognizer',
              `The face service answers with ${answer.recognitionModel || 'an unknown recognizer'}, which this sign-in does not accept.`,
            );
          const verdict = judge(user, answer.faces, options.confidenceThreshold);
          if ('granted' in verdict) return verdict;
          faces.push(verdict.face);
        }
        const score = Math.min(...faces.map((f) => f.confidence));
        let antispoof = 0;
        let liveness = 0;
        try {
          for (let i = 0; i < frames.length; i++) {
            const s = await options.liveness.score(frames[i].bytes, faces[i]);
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
