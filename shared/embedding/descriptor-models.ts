/**
 * The descriptor models the embedding recognizer can run, by id. Descriptors of two models are not comparable
 * (other nets, other lengths), so a trained model records the id it was made with (model-file.ts) and a host
 * refuses a trained model of another id (`descriptorMismatch`).
 *
 *   faceapi-128   face-api's face_recognition_model (dlib ResNet-34 port), 128-d, on face-api's aligned box;
 *                 distances are dlib's euclidean (known <= 0.6 as dlib calibrated it).
 *   faceres-1024  Human's faceres (HSE FaceRes, MobileNet-based), 1024-d, on a five-point similarity-aligned
 *                 224 px crop; descriptors are L2-normalised, so euclidean distance is sqrt(2 - 2 cos).
 */

export const DESCRIPTOR_MODEL_IDS = ['faceapi-128', 'faceres-1024'] as const;
export type DescriptorModelId = (typeof DESCRIPTOR_MODEL_IDS)[number];

/** The model a trained file without an id was made with (version 1 files predate faceres). */
export const DEFAULT_DESCRIPTOR_MODEL: DescriptorModelId = 'faceapi-128';

/**
 * The model unknown faces are grouped by for review, whatever model recognises (#36 1): grouping is measured and
 * tuned on it, and held out it keeps faces of one person together better on degraded camera views (recall 0.88
 * against 0.56 for faceres-1024 at precision 0.97 to 0.98, bench/RESULTS.md "Grouping unknown faces").
 */
export const GROUPING_DESCRIPTOR_MODEL: DescriptorModelId = 'faceapi-128';

export interface DescriptorModelInfo {
  id: DescriptorModelId;
  dim: number;
  /** What produced the descriptors, in words (the `extractor` field of embeddings.json). */
  extractor: string;
}

export const DESCRIPTOR_MODELS: Readonly<Record<DescriptorModelId, DescriptorModelInfo>> = {
  'faceapi-128': {
    id: 'faceapi-128',
    dim: 128,
    extractor: 'face-api face_recognition_model (dlib ResNet-34), 68-point landmark alignment',
  },
  'faceres-1024': {
    id: 'faceres-1024',
    dim: 1024,
    extractor: 'Human faceres (HSE FaceRes), five-point alignment from 68 landmarks to 224 px, L2-normalised',
  },
};

export function isDescriptorModelId(value: unknown): value is DescriptorModelId {
  return typeof value === 'string' && (DESCRIPTOR_MODEL_IDS as readonly string[]).includes(value);
}

/**
 * Why a trained model of descriptor model `trained` cannot be used by a host that computes `running`
 * descriptors, in words that say what to do; null when they are the same model.
 */
export function descriptorMismatch(trained: DescriptorModelId, running: DescriptorModelId): string | null {
  if (trained === running) return null;
  return (
    `the trained embedding model was made with ${trained} descriptors, but this recognizer computes ${running} ` +
    `(EMBEDDING_DESCRIPTOR); its distances are not comparable: train again to use the embedding recognizer`
  );
}
