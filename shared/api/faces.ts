/** Faces: recognition (`POST /api/recognize`), training images per label (`/api/images`), labels. */
import { z } from 'zod';
import { cameraName } from './camera-names.js';
import { binaryBody, compat, detectionMethod, faceResult, imageField, isoTime, RECOGNITION_MODELS, recognitionModel } from './common.js';
import { removedCounts } from './deletions.js';
// #26 enrollment
import { displayNameField, enrollmentSummary, originalNameField, photoCheck, pickedFaceBox } from './enrollment.js';

export const recognizeRequest = z
  .object({
    image: imageField,
    recognition_model: z
      .enum([...RECOGNITION_MODELS, 'dlib'])
      .optional()
      .meta({
        description:
          'The recognizer for this request only (`dlib` is read as `embedding`); default the active one (`GET /api/models/config`). ' +
          'The identity provider asks for `embedding` whatever the kiosk uses. 409 `model_unavailable` when it cannot run here.',
      }),
    // #26 sightings
    source: z
      .enum(['api', 'page', 'camera'], { error: 'must be "api", "page" or "camera"' })
      .optional()
      .meta({
        description:
          'What sent the image, for the sightings kept (SIGHTINGS_SOURCES): `api` (default) an API client, `page` a photo on a page, ' +
          '`camera` live frames (one sighting per face track per SIGHTINGS_INTERVAL_S).',
      }),
    // #35 11: the rules of shared/api/camera-names.ts
    camera: cameraName.optional().meta({
      description:
        'The camera or device name, kept with the sightings (faces are tracked per camera): NFC, trimmed, 1 to 64 characters, ' +
        'no control, bidirectional, invisible or format characters, no `<` or `>`.',
      example: 'door',
    }),
  })
  .meta({ id: 'RecognizeRequest' });
export type RecognizeRequest = z.infer<typeof recognizeRequest>;

/** A face of `POST /api/recognize`: the original service said on each which detector found it. */
export const recognizedFace = faceResult
  .extend({
    detection_method: compat(detectionMethod.optional(), 'the detector that found this face (as the top-level `detection_method`).'),
  })
  .meta({ id: 'RecognizedFace' });
export type RecognizedFace = z.infer<typeof recognizedFace>;

export const recognizeResponse = z
  .object({
    faces: z.array(recognizedFace),
    count: z.number().int(),
    detection_method: detectionMethod,
    recognition_model: recognitionModel,
    trained: z.boolean().meta({ description: 'Whether the active recognizer was trained when this request ran.' }),
  })
  .meta({
    id: 'RecognizeResponse',
    example: {
      faces: [
        { x: 120, y: 80, w: 96, h: 96, label: 'alice', confidence: 80.4, distance: 41.2, certainty: 'high', detection_method: 'local' },
        {
          x: 300,
          y: 90,
          w: 90,
          h: 90,
          label: 'unknown',
          confidence: 0,
          distance: 92.4,
          reason: 'below_threshold',
          candidate: { label: 'bob', confidence: 37.3, distance: 92.4 },
          detection_method: 'local',
        },
      ],
      count: 2,
      detection_method: 'local',
      recognition_model: 'lbph',
      trained: true,
    },
  });
export type RecognizeResponse = z.infer<typeof recognizeResponse>;

/**
 * An upload's idempotency key (`capture_id` of `POST /api/images`): the image is stored as `<capture_id>.<ext>`
 * and a repeated upload with the same key for the same label stores nothing new.
 */
export const captureId = z
  .string({ error: 'must be text' })
  .regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 characters of letters, digits, "_" or "-"')
  .meta({ description: 'Idempotency key: a repeated upload with it for the same label stores nothing new.', example: 'c0ffee00-1234' });

const labelField = z
  .string({ error: "is required (the person's name)" })
  .meta({ description: "The person's name; trimmed, lower-cased, spaces become `-`.", example: 'Alice Smith' });

/** `POST /api/images` as JSON. */
export const imageUploadJson = z
  .object({
    label: labelField,
    image: imageField,
    capture_id: captureId.optional(),
    // #26 enrollment
    filename: originalNameField.optional(),
    display_name: displayNameField.optional(),
    face: pickedFaceBox
      .optional()
      .meta({ description: 'Of several faces, the one to store (its region, widened, becomes the training image).' }),
  })
  .meta({ id: 'ImageUploadJson' });

/** `POST /api/images` as multipart (how the web app uploads). Read by the route itself, part by part. */
export const imageUploadForm = z
  .object({
    label: labelField,
    file: binaryBody.meta({ description: 'The image file (the part may also be named `image`).' }),
    capture_id: captureId.optional(),
    // #26 enrollment (the file part's name is kept as the original file name)
    display_name: displayNameField.optional(),
    face: z
      .string()
      .optional()
      .meta({ description: 'JSON `{"x","y","w","h"}`: of several faces, the one to store.', example: '{"x":640,"y":210,"w":240,"h":240}' }),
  })
  .meta({ id: 'ImageUploadForm' });

