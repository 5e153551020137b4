/**
 * #36 2: a person's page (`GET /api/people/{label}`) and what can be done on it: rename (the display name; the label
 * stays the stable id), cover photo, merge into another person, move photos to another person, each undoable
 * (`POST /api/person-actions/{id}/undo`) and in the audit log; and search by face (`POST /api/sightings/search`).
 */
import { z } from 'zod';
import { imageField, isoTime, storableText, UNSTORABLE_MESSAGE, limitOf } from './common.js';
import { STORED_FILENAME } from './faces.js';
import { reviewSightingId } from './review.js';
import { sightingSource } from './sightings.js';

/** Most photos one move may name. */
export const MOVE_MAX_PHOTOS = 500;
/** Most sightings a person's page lists (the newest), and a face search answers. */
export const PERSON_SIGHTINGS_MAX = 200;
export const FACE_SEARCH_MAX = 200;

const storedFilename = z
  .string({ error: "must be a stored photo's file name" })
  .regex(STORED_FILENAME, 'must be a stored image\'s name: letters, digits, ".", "_" or "-", not starting with "." (up to 200)');

const displayName = z
  .string({ error: 'must be text' })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine(storableText, UNSTORABLE_MESSAGE);

export const personPageQuery = z.object({ sightings: limitOf(PERSON_SIGHTINGS_MAX, 50) });

export const personPhoto = z.object({
  filename: z.string(),
  url: z.string().meta({ description: '`/api/images/{label}/{filename}`.' }),
  created: isoTime,
  source: z.string().nullable().meta({ description: '`upload`, `sighting` (assigned on the Faces page), ...; null: not recorded.' }),
  original_name: z.string().nullable(),
  verdict: z.string().nullable().meta({ description: "The photo check's verdict when it was stored (`ok`, ...); null: unchecked." }),
});

export const personSighting = z.object({
  id: z.string(),
  seen_at: isoTime,
  source: sightingSource,
  camera: z.string().nullable(),
  how: z.enum(['recognised', 'assigned']).meta({
    description: '`recognised`: the recognition named this person; `assigned`: a reviewer assigned the face to them.',
  }),
  distance: z.number().nullable(),
  crop_url: z.string(),
});

export const personPageResponse = z
  .object({
    label: z.string().meta({ description: 'The stable id: the URL, the folder, the models. A rename changes the display name only.' }),
    display_name: z.string(),
    created_at: isoTime.nullable(),
    kiosk: z.boolean(),
    cover: z.string().nullable().meta({ description: "The cover photo's file name (chosen, else the first photo; null: no photos)." }),
    cover_chosen: z.boolean(),
    photos: z.array(personPhoto),
    sightings: z.array(personSighting).meta({ description: 'The newest sightings recognised as or assigned to this person.' }),
    sightings_total: z.number().int(),
    trained: z.boolean().meta({ description: 'Whether the trained models hold this label now.' }),
  })
  .meta({ id: 'PersonPage' });
export type PersonPageResponse = z.infer<typeof personPageResponse>;

export const personRenameRequest = z.object({ display_name: displayName }).meta({ id: 'PersonRenameRequest' });
export const personCoverRequest = z
  .object({ filename: storedFilename.nullable().meta({ description: "One of the person's photos; null: back to the first photo." }) })
  .meta({ id: 'PersonCoverRequest' });
export const personMergeRequest = z
  .object({
    into: z.string({ error: 'must be the label of the person to keep' }).min(1).max(200).meta({
      description: 'The person who stays (their label and name); this one is merged into them.',
    }),
  })
  .meta({ id: 'PersonMergeRequest' });
export const personMoveRequest = z
  .object({
    filenames: z.array(storedFilename).min(1, 'name at least one photo').max(MOVE_MAX_PHOTOS, `at most ${MOVE_MAX_PHOTOS} photos`),
    to: z.string({ error: "must be the other person's label" }).min(1).max(200).meta({
      description: 'The label of the person the photos go to; a new person when nobody has it and `display_name` is given.',
    }),
    display_name: displayName.optional().meta({ description: 'The name of a new person (when `to` is nobody yet).' }),
  })
  .meta({ id: 'PersonMoveRequest' });

