/**
 * The compact trained models for browsers (#27 section 2): `GET /api/models/trained/compact` lists the kiosk
 * gallery's people with the hash of each one's segment (shared/recognition/compact-model.ts), and
 * `GET /api/models/trained/compact/segments?hashes=...` answers the segments asked for, so a device fetches only
 * the people it does not have yet.
 */
import { z } from 'zod';
import { isoTime } from './common.js';
import { trainedModelFile } from './models.js';

// Kept with the codec, which has no zod: the service worker's bundle reads them (client/src/pwa/keep-model.ts).
export { COMPACT_SEGMENTS_MAX, COMPACT_SEGMENTS_URL } from '../recognition/compact-model.js';

const segmentRef = z.object({
  label: z.string(),
  hash: z.string().meta({ description: "The segment's name: the first 16 hex digits of its sha256 (immutable content)." }),
  bytes: z.number().int().meta({ description: "The segment's size, uncompressed." }),
  samples: z.number().int(),
});
export type CompactSegmentRef = z.infer<typeof segmentRef>;

const wireBytes = z
  .number()
  .int()
  .optional()
  .meta({ description: 'The segments gzip-compressed one by one, in all: about what a device downloads.' });

export const compactModelManifest = z
  .object({
    format: z.literal('lookout-compact'),
    format_version: z
      .number()
      .int()
      .meta({ description: 'The newest segment format in use: 1 (float32 descriptors, older servers) or 2 (float16 descriptors).' }),
    version: z.string().meta({ description: 'As `GET /api/models/trained` `version` (also the ETag): the models and their corrections.' }),
    models_version: z.string().meta({ description: "The model files' own version." }),
    trained_at: isoTime.nullable(),
    labels: z.array(z.string()),
    segments_url: z.string(),
    lbph: z
      .object({
        radius: z.number().int(),
        neighbors: z.number().int(),
        grid_x: z.number().int(),
        grid_y: z.number().int(),
        threshold: z.number(),
        face_alignment: z.string().nullable(),
        people: z.array(segmentRef).meta({ description: 'In label-id order: the assembled model numbers them 0, 1, ...' }),
        wire_bytes: wireBytes,
      })
      .nullable(),
    embedding: z
      .object({
        descriptor_model: z.string(),
        dim: z.number().int(),
        people: z.array(segmentRef),
        wire_bytes: wireBytes,
      })
      .nullable(),
    corrections: trainedModelFile
      .extend({ count: z.number().int() })
      .meta({ description: 'The corrections file of `GET /api/models/trained` (fetched as there).' }),
  })
  .meta({ id: 'CompactModelManifest' });
export type CompactModelManifest = z.infer<typeof compactModelManifest>;

export const compactSegmentsQuery = z.object({
  hashes: z
    .string()
    .regex(/^[0-9a-f]{16}(,[0-9a-f]{16}){0,199}$/, 'a comma-separated list of 1 to 200 segment hashes (16 hex digits each)')
    .meta({ description: 'The segments wanted, comma-separated.' }),
});
