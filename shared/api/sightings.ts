/**
 * Sightings (`/api/sightings`): faces the recognitions saw, each with a small JPEG crop, the time, where it came from
 * and the decision made, kept for review (SIGHTINGS_* settings say what is kept and for how long).
 */
import { z } from 'zod';
import { isoTime, storableText, UNSTORABLE_MESSAGE } from './common.js';

/** Where a sighting came from. */
export const SIGHTING_SOURCES = ['api', 'page', 'camera', 'browser', 'verify'] as const;
export type SightingSource = (typeof SIGHTING_SOURCES)[number];

export const sightingSource = z.enum(SIGHTING_SOURCES, { error: `must be one of ${SIGHTING_SOURCES.join(', ')}` }).meta({
  id: 'SightingSource',
  description:
    '`api`: POST /api/recognize by an API client; `page`: a photo analysed on a page, on the server; `camera`: live frames on the ' +
    'server (one sighting per face track per SIGHTINGS_INTERVAL_S); `browser`: recognised in a browser and synced through ' +
    'POST /api/results; `verify`: POST /api/verify (the second factor).',
});

/** Most sightings one page of `GET /api/sightings` holds. */
export const SIGHTINGS_PAGE_MAX = 200;

/** A face crop sent with a browser result (`POST /api/results`): base64 JPEG of at most this many bytes. */
export const CROP_MAX_BYTES = 32 * 1024;

export const sightingBox = z
  .object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() })
  .meta({ id: 'SightingBox', description: 'The face box in pixels of the image it was found in.' });

export const sighting = z
  .object({
    id: z.string(),
    seen_at: isoTime.meta({ description: 'When the face was seen (for `browser`, the time on the device).' }),
    source: sightingSource,
    client: z.string().nullable().meta({ description: 'Who sent it: the signed-in user or client under AUTH_MODE=oidc; null otherwise.' }),
    camera: z.string().nullable().meta({ description: 'The camera or device name the request gave, if any.' }),
    label: z.string().nullable().meta({ description: 'The name it was given; null for an unknown face.' }),
    candidate: z.string().nullable().meta({ description: 'On an unknown face: the nearest person, not named.' }),
    distance: z.number().nullable().meta({ description: "The recognizer's distance (lower is closer)." }),
    confidence: z.number().nullable().meta({ description: 'The score in percent, as the recognition answered.' }),
    certainty: z.string().nullable().meta({ description: '`high` or `unsure` on a named face.' }),
    reason: z.string().nullable().meta({ description: 'Why it is unknown (an UnknownReason), or the verification reason for `verify`.' }),
    recognizer: z.string().meta({ description: '`lbph` or `embedding` (`browser`: as the device said, else `unknown`).' }),
    model_version: z
      .string()
      .nullable()
      .meta({ description: 'The trained models version the decision was made with (server recognitions).' }),
    box: sightingBox,
    group_id: z.string().nullable().meta({ description: 'The group of likeness on the Faces page (unknown faces).' }),
    dismissed: z.boolean().meta({ description: 'Dismissed on the Faces page.' }),
    assigned_label: z.string().nullable().meta({ description: 'The person this face was assigned to on the Faces page.' }),
    crop_url: z.string().meta({ description: 'Where its JPEG crop is: `/api/sightings/{id}/crop`.' }),
  })
  .meta({
    id: 'Sighting',
    example: {
      id: '0d9b8f0e-5c57-4c1e-9c39-7a4f1b9d2c11',
      seen_at: '2024-05-01T14:02:00.000Z',
      source: 'camera',
      client: null,
      camera: 'door',
      label: null,
      candidate: 'alice-smith',
      distance: 0.52,
      confidence: 48.1,
      certainty: null,
      reason: 'below_threshold',
      recognizer: 'embedding',
      model_version: '3f2a9c',
      box: { x: 120, y: 80, w: 96, h: 96 },
      group_id: null,
      dismissed: false,
      assigned_label: null,
      crop_url: '/api/sightings/0d9b8f0e-5c57-4c1e-9c39-7a4f1b9d2c11/crop',
    },
  });
export type Sighting = z.infer<typeof sighting>;