export const imageUploadResponse = z
  .object({
    status: z.literal('ok'),
    label: z.string(),
    filename: z.string(),
    path: compat(z.string(), 'where the image is stored, relative to DATA_DIR (`images/<label>/<filename>`).'),
    duplicate: z
      .boolean()
      .optional()
      .meta({ description: 'Present with `capture_id`: true when it was already stored for this label, so nothing new was stored.' }),
    // #26 enrollment
    check: photoCheck,
    display_name: z.string().meta({ description: "The person's name as typed." }),
    original_name: z
      .string()
      .nullable()
      .meta({ description: "The file name on the uploader's side (multipart file name or JSON `filename`)." }),
  })
  .meta({
    id: 'ImageUploadResponse',
    example: {
      status: 'ok',
      label: 'alice-smith',
      filename: 'c0ffee00-1234.jpg',
      path: 'images/alice-smith/c0ffee00-1234.jpg',
      duplicate: false,
      check: {
        verdict: 'ok',
        message: 'Good photo: one clear face.',
        problems: [],
        faces: 1,
        face: { x: 180, y: 120, w: 240, h: 240 },
        picked: false,
        measures: { face_px: 240, face_share: 0.19, sharpness: 0.9, brightness: 115, highlights: 211, clipped: 0, eyes: 2, frontal: true },
      },
      display_name: 'Alice Smith',
      original_name: 'IMG_2041.jpg',
    },
  });
export type ImageUploadResponse = z.infer<typeof imageUploadResponse>;

export const storedImage = z
  .object({
    filename: z.string(),
    bytes: z.number().int(),
    created: isoTime.meta({ description: 'When the image was stored (ISO 8601).' }),
  })
  .meta({ id: 'StoredImage' });
export type StoredImage = z.infer<typeof storedImage>;

export const labelParams = z.object({
  label: z.string().meta({ description: "The person's label (normalised as on upload).", example: 'alice-smith' }),
});
export const imageFileParams = labelParams.extend({
  filename: z.string().meta({ description: 'A filename from `GET /api/images/{label}`.', example: 'c0ffee00-1234.jpg' }),
});

/**
 * A stored image's name as the server makes them (`<time>-<id>.<ext>`, `<capture_id>.<ext>`): letters, digits, `.`,
 * `_` and `-`, not starting with `.`, so a name never leaves its label's folder (no `/`, no `..`).
 */
export const STORED_FILENAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** `DELETE /api/images/{label}/{filename}`: the name is checked (400), where a GET just finds no such file. */
export const imageDeleteParams = labelParams.extend({
  filename: z
    .string()
    .regex(STORED_FILENAME, 'must be a stored image\'s name: letters, digits, ".", "_" or "-", not starting with "." (up to 200)')
    .meta({ description: 'A filename from `GET /api/images/{label}`.', example: 'c0ffee00-1234.jpg' }),
});

export const imageDeleteResponse = z
  .object({
    status: z.literal('ok'),
    label: z.string(),
    filename: z.string(),
    remaining: z.number().int().meta({ description: 'Images the label still has (0: the label is gone).' }),
    retrain_needed: z.boolean().meta({ description: "The trained model still holds this image's face until the next training run." }),
  })
  .meta({
    id: 'ImageDeleteResponse',
    example: { status: 'ok', label: 'alice-smith', filename: 'c0ffee00-1234.jpg', remaining: 4, retrain_needed: true },
  });
export type ImageDeleteResponse = z.infer<typeof imageDeleteResponse>;

export const labelImagesResponse = z
  .object({
    label: z.string(),
    images: compat(z.array(z.string()), 'the file names, oldest first (`files` has their sizes and times).'),
    files: z
      .array(
        // #26 enrollment
        storedImage.extend({
          original_name: z.string().nullable().meta({ description: "The file name on the uploader's side; null when not known." }),
          source: z
            .string()
            .meta({ description: '`upload`, `sighting` (assigned on the Faces page), or `unknown` (stored before this was kept).' }),
          check: photoCheck
            .nullable()
            .meta({ description: 'The photo check made when it was stored; null for images stored before checks.' }),
        }),
      )
      .meta({ description: 'The images, oldest first.' }),
    // #26 enrollment
    display_name: z.string(),
    enrollment: enrollmentSummary,
    count: z.number().int(),
  })
  .meta({ id: 'LabelImagesResponse' });
export type LabelImagesResponse = z.infer<typeof labelImagesResponse>;

export const labelDeleteResponse = z
  .object({
    status: z.literal('ok'),
    label: z.string(),
    deleted: z.number().int().meta({ description: 'Training images deleted (as `removed.images`).' }),
    retrain_needed: z.boolean().meta({
      description: 'Whether a trained model still knows this label; false once its templates are removed (no retraining needed).',
    }),
    // #26 deletion
    removed: removedCounts,
  })
  .meta({
    id: 'LabelDeleteResponse',
    example: {
      status: 'ok',
      label: 'alice-smith',
      deleted: 12,
      retrain_needed: false,
      removed: { images: 12, templates: 24, sightings: 40, corrections: 1, results: 7 },
    },
  });
export type LabelDeleteResponse = z.infer<typeof labelDeleteResponse>;

export const labelSummary = z
  .object({
    label: z.string(),
    images: z.number().int(),
    trained: z.boolean().meta({ description: 'Whether the current trained model knows this label.' }),
    // #26 enrollment
    display_name: z.string().meta({ description: 'The name as typed ("Marie Curie"); the label when none was kept.' }),
    enrollment: enrollmentSummary,
  })
  .meta({ id: 'LabelSummary' });
export type LabelSummary = z.infer<typeof labelSummary>;

export const labelsResponse = z
  .object({
    labels: z.array(z.string()).meta({ description: 'Labels with stored images, sorted.' }),
    count: z.number().int(),
    details: z.array(labelSummary),
  })
  .meta({
    id: 'LabelsResponse',
    example: {
      labels: ['alice-smith'],
      count: 1,
      details: [
        {
          label: 'alice-smith',
          images: 1,
          trained: true,
          display_name: 'Alice Smith',
          enrollment: { photos: 1, good: 1, problems: 0, unchecked: 0, enough: false, advice: '1 photo: add 2 more from other angles' },
        },
      ],
    },
  });
export type LabelsResponse = z.infer<typeof labelsResponse>;
