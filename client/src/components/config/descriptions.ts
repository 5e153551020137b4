/** Human names and one-line descriptions of the recognition models and detection methods. */
import type { DetectionMethod, ReadyResponse, RecognitionModel } from '../../../../shared/api/index';

export const RECOGNITION_TEXT: Record<RecognitionModel, { title: string; description: string }> = {
  lbph: { title: 'LBPH', description: 'Fast and light; the default. Compares local texture patterns of the face.' },
  embedding: {
    title: 'Embedding',
    description: 'Face descriptors from a neural network: more robust to pose and light, a little slower.',
  },
};

export const DETECTION_TEXT: Record<DetectionMethod, { title: string; description: string }> = {
  local: { title: 'Local', description: 'Haar cascade in this server: no other service needed.' },
  remote: { title: 'Remote', description: 'A face detection model on a model server, called over KServe V2.' },
};

export const REMOTE_STATUS_TEXT: Record<ReadyResponse['remote_status'], string> = {
  connected: 'connected',
  unreachable: 'unreachable',
  model_not_ready: 'model not ready',
  disabled: 'not configured',
};

/** A trained-at time in the reader's own locale, e.g. "12 May 2025, 14:03". */
export function formatWhen(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