const time = (what: string) =>
  z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 time such as 2024-05-01T12:00:00.000Z' })
    .optional()
    .meta({ description: what, example: '2024-05-01T12:00:00.000Z' });

const LIMIT_MESSAGE = `must be a whole number from 1 to ${SIGHTINGS_PAGE_MAX}`;

/** `GET /api/sightings` query. */
export const sightingsQuery = z.object({
  label: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(storableText, UNSTORABLE_MESSAGE)
    .optional()
    .meta({ description: 'Only faces given this label.' }),
  unknown: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .meta({ description: '`true`: only unknown faces (no label given).' }),
  from: time('Only sightings at or after this time.'),
  to: time('Only sightings before this time.'),
  source: sightingSource.optional().meta({ description: 'Only sightings from this source.' }),
  group: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(storableText, UNSTORABLE_MESSAGE)
    .optional()
    .meta({
      description: 'Only sightings of this group (Faces page).',
    }),
  include_dismissed: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .meta({ description: '`true`: dismissed sightings too (default: left out).' }),
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int(LIMIT_MESSAGE)
    .min(1, LIMIT_MESSAGE)
    .max(SIGHTINGS_PAGE_MAX, LIMIT_MESSAGE)
    .default(50)
    .meta({ description: 'Most sightings on this page, newest first.', example: 50 }),
  cursor: z.string().max(500, 'must be a next_cursor of an earlier answer').optional().meta({
    description: "The previous page's `next_cursor`: the page after it.",
  }),
});
export type SightingsQuery = z.input<typeof sightingsQuery>;

export const sightingsResponse = z
  .object({
    sightings: z.array(sighting).meta({ description: 'Newest first.' }),
    next_cursor: z.string().nullable().meta({ description: 'The `cursor` of the next page; null on the last page.' }),
    total_matched: z.number().int().meta({ description: 'Sightings matching the filters, on every page.' }),
  })
  .meta({ id: 'SightingsResponse' });
export type SightingsResponse = z.infer<typeof sightingsResponse>;

export const sightingParams = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be a sighting id')
    .meta({ description: 'The sighting id.', example: '0d9b8f0e-5c57-4c1e-9c39-7a4f1b9d2c11' }),
});

export const sightingDeleteResponse = z
  .object({ status: z.literal('ok'), id: z.string(), deleted: z.number().int().meta({ description: '1: removed with its crop.' }) })
  .meta({ id: 'SightingDeleteResponse', example: { status: 'ok', id: '0d9b8f0e-5c57-4c1e-9c39-7a4f1b9d2c11', deleted: 1 } });
export type SightingDeleteResponse = z.infer<typeof sightingDeleteResponse>;

/** `DELETE /api/sightings?before=`. */
export const sightingsPurgeQuery = z.object({
  before: z.iso
    .datetime({ offset: true, error: 'is required: an ISO 8601 time such as 2024-05-01T12:00:00.000Z' })
    .meta({ description: 'Sightings seen before this time are removed, with their crops.', example: '2024-05-01T00:00:00.000Z' }),
});

export const sightingsPurgeResponse = z
  .object({ status: z.literal('ok'), deleted: z.number().int().meta({ description: 'Sightings removed.' }) })
  .meta({ id: 'SightingsPurgeResponse', example: { status: 'ok', deleted: 42 } });
export type SightingsPurgeResponse = z.infer<typeof sightingsPurgeResponse>;

/** #36 4: GET /api/sightings/status. */
export const sightingsStatusResponse = z
  .object({
    enabled: z.boolean().meta({ description: 'SIGHTINGS_ENABLED.' }),
    queued: z.number().int().meta({ description: "Jobs waiting (one recognition's faces, or one camera's newest frame)." }),
    dropped: z.number().int().meta({ description: 'Jobs dropped since the start (the oldest first: a full queue, or shutdown).' }),
    stored: z.number().int().meta({ description: 'Sightings stored since the start.' }),
    failed: z.number().int().meta({ description: 'Sightings that could not be stored since the start (logged).' }),
  })
  .meta({ id: 'SightingsStatusResponse', example: { enabled: true, queued: 3, dropped: 0, stored: 1250, failed: 0 } });
export type SightingsStatusResponse = z.infer<typeof sightingsStatusResponse>;
