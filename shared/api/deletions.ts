/** People deleted (DELETE /api/images/{label}), for devices to drop what they still queue of them: GET /api/deletions. */
import { z } from 'zod';

const LIMIT_MESSAGE = 'must be a whole number from 1 to 1000';

/** `GET /api/deletions?since&limit`. */
export const deletionsQuery = z.object({
  since: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 time, e.g. 2024-05-01T12:00:00Z' })
    .optional()
    .meta({ description: 'Only deletions at or after this time.', example: '2024-05-01T00:00:00Z' }),
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int(LIMIT_MESSAGE)
    .min(1, LIMIT_MESSAGE)
    .max(1000, LIMIT_MESSAGE)
    .default(1000)
    .meta({ description: 'Most deletions to return, newest first.', example: 100 }),
});

export const deletedPerson = z
  .object({
    label: z.string(),
    deleted_at: z
      .string()
      .meta({ description: 'ISO 8601 time of the deletion: photos and results of this person made before it are dropped.' }),
  })
  .meta({ id: 'DeletedPerson' });
export type DeletedPerson = z.infer<typeof deletedPerson>;

export const deletionsResponse = z
  .object({ deleted: z.array(deletedPerson).meta({ description: 'Newest first.' }) })
  .meta({ id: 'DeletionsResponse', example: { deleted: [{ label: 'alice-smith', deleted_at: '2024-05-01T12:00:00.000Z' }] } });
export type DeletionsResponse = z.infer<typeof deletionsResponse>;

/** What a person's deletion removed, per kind of data (DELETE /api/images/{label}'s `removed`). */
export const removedCounts = z
  .object({
    images: z.number().int().meta({ description: 'Training images.' }),
    templates: z
      .number()
      .int()
      .meta({ description: 'Samples in the trained models (LBPH and embedding), rewritten without them: no retraining needed.' }),
    sightings: z.number().int().meta({ description: 'Sightings, with their face crops.' }),
    corrections: z.number().int().meta({ description: '"Not this person" corrections.' }),
    results: z.number().int().meta({ description: 'Stored results naming them.' }),
  })
  .meta({ id: 'RemovedCounts', description: 'What was removed of the person, everywhere.' });
