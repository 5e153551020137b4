/**
 * Pieces every resource of the REST contract shares: the image field, the engine names, the error body.
 * Plain zod (no OpenAPI library) so the browser can import the contract; `.meta()` carries the component
 * names, descriptions and examples that the server's OpenAPI generator reads.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from './errors.js';

export const DETECTION_METHODS = ['local', 'remote'] as const;
export const RECOGNITION_MODELS = ['lbph', 'embedding'] as const;

export const detectionMethod = z
  .enum(DETECTION_METHODS)
  .meta({ id: 'DetectionMethod', description: '`local`: the cascade in this server; `remote`: the configured KServe detection server.' });
export type DetectionMethod = z.infer<typeof detectionMethod>;

export const recognitionModel = z
  .enum(RECOGNITION_MODELS)
  .meta({ id: 'RecognitionModel', description: '`lbph`: LBPH histograms; `embedding`: face-api.js descriptors.' });
export type RecognitionModel = z.infer<typeof recognitionModel>;

/** A tiny JPEG as a data URL, for examples only. */
export const EXAMPLE_IMAGE = 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8U...';

/** The image field of every JSON request that carries one (recognize, images, objects, chat). */
export const imageField = z.string({ error: 'must be the image as base64 text or a data URL' }).min(1, 'must not be empty').meta({
  description: 'The image (JPEG, PNG, WebP, GIF, TIFF, AVIF or HEIF) as plain base64 or as a data URL.',
  example: EXAMPLE_IMAGE,
});

/** ISO 8601 time as the server writes it. */
/**
 * Text the database cannot hold: U+0000 (PostgreSQL's text and jsonb refuse it) and half of a UTF-16 surrogate pair
 * on its own (not Unicode text; jsonb refuses its escape). Free text that reaches the database (a stored record, a
 * filter) is refused with a 400 naming the field, rather than failing there (a 500) or being stored altered.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching U+0000 is this pattern's purpose
export const UNSTORABLE_TEXT = /\u0000|[\ud800-\udfff]/u;
export const UNSTORABLE_MESSAGE = 'must not contain U+0000 or half of a surrogate pair';
/** Whether the database can hold this text (see UNSTORABLE_TEXT); for `.refine(storableText, UNSTORABLE_MESSAGE)`. */
export function storableText(text: string): boolean {
  return !UNSTORABLE_TEXT.test(text);
}

/** A query's `limit`: a whole number from 1 to `max`, `fallback` when absent (the review and people listings). */
export const limitOf = (max: number, fallback: number) => {
  const message = `must be a whole number from 1 to ${max}`;
  return z.coerce
    .number({ error: message })
    .int(message)
    .min(1, message)
    .max(max, message)
    .default(fallback)
    .meta({ description: `At most this many (default ${fallback}).`, example: fallback });
};

export const isoTime = z.string().meta({ description: 'ISO 8601 time.', example: '2024-05-01T12:00:00.000Z' });

const CODES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

/** What the OpenAPI document says before the description of every field kept for the original service's clients. */
export const COMPAT_PREFIX = 'Compatibility (original v1.2.0):';

/**
 * Marks a field that the original service (v1.2.0) answered, kept with its name and type so its clients (its web
 * frontend, its Keycloak extension, scripts against its FastAPI answers) keep working. In the OpenAPI document the
 * field's description starts with COMPAT_PREFIX and carries `x-compat: true`.
 */
export function compat<S extends z.ZodType>(schema: S, description: string): S {
  return schema.meta({ description: `${COMPAT_PREFIX} ${description}`, 'x-compat': true }) as S;
}

/** `{ "error": { "code", "message" }, "detail" }`: the body of every error answer. */
export const errorBody = z
  .object({
    detail: compat(z.string(), "the error's message, as FastAPI answered it (`{ detail }`); the same text as `error.message`."),
    error: z.object({
      code: z.enum(CODES).meta({ description: 'Stable identifier for programs.' }),
      message: z.string().meta({ description: 'A sentence for people.' }),
      details: z.unknown().optional().meta({ description: 'Extra data for some codes (e.g. `images_skipped` of `no_faces_found`).' }),
      request_id: z
        .string()
        .optional()
        .meta({ description: 'The id of the request (its `X-Request-Id` response header), to find its lines in the server log.' }),
    }),
  })
  .meta({ id: 'Error', description: 'The error body every endpoint answers with.' });
export type ErrorBody = z.infer<typeof errorBody>;

/** A binary body (an image, a model file); a string in the schema, bytes on the wire. */
export const binaryBody = z.string().meta({ format: 'binary', description: "The file's bytes." });

/**
 * Why a face is `unknown` (shared/recognition/confidence.ts decides it, for the server and the browser alike). Here
 * rather than in faces.ts: faceResult below carries it, and faces.ts imports this module.
 */
