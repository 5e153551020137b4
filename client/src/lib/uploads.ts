/**
 * Storing a training image. Pages call this, never api.uploadImage directly, so that offline captures can be
 * queued and synced later without the pages knowing.
 */
import { api } from './api';

export interface UploadOutcome {
  /** `stored` on the server now, or `queued` to be sent when the server is back. */
  state: 'stored' | 'queued';
  label: string;
  filename?: string;
}

export async function uploadTrainingImage(label: string, image: Blob): Promise<UploadOutcome> {
  const r = await api.uploadImage(label, image);
  return { state: 'stored', label: r.label, filename: r.filename };
}
