/**
 * Review of what the service saw (the Faces page): unknown faces grouped by likeness, known sightings by person,
 * and the reviewer's actions (assign faces to a person as training images, dismiss, undo until the next training).
 */
import { z } from 'zod';
import { isoTime, storableText, UNSTORABLE_MESSAGE, limitOf } from './common.js';
import { photoCheck } from './enrollment.js';

/** Most sightings one assign or dismiss may name. */
export const REVIEW_MAX_SIGHTINGS = 500;

const ISO_MESSAGE = 'must be an ISO 8601 time such as 2024-05-01T12:00:00.000Z';
const isoQuery = z.iso.datetime({ offset: true, error: ISO_MESSAGE });

export const reviewSightingId = z
  .string({ error: "must be a sighting's id" })
  .regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be a sighting\'s id (letters, digits, "_" or "-")');

export const reviewGroupId = z
  .string({ error: "must be a group's id" })
  .regex(/^[A-Za-z0-9_-]{1,110}$/, 'must be a group\'s id (letters, digits, "_" or "-")')
  .meta({ description: 'A group of unknown faces (`GET /api/review/groups`); stable while its faces are kept.' });

/** `GET /api/review/groups?since&limit`. */
export const reviewGroupsQuery = z.object({
  since: isoQuery.optional().meta({ description: 'Only faces seen at or after this time.' }),
  limit: limitOf(200, 50),
});

export const reviewGroup = z
  .object({
    id: reviewGroupId,
    count: z.number().int().meta({ description: 'Faces in the group (unknown, not dismissed, not assigned).' }),
    first_seen: isoTime,
    last_seen: isoTime,
    sample_ids: z
      .array(z.string())
      .meta({ description: 'Up to 8 of its sightings, newest first (their crops: `GET /api/sightings/{id}/crop`).' }),
    sources: z.array(z.string()).meta({ description: 'Where its faces were seen (api, page, camera, browser, verify).' }),
    coherent: z.boolean().meta({
      description:
        'Whether its faces agree with each other (every two within the grouping limit, and near on average). A group that does not is ' +
        'never assigned whole (`group_id`: 409 `group_not_coherent`): pick the faces of one person (`sighting_ids`).',
    }),
    not_coherent_because: z
      .string()
      .nullable()
      .meta({ description: 'Why its faces may be more than one person, in words; null when `coherent`.' }),
    max_face_distance: z
      .number()
      .nullable()
      .meta({ description: 'The largest distance between two of its faces (descriptor units); null with fewer than two described faces.' }),
  })
  .meta({ id: 'ReviewGroup', description: 'Unknown faces alike enough to be one person.' });
export type ReviewGroup = z.infer<typeof reviewGroup>;

export const reviewGroupsResponse = z
  .object({
    groups: z.array(reviewGroup).meta({ description: 'Largest first, then most recently seen.' }),
    total: z.number().int().meta({ description: 'Groups matching (at most `limit` are in `groups`).' }),
    grouped_by: z.enum(['descriptor', 'none']).meta({
      description: '`descriptor`: faces were grouped by their face descriptors; `none`: no descriptors, each face is its own group.',
    }),
    max_distance: z.number().meta({
      description:
        "The embedding rule's limit the groups are made under: two groups merge when their nearest faces are within 0.85 of it, " +
        'their faces within it on average, and no two faces further apart than 1.3 times it (server/review/grouping.ts). ' +
        "Faces are always grouped by face-api's 128-d descriptor, so this is in its units: the embedding rule's limit on a " +
        "faceapi-128 server, face-api's default limit (0.515) on a faceres-1024 server (which keeps a 128-d descriptor of " +
        'each unknown face for grouping).',
    }),
  })
  .meta({
    id: 'ReviewGroupsResponse',
    example: {
      groups: [
        {
          id: 'g-3f2a9c1e',
          count: 10,
          first_seen: '2024-05-01T09:12:00.000Z',
          last_seen: '2024-05-01T14:02:00.000Z',
          sample_ids: ['3f2a9c1e'],
          sources: ['camera'],
          coherent: true,
          not_coherent_because: null,
          max_face_distance: 0.41,
        },
      ],
      total: 1,
      grouped_by: 'descriptor',
      max_distance: 0.48,
    },
  });
export type ReviewGroupsResponse = z.infer<typeof reviewGroupsResponse>;

