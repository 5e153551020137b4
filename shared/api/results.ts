/**
 * The results history: `POST /api/results` stores results captured on devices (all or nothing), `GET
 * /api/results` reads them newest first.
 */
import { z } from 'zod';
import { cameraName } from './camera-names.js';
import { DETECTION_METHODS, faceResult, RECOGNITION_MODELS, UNSTORABLE_MESSAGE, UNSTORABLE_TEXT, storableText } from './common.js';
import { detectedObject } from './objects.js';

/** Largest number of faces / objects one stored result may carry (keeps the bounded history bounded in bytes). */
export const RESULT_MAX_FACES = 100;
export const RESULT_MAX_OBJECTS = 300;
/** Records one `POST /api/results` may carry. */
export const RESULTS_BATCH_MAX = 100;

const imageSide = z
  .number({ error: 'must be a whole number of pixels' })
  .int('must be a whole number of pixels')
  .min(1, 'must be at least 1')
  .max(100_000, 'must be at most 100000');

/** #26 sightings: a face of a browser's result may carry its crop (base64 JPEG, at most 32 KB), kept as a sighting. */
export const RESULT_CROP_MAX_BYTES = 32 * 1024;
const cropField = z
  .string({ error: 'must be a base64 JPEG' })
  .max(Math.ceil(RESULT_CROP_MAX_BYTES / 3) * 4 + 32, `must be at most ${RESULT_CROP_MAX_BYTES / 1024} KB of JPEG`)
  .regex(/^(data:image\/jpeg;base64,)?[A-Za-z0-9+/]+={0,2}$/, 'must be a base64 JPEG (plain or a data:image/jpeg;base64, URL)')
  .optional()
  .meta({
    description:
      'The face crop (the box widened by 40% each side, JPEG, at most 32 KB) as base64: kept as a sighting (source `browser`) ' +
      'when SIGHTINGS_SOURCES has `browser`; never stored with the result.',
  });
