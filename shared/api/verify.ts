/**
 * Verification 1:1 (`POST /api/verify`): does the face in this image (or in each of these frames) belong to this
 * person? Compared only with that person's own samples, so a look-alike of someone else never passes as them.
 */
import { z } from 'zod';
import { detectionMethod, imageField, RECOGNITION_MODELS, recognitionModel } from './common.js';

/** Most frames one request may carry (the identity provider's burst is 1 to 5). */
export const MAX_VERIFY_FRAMES = 5;

/** Why an answer is (or is not) a match; the words for people beside each code. */
export const VERIFY_REASONS = {
  match: "The face is this person's: its distance to their nearest sample is within the verification threshold.",
  below_threshold: "A face was found, but it is further from this person's samples than the verification threshold allows.",
  no_face: 'No face was found.',
  several_faces: 'More than one face was found; verification takes exactly one.',
  not_enrolled: 'The recognizer knows no person with this label (never enrolled, or enrolled after the last training).',
  not_trained: 'The recognizer has no trained model yet: train it (`POST /api/train`).',
  copy_of_training_image:
    "LBPH only: the distance is below the window's start, so the face is a pixel-exact copy of a training photo (a replayed photo or a still frame); refused.",
  corrected:
    'The face is at least as near to a face a reviewer said is not this person (a correction, `POST /api/corrections`) as to their own samples; refused.',
} as const;
export type VerifyReason = keyof typeof VERIFY_REASONS;

export const verifyReason = z.enum(Object.keys(VERIFY_REASONS) as [VerifyReason, ...VerifyReason[]]).meta({
  id: 'VerifyReason',
  description: `Why the answer is what it is:\n${Object.entries(VERIFY_REASONS)
    .map(([code, text]) => `- \`${code}\`: ${text}`)
    .join('\n')}`,
  'x-enum-descriptions': VERIFY_REASONS,
});

export const verifyRequest = z
  .object({
    label: z.string({ error: "is required (the person's label)" }).meta({
      description: 'The person the face is claimed to be; normalised as on upload (trimmed, lower-cased, spaces become `-`).',
      example: 'alice-smith',
    }),
    image: imageField.optional().meta({ description: 'One image (base64 or a data URL). Send `image` or `frames`, not both.' }),
    frames: z
      .array(imageField, { error: 'must be a list of images' })
      .min(1, 'must hold at least one image')
      .max(MAX_VERIFY_FRAMES, `must hold at most ${MAX_VERIFY_FRAMES} images`)
      .optional()
      .meta({ description: `1 to ${MAX_VERIFY_FRAMES} frames of one camera burst: a match only when every frame matches.` }),
    recognition_model: z
      .enum([...RECOGNITION_MODELS, 'dlib'])
      .optional()
      .meta({
        description:
          'The recognizer for this request only (`dlib` is read as `embedding`); default the active one. 409 `model_unavailable` when it cannot run here.',
      }),
  })
  .refine((b) => (b.image === undefined) !== (b.frames === undefined), { message: 'send either "image" or "frames" (not both)' })
  .meta({ id: 'VerifyRequest' });
export type VerifyRequest = z.infer<typeof verifyRequest>;

const distanceField = z
  .number()
  .nullable()
  .meta({
    description:
      "The face's distance to this person's nearest sample (lower is closer); null when there was no one face to compare or no sample. " +
      'Absent for a caller without the role `biometric-verifier` or `biometric-admin` (a user verifying themself): a continuous score would steer a made-up face towards the template.',
  });

const confidenceField = z.number().min(0).max(100).meta({
  description:
    "The distance as recognition's percent score, its similarity (0 to 100, 60 at the calibrated default limit, the same figure as `POST /api/recognize`'s `confidence` for the same distance; docs/recognition.md), for logs and extra bars; 0 without a distance. `match` decides, not this.",
});

export const faceBox = z
  .object({ x: z.number(), y: z.number(), w: z.number().min(0), h: z.number().min(0) })
  .meta({ id: 'FaceBox', description: 'A face box in integer pixels of the submitted image.' });

/** One frame's verdict. */
export const verifyFrame = z
  .object({
    match: z.boolean(),
    // #35: only for callers that may verify anyone (biometric-verifier, biometric-admin; everyone with AUTH_MODE=off)
    distance: distanceField.optional(),
    confidence: confidenceField.optional(),
    reason: verifyReason,
    faces: z.number().int().min(0).meta({ description: 'Faces found in the frame.' }),
    face: faceBox.optional().meta({ description: 'The one face compared (absent unless exactly one was found).' }),
  })
  .meta({ id: 'VerifyFrame' });
export type VerifyFrame = z.infer<typeof verifyFrame>;

export const verifyResponse = z
  .object({
    match: z.boolean().meta({ description: 'True only when every frame shows exactly one face within the threshold of this person.' }),
    label: z.string().meta({ description: 'The label as normalised.' }),
    distance: distanceField.optional().meta({
      description:
        "The distance that decided: the largest of the frames' distances (the least sure), or null when a frame had no one face to compare. " +
        'Only for callers that may verify anyone (AUTH_MODE=oidc: the role `biometric-verifier` or `biometric-admin`): absent for a user verifying themself.',
    }),
    confidence: confidenceField.optional().meta({
      description: "The least sure frame's `confidence` (see VerifyFrame). Absent with `distance` (it is the distance in other units).",
    }),
    threshold: z.number().meta({
      description:
        "The verification threshold used: the recognizer's `verify_max`, scaled down for a person whose own limit is stricter (embedding: their cohort bound, docs/recognition.md). A match needs distance <= threshold.",
    }),
    reason: verifyReason,
    recognition_model: recognitionModel,
    detection_method: detectionMethod,
    face: faceBox.optional().meta({ description: 'With `image`: the one face compared.' }),
    frames: z.array(verifyFrame).optional().meta({ description: "With `frames`: each frame's verdict, in order." }),
  })
  .meta({
    id: 'VerifyResponse',
    example: {
      match: true,
      label: 'alice-smith',
      distance: 0.38,
      confidence: 69.6,
      threshold: 0.45,
      reason: 'match',
      recognition_model: 'embedding',
      detection_method: 'local',
      face: { x: 120, y: 80, w: 96, h: 96 },
    },
  });
export type VerifyResponse = z.infer<typeof verifyResponse>;
