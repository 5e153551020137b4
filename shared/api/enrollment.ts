/**
 * Enrollment checks (issue #26 §3): the photo check of a training image (shared/recognition/photo-check.ts) as the
 * API gives it, the picked face of a photo with several, the person's display name and the per-person summary.
 */
import { z } from 'zod';
import { imageField } from './common.js';

export const PHOTO_VERDICT_VALUES = [
  'ok',
  'no_face',
  'several_faces',
  'too_small',
  'blurred',
  'too_dark',
  'too_bright',
  'not_frontal',
] as const;

export const photoVerdict = z.enum(PHOTO_VERDICT_VALUES).meta({
  id: 'PhotoVerdict',
  description:
    '`ok`; `no_face`; `several_faces` (pick one with `face`); `too_small` (face under 80 px wide); `blurred`; `too_dark`; ' +
    '`too_bright` (washed out); `not_frontal` (the eyes show a turned or tilted head).',
});

/** A face box in the image's pixels (after EXIF orientation). */
export const pickedFaceBox = z
  .object({
    x: z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be 0 or more'),
    y: z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be 0 or more'),
    w: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be 1 or more'),
    h: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be 1 or more'),
  })
  .strict()
  .meta({
    id: 'PickedFaceBox',
    description: 'A face box in image pixels (upright, after EXIF orientation).',
    example: { x: 120, y: 80, w: 96, h: 96 },
  });
export type FaceBoxBody = z.infer<typeof pickedFaceBox>;

export const photoMeasures = z
  .object({
    face_px: z.number().int().meta({ description: "Width of the measured face's box, pixels (80 or more recognises well)." }),
    face_share: z.number().meta({ description: "The box's share of the image's area (0..1)." }),
    sharpness: z
      .number()
      .meta({ description: 'Laplacian variance over gray-level variance of the face at 100x100; under 0.03 is blurred.' }),
    brightness: z.number().meta({ description: 'Mean gray of the face (0..255).' }),
    highlights: z.number().int().meta({ description: "99th percentile of the face's gray; under 90 is too dark." }),
    clipped: z.number().meta({ description: 'Share of the face burnt out (gray 250 or more); over 0.15 is too bright.' }),
    eyes: z.number().int().nullable().meta({ description: 'Eyes seen where a face has them (0..2); null: not looked for.' }),
    frontal: z.boolean().nullable().meta({ description: 'From the eyes: true frontal, false turned or tilted, null cannot tell.' }),
  })
  .meta({ id: 'PhotoMeasures' });

export const photoCheck = z
  .object({
    verdict: photoVerdict,
    message: z.string().meta({ description: 'The verdict in a sentence for a person.' }),
    problems: z.array(photoVerdict).meta({ description: 'Every problem found, most serious first (empty: ok).' }),
    faces: z.number().int().meta({ description: 'Faces found in the photo.' }),
    face: z
      .object({ x: z.number().int(), y: z.number().int(), w: z.number().int(), h: z.number().int() })
      .nullable()
      .meta({ description: 'The face measured: the picked one, else the largest (the one training takes).' }),
    picked: z.boolean().meta({ description: 'Whether `face` is the one picked with `face` among several.' }),
    measures: photoMeasures.nullable(),
    detection_method: z.enum(['local', 'remote']).optional().meta({
      description: 'The detection engine that found the faces: the active one (`PUT /api/models/detection`), as training will.',
    }),
    detection_note: z.string().optional().meta({
      description: 'Present when the selected engine was not used: `remote` selected but unavailable, so the local detector checked.',
    }),
  })
  .meta({
    id: 'PhotoCheck',
    description:
      'The photo check: an answer, never an error. Training still uses a photo whatever its verdict (the largest face, or the picked one).',
    example: {
      verdict: 'several_faces',
      message: 'Two faces: pick one (send its box as "face").',
      problems: ['several_faces'],
      faces: 2,
      face: { x: 640, y: 210, w: 240, h: 240 },
      picked: false,
      measures: { face_px: 240, face_share: 0.02, sharpness: 0.06, brightness: 108, highlights: 190, clipped: 0, eyes: 2, frontal: true },
    },
  });
export type PhotoCheckBody = z.infer<typeof photoCheck>;

export const enrollmentSummary = z
  .object({
    photos: z.number().int(),
    good: z.number().int().meta({ description: 'Photos whose check said `ok`.' }),
    problems: z.number().int().meta({ description: 'Photos whose check found a problem.' }),
    unchecked: z.number().int().meta({ description: 'Photos stored without a check (before checks existed), counted as usable.' }),
    enough: z.boolean().meta({ description: 'Whether there are 3 usable photos.' }),
    advice: z.string().meta({ description: 'In a sentence.', example: '1 photo: add 2 more from other angles' }),
  })
  .meta({ id: 'EnrollmentSummary' });

/** The name as typed, kept beside the label. */
export const displayNameField = z
  .string({ error: 'must be text' })
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .refine((s) => !/[\u0000-\u001f\u007f-\u009f]/.test(s), 'must not contain control characters')
  .meta({
    description: 'The name as typed ("Marie Curie"), shown instead of the label; default the label as typed.',
    example: 'Marie Curie',
  });

/** The file name the image had on the uploader's side. */
export const originalNameField = z
  .string({ error: 'must be text' })
  .max(255, 'must be at most 255 characters')
  .meta({ description: "The image's file name on the uploader's side, kept and shown.", example: 'IMG_2041.jpg' });

export const imageCheckRequest = z
  .object({
    image: imageField,
    face: pickedFaceBox.optional().meta({ description: 'Check this face (one of several found) instead of the largest.' }),
  })
  .meta({ id: 'ImageCheckRequest' });

export const imageCheckResponse = z
  .object({
    check: photoCheck,
    faces: z.array(z.object({ x: z.number().int(), y: z.number().int(), w: z.number().int(), h: z.number().int() })).meta({
      description: 'Every face found, to pick from (send one as `face` with the upload).',
    }),
    width: z.number().int().meta({ description: 'The image as checked (upright), pixels.' }),
    height: z.number().int(),
  })
  .meta({ id: 'ImageCheckResponse' });
export type ImageCheckResponse = z.infer<typeof imageCheckResponse>;