export const PERSON_ACTION_KINDS = ['rename', 'cover', 'merge', 'move'] as const;
export type PersonActionKind = (typeof PERSON_ACTION_KINDS)[number];

export const personActionResponse = z
  .object({
    action_id: z.string().meta({ description: 'Undo with `POST /api/person-actions/{action_id}/undo`.' }),
    kind: z.enum(PERSON_ACTION_KINDS),
    label: z.string().meta({ description: 'The person it was done on (after a merge or a move: the one who has the photos now).' }),
    display_name: z.string(),
    moved: z
      .object({
        photos: z.number().int(),
        sightings: z.number().int(),
        corrections: z.number().int(),
        results: z.number().int().optional().meta({
          description:
            'Merge: stored recognition results (`GET /api/results`) whose faces named the merged person (or had them as `candidate`), now naming `label`; its undo names them back.',
        }),
      })
      .optional()
      .meta({ description: 'Merge and move: what went over to `label`.' }),
    files: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: "Merge and move: each photo's file name before -> after (a name already taken gets a new one)." }),
    retrain_needed: z.boolean().meta({
      description:
        'Whether the models need a training (`POST /api/train`) to answer as the photos now are: a move, and a merge whose ' +
        "models did not know the merged person (a merge relabels the trained models' samples at once).",
    }),
  })
  .meta({ id: 'PersonActionResponse' });
export type PersonActionResponse = z.infer<typeof personActionResponse>;

export const personActionParams = z.object({
  id: z
    .string()
    .regex(/^p-[A-Za-z0-9-]{1,100}$/, "must be a person action's id")
    .meta({ example: 'p-5b0f7c1e' }),
});
export const personUndoRequest = z.object({}).loose().meta({ id: 'PersonUndoRequest', description: 'Empty or `{}`.' });
export const personUndoResponse = z
  .object({
    action_id: z.string(),
    kind: z.enum(PERSON_ACTION_KINDS),
    label: z.string(),
    undone_at: isoTime,
    retrain_needed: z.boolean(),
    restored: z.number().int().meta({ description: 'Merge and move: the photos moved back.' }),
    missing: z.array(z.string()).meta({ description: 'Merge and move: photos deleted since, which could not be moved back.' }),
  })
  .meta({ id: 'PersonUndoResponse' });
export type PersonUndoResponse = z.infer<typeof personUndoResponse>;

export const faceSearchRequest = z
  .object({
    sighting_id: reviewSightingId.optional().meta({ description: "A sighting's face." }),
    label: z.string().min(1).max(200).optional().meta({ description: 'With `filename`: a stored photo of this person.' }),
    filename: storedFilename.optional(),
    image: imageField.optional().meta({ description: 'An image (base64 or a data URL): its largest face.' }),
    limit: limitOf(FACE_SEARCH_MAX, 50),
  })
  .superRefine((v, ctx) => {
    const given = [v.sighting_id !== undefined, v.label !== undefined || v.filename !== undefined, v.image !== undefined].filter(Boolean);
    if (given.length !== 1) ctx.addIssue({ code: 'custom', message: 'give one face: sighting_id, or label with filename, or image' });
    else if ((v.label === undefined) !== (v.filename === undefined))
      ctx.addIssue({ code: 'custom', message: 'label and filename go together' });
  })
  .meta({ id: 'FaceSearchRequest' });

export const faceSearchResponse = z
  .object({
    results: z.array(
      z.object({
        sighting_id: z.string(),
        distance: z.number().meta({ description: 'Euclidean distance of the descriptors; the nearest first.' }),
        seen_at: isoTime,
        source: sightingSource,
        camera: z.string().nullable(),
        label: z.string().nullable().meta({ description: 'Who the recognition named (or the reviewer assigned); null: unknown.' }),
        crop_url: z.string(),
      }),
    ),
    max_distance: z.number().meta({ description: 'Only faces within this distance (the embedding rule`s limit) are answered.' }),
    searched: z.number().int().meta({ description: 'Sightings with a descriptor that were compared.' }),
  })
  .meta({ id: 'FaceSearchResponse' });
export type FaceSearchResponse = z.infer<typeof faceSearchResponse>;
