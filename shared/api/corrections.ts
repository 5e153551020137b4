/**
 * Corrections ("not this person", issue #26): a reviewer says a sighting's face is not the person it was named, and
 * the face is kept as a "not X" template that the decision rule uses (shared/recognition/corrections.ts): the same
 * face is `unknown` with the reason `corrected` from then on, and never verifies as X.
 */
import { z } from 'zod';
import { isoTime, RECOGNITION_MODELS, storableText, UNSTORABLE_MESSAGE } from './common.js';

const ID_MESSAGE = 'must be an id (1 to 100 letters, digits, "_" or "-")';
const idText = (what: string) => z.string({ error: `must be ${what}` }).regex(/^[A-Za-z0-9_-]{1,100}$/, ID_MESSAGE);

export const correctionId = idText("a correction's id").meta({
  description: 'A correction (`GET /api/corrections`).',
  example: 'c5d7e0f2-1a2b-4c3d-9e8f-001122334455',
});

/** `POST /api/corrections`. */
export const correctionRequest = z
  .object({
    sighting_id: idText("a sighting's id").meta({ description: 'The sighting whose face is not this person (`GET /api/sightings`).' }),
    label: z
      .string({ error: "must be the person's label" })
      .optional()
      .meta({ description: 'The person the face is not; normalised as on upload. Default: the name the sighting was given.' }),
  })
  .strict()
  .meta({ id: 'CorrectionRequest' });

export const correctionRecognizers = z
  .array(z.enum(RECOGNITION_MODELS))
  .meta({ description: 'The recognizers that use it: `lbph` always, `embedding` when its recognizer ran and described the face.' });

export const correction = z
  .object({
    id: correctionId,
    label: z.string().meta({ description: 'The person the face is not.' }),
    sighting_id: z.string().nullable().meta({ description: 'The sighting it was made from (null once that sighting is deleted).' }),
    action_id: z.string().nullable().meta({ description: 'The review action that made it (undo: `POST /api/review/actions/{id}/undo`).' }),
    created_at: isoTime,
    actor: z.string().nullable().meta({ description: 'Who made it (the signed-in user under AUTH_MODE=oidc).' }),
    recognizers: correctionRecognizers,
    descriptor_model: z.string().nullable().meta({ description: 'The descriptor model of its embedding template (null without one).' }),
  })
  .meta({ id: 'Correction', description: 'A face that is not this person, kept so it is not given their name again.' });
export type Correction = z.infer<typeof correction>;

export const correctionResponse = z
  .object({
    id: correctionId,
    action_id: z.string().meta({ description: 'The review action (kind `correct`), for undo.' }),
    label: z.string(),
    sighting_id: z.string(),
    recognizers: correctionRecognizers,
    created: z
      .boolean()
      .meta({ description: 'False when this sighting was already corrected for this person (that correction is answered).' }),
  })
  .meta({ id: 'CorrectionResponse' });

export const correctionsQuery = z.object({
  label: z
    .string({ error: 'must be text' })
    .refine(storableText, UNSTORABLE_MESSAGE)
    .optional()
    .meta({ description: "Only this person's corrections (normalised as on upload)." }),
});

export const correctionsResponse = z
  .object({
    corrections: z.array(correction).meta({ description: 'Newest first.' }),
    total: z.number().int(),
  })
  .meta({ id: 'CorrectionsResponse' });

export const correctionParams = z.object({ id: correctionId });

export const correctionDeleteResponse = z
  .object({
    deleted: z.string().meta({ description: 'The correction removed.' }),
    label: z.string(),
  })
  .meta({ id: 'CorrectionDeleteResponse' });