/** `GET /api/review/people?from&to&q&limit`. */
export const reviewPeopleQuery = z.object({
  from: isoQuery.optional().meta({ description: 'Only sightings at or after this time.' }),
  to: isoQuery.optional().meta({ description: 'Only sightings before this time.' }),
  q: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .refine(storableText, UNSTORABLE_MESSAGE)
    .optional()
    .meta({ description: 'Only people whose label or display name contains this text (any case).' }),
  limit: limitOf(500, 100),
});

export const reviewPerson = z
  .object({
    label: z.string(),
    display_name: z.string().meta({ description: 'The name as typed ("Marie Curie"); the label when none was kept.' }),
    count: z.number().int().meta({ description: 'Sightings named this person in the time range.' }),
    first_seen: isoTime,
    last_seen: isoTime,
  })
  .meta({ id: 'ReviewPerson' });

export const reviewPeopleResponse = z
  .object({
    people: z.array(reviewPerson).meta({ description: 'Most recently seen first (their sightings: `GET /api/sightings?label=`).' }),
    total: z.number().int(),
  })
  .meta({ id: 'ReviewPeopleResponse' });
export type ReviewPeopleResponse = z.infer<typeof reviewPeopleResponse>;

const target = {
  sighting_ids: z
    .array(reviewSightingId, { error: "must be a list of sightings' ids" })
    .min(1, 'must name at least one sighting')
    .max(REVIEW_MAX_SIGHTINGS, `must name at most ${REVIEW_MAX_SIGHTINGS} sightings`)
    .optional()
    .meta({ description: 'These sightings; or `group_id`.' }),
  group_id: reviewGroupId
    .optional()
    .meta({ description: 'Every face of this group (unknown, not dismissed, not assigned); or `sighting_ids`.' }),
};

function oneTarget(v: { sighting_ids?: unknown; group_id?: unknown }, ctx: z.RefinementCtx): void {
  if ((v.sighting_ids === undefined) === (v.group_id === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['sighting_ids'], message: 'give either sighting_ids or group_id (one of them)' });
  }
}

/** `POST /api/review/assign`. */
export const reviewAssignRequest = z
  .object({
    ...target,
    label: z
      .string({ error: 'must be text' })
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .optional()
      .meta({ description: 'An existing person, by label; or `display_name` for a new person.' }),
    display_name: z
      .string({ error: 'must be text' })
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .optional()
      .meta({
        description: 'A new person\'s name as typed ("Marie Curie"); the label is made from it. With `label`: that person\'s name.',
      }),
  })
  .superRefine((v, ctx) => {
    oneTarget(v, ctx);
    if (v.label === undefined && v.display_name === undefined) {
      ctx.addIssue({ code: 'custom', path: ['label'], message: 'give label (an existing person) or display_name (a new person)' });
    }
  })
  .meta({ id: 'ReviewAssignRequest' });

export const reviewAssignResponse = z
  .object({
    action_id: z.string().meta({ description: 'Undo with `POST /api/review/actions/{action_id}/undo` until the next training.' }),
    label: z.string(),
    display_name: z.string(),
    new_person: z.boolean().meta({ description: 'Whether this assign created the person.' }),
    added: z.array(z.string()).meta({ description: "The new training images' file names (`GET /api/images/{label}/{filename}`)." }),
    skipped: z
      .array(z.object({ sighting_id: z.string(), reason: z.enum(['crop_missing']) }))
      .meta({ description: 'Sightings not added: their crop file is gone (purged).' }),
    retrain_needed: z.literal(true).meta({ description: 'The new images count once the models are trained again (`POST /api/train`).' }),
    checks: z
      .array(
        z.object({
          sighting_id: z.string(),
          filename: z.string(),
          check: photoCheck.nullable().meta({ description: 'null: the checker failed; the image is stored unchecked.' }),
        }),
      )
      .optional()
      .meta({
        description:
          "Each added image's photo check, as `POST /api/images` answers it (kept with the image: `GET /api/images/{label}`); a bad verdict is advice, the image is added.",
      }),
  })
  .meta({
    id: 'ReviewAssignResponse',
    example: {
      action_id: 'a-5b0f7c1e',
      label: 'marie-curie',
      display_name: 'Marie Curie',
      new_person: true,
      added: ['1714564920000-1a2b3c4d.jpg'],
      skipped: [],
      retrain_needed: true,
    },
  });
export type ReviewAssignResponse = z.infer<typeof reviewAssignResponse>;

/** `POST /api/review/dismiss`. */
export const reviewDismissRequest = z.object(target).superRefine(oneTarget).meta({ id: 'ReviewDismissRequest' });

