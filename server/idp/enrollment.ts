/**
 * The required action `biometric-enrollment`: 3 to BIOMETRIC_MAX_ENROLLMENT_IMAGES captures, each shown to the
 * backend to hold exactly one face, uploaded under the username as label (`POST /api/images`, multipart), kept out
 * of the kiosk gallery (`PUT /api/people/{label}` `{ kiosk: false }`: the second factor's templates are not for the
 * devices that download the trained models), then `POST /api/train`; only then is the user marked enrolled
 * (attribute `biometric_enrolled=true`, group `biometric-enrolled`, and `biometric_enrolled_at`: when the uploads
 * began, so a deletion of the label by the API from then on drops the link, enrollment-sync.ts). The page checks each capture as it is taken
 * (`checkCapture`), so a bad one is retaken
 * there; `enroll` checks them all again, since the page is not to be trusted.
 */
import type { Backend } from './backend.js';
import { BackendError } from './backend.js';
import { type Capture, decodeCapture } from './captures.js';
import type { EnrollmentHandler, EnrollmentResult } from './flow.js';
import type { User, UserStore } from './users.js';

export const MIN_ENROLLMENT_IMAGES = 3;

export type CaptureCheck = { ok: true } | { ok: false; code: string; reason: string };

export interface Enrollment extends EnrollmentHandler {
  /** Whether one capture holds exactly one face. */
  checkCapture(text: string): Promise<CaptureCheck>;
}

const backendProblem = (err: BackendError): { ok: false; code: string; reason: string } => ({
  ok: false,
  code: err.code,
  reason: err.message,
});

export function createEnrollment(options: { backend: Backend; users: UserStore; maxImages: number }): Enrollment {
  const { backend, users, maxImages } = options;

  async function check(capture: Capture | null): Promise<CaptureCheck> {
    if (!capture) return { ok: false, code: 'invalid_capture', reason: 'The picture is not a JPEG or PNG image.' };
    try {
      const { faces } = await backend.recognize(capture.bytes);
      if (faces.length === 0) return { ok: false, code: 'no_face', reason: 'No face in this picture. Look at the camera in good light.' };
      if (faces.length > 1)
        return { ok: false, code: 'several_faces', reason: 'More than one face in this picture. Only you may be in it.' };
      return { ok: true };
    } catch (err) {
      if (err instanceof BackendError && err.code === 'backend_error')
        return { ok: false, code: 'invalid_capture', reason: `The face service could not read the picture (${err.message}).` };
      if (err instanceof BackendError) return backendProblem(err);
      throw err;
    }
  }

  return {
    checkCapture: (text) => check(decodeCapture(text)),

    async enroll(user: User, texts: string[]): Promise<EnrollmentResult> {
      if (texts.length < MIN_ENROLLMENT_IMAGES || texts.length > maxImages)
        return {
          ok: false,
          retry: true,
          code: 'invalid_captures',
          reason: `Enrollment takes ${MIN_ENROLLMENT_IMAGES} to ${maxImages} pictures; ${texts.length} were sent.`,
        };
      const captures = texts.map(decodeCapture);
      let began = new Date();
      try {
        await backend.health();
        for (const [i, capture] of captures.entries()) {
          const verdict = await check(capture);
          if (!verdict.ok) {
            const retry = !verdict.code.startsWith('backend_');
            return { ...verdict, retry, reason: retry ? `Picture ${i + 1}: ${verdict.reason} Take it again.` : verdict.reason };
          }
        }
        began = new Date();
        for (const capture of captures) await backend.upload(user.username, capture!.bytes, capture!.type);
        await backend.setKiosk?.(user.username, false);
        await backend.train();
      } catch (err) {
        if (err instanceof BackendError && err.status === 422)
          return {
            ok: false,
            retry: true,
            code: 'no_face_in_training',
            reason: 'Training found no face in the pictures. Take them again.',
          };
        if (err instanceof BackendError) return backendProblem(err);
        return { ok: false, code: 'enrollment_error', reason: 'The enrollment could not be completed.' };
      }
      await users.markEnrolled(user.id, began);
      return { ok: true };
    },
  };
}