export const UNKNOWN_REASONS = {
  not_trained: 'The active recognizer has no trained model yet: train it (`POST /api/train`).',
  no_match:
    'Nobody the model knows is near: the nearest person is far past the limit (`candidate` names them when there is one), or the recognizer found nobody.',
  below_threshold:
    'Someone is near but not near enough: the nearest person (`candidate`) is just past the limit. Add photos of them, or raise the limit (`PUT /api/models/thresholds`).',
  ambiguous:
    'Two people are about equally near (the margin rule): the nearest (`candidate`) is not clearly nearer than the next, so no name is given.',
  copy_of_training_image:
    "The distance is below the window's start (LBPH 4 by default): the face is a pixel-exact copy of a training photo (a replayed photo, or a still camera frame), which is refused. Show a live face. Never given by the embedding recognizer, whose window starts at 0.",
  given_to_another_face:
    'The nearest person (`candidate`) was given to another face in the same picture that is nearer to them: one person is named at most once per picture.',
  low_quality:
    'The face is too small or too blurred to tell people apart (under the quality floors of `GET /api/models/thresholds`): `candidate` says who it would have been. Come closer, hold still, or add light.',
  corrected:
    'The face would have been named `candidate`, but it is at least as near to a face a reviewer said is not them (a correction, `POST /api/corrections`) as to their own samples: the same stranger is not given that name again.',
} as const;
export type UnknownReason = keyof typeof UNKNOWN_REASONS;

export const unknownReason = z
  .enum(Object.keys(UNKNOWN_REASONS) as [UnknownReason, ...UnknownReason[]], { error: 'must be one of the unknown reasons' })
  .meta({
    id: 'UnknownReason',
    description: `Present on every \`unknown\` face of a recognition: why it is unknown.\n${Object.entries(UNKNOWN_REASONS)
      .map(([code, text]) => `- \`${code}\`: ${text}`)
      .join('\n')}`,
    'x-enum-descriptions': UNKNOWN_REASONS,
  });

/** The nearest person of an `unknown` face: who it nearly was. */
export const faceCandidate = z
  .object({
    label: z.string({ error: 'must be text' }).min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
    confidence: z
      .number({ error: 'must be a number from 0 to 100' })
      .min(0, 'must be from 0 to 100')
      .max(100, 'must be from 0 to 100')
      .meta({
        description:
          "The nearest person's similarity in percent (the `confidence` they would have had if named; docs/recognition.md): a fixed map of `distance`, not moved by any threshold.",
      }),
    distance: z.number({ error: 'must be a number' }).meta({ description: 'Their raw distance (lower is closer).' }),
  })
  .meta({
    id: 'FaceCandidate',
    description: 'On an `unknown` face whose recognizer found someone: the nearest person, not named because of `reason`.',
  });
export type FaceCandidate = z.infer<typeof faceCandidate>;

/** One face in a recognition result (and in a stored result, where unknown fields are dropped). */
export const faceResult = z
  .object({
    x: z.number({ error: 'must be a number' }),
    y: z.number({ error: 'must be a number' }),
    w: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
    h: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
    label: z
      .string({ error: 'must be text' })
      .min(1, 'must not be empty')
      .max(100, 'must be at most 100 characters')
      .meta({ description: "The person's label, or `unknown`." }),
    confidence: z
      .number({ error: 'must be a number from 0 to 100' })
      .min(0, 'must be from 0 to 100')
      .max(100, 'must be from 0 to 100')
      .meta({
        description:
          "The face's similarity to the named person in percent, higher is nearer: a fixed map of `distance` per recognizer and descriptor model, anchored on the bench's calibration (60 at the calibrated default limit, 50 where 1% of impostor pairs pass; docs/recognition.md). No threshold moves it (since #36; before, it was relative to the limit in force). 0 for `unknown` (see `candidate`).",
      }),
    distance: z
      .number({ error: 'must be a number' })
      .optional()
      .meta({ description: "The recognizer's raw distance to the nearest known face (lower is closer); absent when untrained." }),
    certainty: z.enum(['high', 'unsure'], { error: 'must be high or unsure' }).optional().meta({
      description:
        'On named faces: `high` when the distance is within the sure bound, `unsure` between it and the limit (or when the face got its second-nearest person because the nearest went to a nearer face). Show `unsure` as "probably".',
    }),
    candidate: faceCandidate.optional(),
    // No description here: it would replace the reference to UnknownReason (its description says when it is present).
    reason: unknownReason.optional(),
  })
  .meta({
    id: 'FaceResult',
    description: 'One face; the box is in integer pixels of the submitted image.',
    example: { x: 120, y: 80, w: 96, h: 96, label: 'alice', confidence: 80.4, distance: 41.2 },
  });
export type FaceResult = z.infer<typeof faceResult>;
/** The name this schema had in contract.ts. */
export const faceResultSchema = faceResult;