export const reviewDismissResponse = z
  .object({
    action_id: z.string().meta({ description: 'Undo with `POST /api/review/actions/{action_id}/undo`.' }),
    dismissed: z.number().int().meta({ description: 'Faces dismissed (hidden from the groups; kept until purged).' }),
  })
  .meta({ id: 'ReviewDismissResponse' });
export type ReviewDismissResponse = z.infer<typeof reviewDismissResponse>;

/** Most pairs one "different people" mark may keep (faces named x the group's other faces, or every two named). */
export const REVIEW_MAX_APART_PAIRS = 20_000;

/** `POST /api/review/apart`: "these are different people". */
export const reviewApartRequest = z
  .object({
    sighting_ids: z
      .array(reviewSightingId, { error: "must be a list of sightings' ids" })
      .min(1, 'must name at least one sighting')
      .max(REVIEW_MAX_SIGHTINGS, `must name at most ${REVIEW_MAX_SIGHTINGS} sightings`)
      .meta({
        description:
          'Unknown faces in review. With `group_id`: each is not the same person as the other faces of that group (it leaves the ' +
          'group). Without: every two of them are different people (at least two).',
      }),
    group_id: reviewGroupId.optional().meta({ description: 'The group the faces are told apart from.' }),
  })
  .superRefine((v, ctx) => {
    if (v.group_id === undefined && new Set(v.sighting_ids).size < 2) {
      ctx.addIssue({
        code: 'custom',
        path: ['sighting_ids'],
        message: 'name two faces or more to tell apart, or one face and the group_id it is not part of',
      });
    }
  })
  .meta({ id: 'ReviewApartRequest' });

export const reviewApartResponse = z
  .object({
    action_id: z.string().meta({ description: 'Undo with `POST /api/review/actions/{action_id}/undo`.' }),
    pairs: z
      .number()
      .int()
      .meta({ description: 'Pairs of faces kept as two people (never grouped together, never assigned to one person).' }),
    sighting_ids: z.array(z.string()).meta({ description: 'The faces named; they are grouped again, apart from the others.' }),
  })
  .meta({ id: 'ReviewApartResponse', example: { action_id: 'a-7c2e9f10', pairs: 4, sighting_ids: ['3f2a9c1e'] } });
export type ReviewApartResponse = z.infer<typeof reviewApartResponse>;

export const REVIEW_ACTION_KINDS = ['assign', 'dismiss', 'correct', 'apart'] as const;
export type ReviewActionKind = (typeof REVIEW_ACTION_KINDS)[number];

export const reviewActionParams = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, "must be an action's id")
    .meta({ example: 'a-5b0f7c1e' }),
});

/** `POST /api/review/actions/{id}/undo` body: empty or `{}`; nothing in it is read. */
export const reviewUndoRequest = z.object({}).loose().meta({ id: 'ReviewUndoRequest', description: 'Empty or `{}`.' });

export const reviewUndoResponse = z
  .object({
    action_id: z.string(),
    kind: z.enum(REVIEW_ACTION_KINDS),
    undone_at: isoTime,
    images_removed: z.number().int().meta({ description: 'Training images removed (an assign).' }),
    sightings: z
      .number()
      .int()
      .meta({ description: 'Sightings back in review (an assign or a dismiss), or grouped again (a "different people" mark).' }),
  })
  .meta({ id: 'ReviewUndoResponse' });
export type ReviewUndoResponse = z.infer<typeof reviewUndoResponse>;

/** `GET /api/review/actions?limit`. */
export const reviewActionsQuery = z.object({ limit: limitOf(200, 50) });

export const reviewAction = z
  .object({
    id: z.string(),
    kind: z.enum(REVIEW_ACTION_KINDS),
    created_at: isoTime,
    actor: z.string().nullable().meta({ description: 'Who did it (AUTH_MODE=oidc), else null.' }),
    label: z.string().nullable(),
    sighting_ids: z.array(z.string()),
    added: z.array(z.string()).meta({ description: 'Training images an assign added.' }),
    undone_at: isoTime.nullable(),
    undoable: z.boolean(),
    not_undoable_because: z
      .enum(['undone', 'trained', 'training'])
      .nullable()
      .meta({ description: '`trained`: a training ran since (the images are in the models); `training`: one runs now.' }),
  })
  .meta({ id: 'ReviewAction' });
export type ReviewAction = z.infer<typeof reviewAction>;

export const reviewActionsResponse = z
  .object({ actions: z.array(reviewAction).meta({ description: 'Newest first.' }) })
  .meta({ id: 'ReviewActionsResponse' });
export type ReviewActionsResponse = z.infer<typeof reviewActionsResponse>;