/** The paths of the strings in `value` that the database cannot store. */
function unstorableStrings(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return UNSTORABLE_TEXT.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => unstorableStrings(v, [...path, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => unstorableStrings(v, [...path, k]));
  return [];
}

export const resultFaceInput = faceResult.extend({ crop: cropField }).meta({ id: 'ResultFaceInput' });

const recordFields = z.object({
  id: z
    .string({ error: "must be the record's unique id (a UUID)" })
    .regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be a UUID (8 to 64 characters of letters, digits, "_" or "-")')
    .meta({ description: 'Client-made unique id (a UUID): the dedup key, so a re-sent record is not stored twice.' }),
  kind: z.enum(['recognition', 'objects'], { error: 'must be "recognition" or "objects"' }),
  captured_at: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 time such as 2024-05-01T12:00:00.000Z' })
    .meta({ description: 'ISO 8601 time on the device.' }),
  source: z
    .string({ error: 'must be text' })
    .max(64, 'must be at most 64 characters')
    .optional()
    .meta({ description: 'Device / kiosk name.' }),
  engine: z.enum(['browser', 'server'], { error: 'must be "browser" or "server"' }),
  backend: z
    .string({ error: 'must be text' })
    .max(32, 'must be at most 32 characters')
    .optional()
    .meta({ description: 'webgpu, webgl, wasm, cpu, ...' }),
  detection_method: z.enum(DETECTION_METHODS, { error: 'must be "local" or "remote"' }).optional(),
  recognition_model: z.enum(RECOGNITION_MODELS, { error: 'must be "lbph" or "embedding"' }).optional(),
  model_version: z
    .string({ error: 'must be text' })
    .max(128, 'must be at most 128 characters')
    .optional()
    .meta({
      description:
        'For kind `recognition`: the trained models version the device recognised with (the `version` of GET /api/models/trained, ' +
        'or its own for a model trained on the device); its sightings keep it.',
    }),
  image_width: imageSide.optional(),
  image_height: imageSide.optional(),
  faces: z
    .array(faceResult, { error: 'must be a list of faces' })
    .max(RESULT_MAX_FACES, `must hold at most ${RESULT_MAX_FACES} faces`)
    .optional()
    .meta({ description: 'For kind `recognition`.' }),
  objects: z
    .array(detectedObject, { error: 'must be a list of objects' })
    .max(RESULT_MAX_OBJECTS, `must hold at most ${RESULT_MAX_OBJECTS} objects`)
    .optional()
    .meta({ description: 'For kind `objects`.' }),
});

const EXAMPLE_RECORD = {
  id: '5b0f7c1e-8d4a-4c55-9a61-0c2f8e7b9d10',
  kind: 'recognition',
  captured_at: '2024-05-01T12:00:00.000Z',
  source: 'kiosk-1',
  engine: 'browser',
  backend: 'webgl',
  recognition_model: 'lbph',
  faces: [{ x: 120, y: 80, w: 96, h: 96, label: 'alice-smith', confidence: 87.5 }],
};

/** One recognition or object-detection result captured on a device (`POST /api/results`). */
export const resultRecordInput = recordFields
  .extend({
    // #35 11: the rules of shared/api/camera-names.ts (records stored before them are answered as they were stored)
    source: cameraName.optional().meta({
      description:
        'Device / kiosk name: NFC, trimmed, 1 to 64 characters, no control, bidirectional, invisible or format characters, no `<` or `>`.',
    }),
    faces: z
      .array(resultFaceInput, { error: 'must be a list of faces' })
      .max(RESULT_MAX_FACES, `must hold at most ${RESULT_MAX_FACES} faces`)
      .optional()
      .meta({ description: 'For kind `recognition`; each face may carry its `crop`.' }),
  })
  .superRefine((r, ctx) => {
    // A record holds the results of its kind only, so a reader never has to guess which list counts.
    if (r.kind === 'recognition' && r.objects !== undefined)
      ctx.addIssue({ code: 'custom', path: ['objects'], message: 'is only for kind "objects"' });
    if (r.kind === 'objects' && r.faces !== undefined)
      ctx.addIssue({ code: 'custom', path: ['faces'], message: 'is only for kind "recognition"' });
    for (const path of unstorableStrings(r)) ctx.addIssue({ code: 'custom', path, message: UNSTORABLE_MESSAGE });
  })
  .meta({ id: 'ResultRecordInput', example: EXAMPLE_RECORD });
export type ResultRecordInput = z.infer<typeof resultRecordInput>;

export const resultRecord = recordFields
  .extend({ received_at: z.string().meta({ description: 'ISO 8601 time the server stored it.' }) })
  .meta({ id: 'ResultRecord', example: { ...EXAMPLE_RECORD, received_at: '2024-05-01T12:00:01.250Z' } });
export type ResultRecord = z.infer<typeof resultRecord>;

/** `POST /api/results` body: 1 to 100 records; when any is invalid, none is stored. */
export const resultsPostRequest = z
  .object({
    results: z
      .array(resultRecordInput, { error: 'must be a list of result records' })
      .min(1, 'must hold at least one record')
      .max(RESULTS_BATCH_MAX, `must hold at most ${RESULTS_BATCH_MAX} records per request`),
  })
  .meta({ id: 'ResultsPostRequest' });

export const resultsPostResponse = z
  .object({
    status: z.literal('ok'),
    accepted: z.number().int().meta({ description: 'Records stored by this request.' }),
    duplicates: z.number().int().meta({ description: 'Records already stored before (or twice in this request), not stored again.' }),
    total: z.number().int().meta({ description: 'Records in the history now.' }),
  })
  .meta({ id: 'ResultsPostResponse', example: { status: 'ok', accepted: 1, duplicates: 0, total: 42 } });
export type ResultsPostResponse = z.infer<typeof resultsPostResponse>;

const LIMIT_MESSAGE = 'must be a whole number from 1 to 1000';

/** `GET /api/results?limit&kind&label`. */
export const resultsQuery = z.object({
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int(LIMIT_MESSAGE)
    .min(1, LIMIT_MESSAGE)
    .max(1000, LIMIT_MESSAGE)
    .default(100)
    .meta({ description: 'Most records to return, newest first.', example: 20 }),
  kind: z.enum(['recognition', 'objects'], { error: 'must be "recognition" or "objects"' }).optional(),
  label: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(storableText, UNSTORABLE_MESSAGE)
    .optional()
    .meta({ description: 'Only records with a face of this label.' }),
});
export type ResultsQuery = z.input<typeof resultsQuery>;

export const resultsListResponse = z
  .object({
    results: z.array(resultRecord).meta({ description: 'Newest first (most recently received).' }),
    count: z.number().int().meta({ description: 'Records in `results`.' }),
    matched: z.number().int().meta({ description: 'Records matching the filters (at most `total`).' }),
    total: z.number().int().meta({ description: 'Records in the history.' }),
    max: z.number().int().meta({ description: "The history's bound (RESULTS_MAX): older records are dropped first." }),
  })
  .meta({ id: 'ResultsListResponse' });
export type ResultsListResponse = z.infer<typeof resultsListResponse>;
