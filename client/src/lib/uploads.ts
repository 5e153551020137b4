/**
 * Storing a training image. Pages call this, never api.uploadImage directly, so that offline captures can be
 * queued and synced later without the pages knowing. Every upload carries a `capture_id`: if the answer is
 * lost and the photo is sent again from the offline queue, the server stores it once. Photos are checked here
 * too, before saving (`POST /api/images/check`, nothing stored).
 */
import { normalizeLabel } from '../../../shared/api/labels';
import { type CaptureDetails, queue, storageProblem } from '../pwa/queue';
import { newCaptureId } from '../pwa/ids';
import { queuedOne } from '../pwa/sync';
import { postCapture, postPhotoCheck } from '../pwa/transport';
import { ApiFailure, UNREACHABLE_MESSAGE } from './api';
import { blobToDataUrl } from './images';
import { type PhotoCheckResult, readCheckAnswer, type ShownFaceBox } from './photo-check';

export interface UploadOutcome {
  /** `stored` on the server now, or `queued` to be sent when the server is back. */
  state: 'stored' | 'queued';
  label: string;
  filename?: string;
}

/**
 * Sends the image; when the server cannot be reached (or is starting, 503), keeps it on this device and
 * answers `queued` (the sync loop sends it later). A refusal (4xx: bad label, unreadable image) is thrown as
 * an ApiFailure, as before: queueing it would only fail again later.
 */
export async function uploadTrainingImage(label: string, image: Blob, details: CaptureDetails = {}): Promise<UploadOutcome> {
  // Checked here as the server would: a queued photo with a bad name would be refused hours later, unseen.
  const check = normalizeLabel(label);
  if (!check.ok) throw new ApiFailure(`${check.reason.charAt(0).toUpperCase()}${check.reason.slice(1)}.`, 400, 'invalid_label');
  const captureId = newCaptureId();
  try {
    const r = await postCapture(check.label, image, captureId, details);
    return { state: 'stored', label: r.label, filename: r.filename };
  } catch (err) {
    if (!(err instanceof ApiFailure) || !(err.unreachable || err.status === 503)) throw err;
    try {
      await queue.addCapture({ ...details, capture_id: captureId, label: check.label, blob: image, created: Date.now() });
    } catch (storeErr) {
      throw new ApiFailure(
        `${UNREACHABLE_MESSAGE} The photo could not be kept on this device either: ${storageProblem(storeErr)}.`,
        0,
        'network',
      );
    }
    await queuedOne();
    return { state: 'queued', label: check.label };
  }
}

/**
 * Checks a photo before it is saved: the verdict and the faces found. Throws an ApiFailure when it cannot be
 * checked (server away: `unreachable`; an older server without the check: 404), and the page then says so.
 */
export async function checkTrainingPhoto(image: Blob, face?: ShownFaceBox): Promise<PhotoCheckResult> {
  return readCheckAnswer(await postPhotoCheck(await blobToDataUrl(image), face));
}
