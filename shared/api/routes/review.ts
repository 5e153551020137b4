/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * #26 deletion, review and corrections: deleted people, grouping unknown faces, naming them, "not this person".
 */
import { deletionsQuery, deletionsResponse } from '../deletions.js';
import {
  correctionDeleteResponse,
  correctionParams,
  correctionRequest,
  correctionResponse,
  correctionsQuery,
  correctionsResponse,
} from '../corrections.js';
import {
  reviewActionParams,
  reviewActionsQuery,
  reviewActionsResponse,
  reviewAssignRequest,
  reviewApartRequest,
  reviewApartResponse,
  reviewAssignResponse,
  reviewDismissRequest,
  reviewDismissResponse,
  reviewGroupsQuery,
  reviewGroupsResponse,
  reviewPeopleQuery,
  reviewPeopleResponse,
  reviewUndoRequest,
  reviewUndoResponse,
} from '../review.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { json, ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const reviewRoutes = {
  // #26 deletion
  deletedPeople: defineRoute({
    ...ENDPOINTS.deletedPeople,
    summary: 'People deleted, newest first',
    description:
      'Devices drop the photos and results they still queue of a person deleted after they were made (`DELETE /api/images/{label}`); the IdP shows the user without a face.',
    tags: ['Faces'],
    request: { query: deletionsQuery },
    responses: ok(deletionsResponse, 'The deletions.'),
    errors: ['bad_request'],
  }),
  // #26 review
  reviewGroups: defineRoute({
    ...ENDPOINTS.reviewGroups,
    summary: 'Unknown faces grouped by likeness, largest groups first',
    description:
      "Faces named nobody, not dismissed and not assigned, grouped by face-api's 128-d face descriptors whatever descriptor model " +
      'recognises (clustered on the faces themselves, by `max_distance`); two faces of one picture are never in one group; a face ' +
      'without such a descriptor is a group of its own (faces a faceres-1024 server kept with their own descriptor only are ' +
      'described from their crops in the background after this request, and join groups at a later one). Groups may be revised ' +
      'as faces arrive; a group keeps its id with most of its faces. A group whose faces do not agree is `coherent: false`, with why.',
    tags: ['Review'],
    request: { query: reviewGroupsQuery },
    responses: ok(reviewGroupsResponse, 'The groups.'),
    errors: [],
  }),
  reviewPeople: defineRoute({
    ...ENDPOINTS.reviewPeople,
    summary: 'Known sightings by person, in a time range',
    tags: ['Review'],
    request: { query: reviewPeopleQuery },
    responses: ok(reviewPeopleResponse, 'Each person seen, with how often and when.'),
    errors: [],
  }),
  reviewAssign: defineRoute({
    ...ENDPOINTS.reviewAssign,
    summary: "Assign faces to a person: their crops become the person's training images",
    description:
      'A group (`group_id`) or single faces (`sighting_ids`) to an existing person (`label`) or a new one (`display_name`). Each crop is ' +
      'stored as a training image of the person; the models use them after the next training. Undo until then. A group whose faces ' +
      'do not agree is not assigned whole (409 `group_not_coherent`: name its faces of one person in `sighting_ids`), nor two faces ' +
      'of one picture to one person (409 `same_picture`), nor a face marked "not this person" (`POST /api/corrections`) to that ' +
      'person (409 `not_this_person`), nor two faces marked as different people (`POST /api/review/apart`: 409 `different_people`).',
    tags: ['Review'],
    request: { body: jsonBody(reviewAssignRequest, { group_id: 'g-3f2a9c1e', display_name: 'Marie Curie' }) },
    responses: ok(reviewAssignResponse, 'Assigned.'),
    errors: [
      'invalid_label',
      'label_confusable',
      'label_not_found',
      'not_found',
      'already_assigned',
      'group_not_coherent',
      'same_picture',
      'not_this_person',
      'different_people',
    ],
  }),
  reviewDismiss: defineRoute({
    ...ENDPOINTS.reviewDismiss,
    summary: 'Dismiss faces: hidden from the groups (kept until purged)',
    tags: ['Review'],
    request: { body: jsonBody(reviewDismissRequest, { group_id: 'g-3f2a9c1e' }) },
    responses: ok(reviewDismissResponse, 'Dismissed.'),
    errors: ['not_found'],
  }),
  reviewActions: defineRoute({
    ...ENDPOINTS.reviewActions,
    summary: "The reviewers' recent actions, with whether each can still be undone",
    tags: ['Review'],
    request: { query: reviewActionsQuery },
    responses: ok(reviewActionsResponse, 'Newest first.'),
    errors: [],
  }),
  reviewUndo: defineRoute({
    ...ENDPOINTS.reviewUndo,
    summary: 'Undo an assign, a dismiss or a correction',
    description:
      'An assign: its training images are removed and its faces are back in review, unless a training ran since (409 `already_trained`: ' +
      'delete the images instead) or runs now. A dismiss: its faces are back. A correction: it is removed. A "different people" ' +
      'mark: its pairs are forgotten and its faces grouped again.',
    tags: ['Review'],
    request: { params: reviewActionParams, body: { required: false, description: 'Empty or `{}`.', content: json(reviewUndoRequest, {}) } },
    responses: ok(reviewUndoResponse, 'Undone.'),
    errors: ['bad_request', 'not_found', 'already_undone', 'already_trained', 'training_in_progress'],
  }),
  reviewApart: defineRoute({
    ...ENDPOINTS.reviewApart,
    summary: 'These are different people: faces the grouping keeps apart',
    description:
      'A face of a group that is not the same person as the others (`sighting_ids` and `group_id`: it leaves the group), or two faces ' +
      'or more that are different people (`sighting_ids`). The pairs are kept: the grouping never puts two of them in one group again ' +
      '(also when it clusters again as faces arrive), and they are never assigned to one person (409 `different_people`). Only ' +
      'unknown faces in review (not named, dismissed nor assigned: 409 `not_in_review`). A review action (kind `apart`) with its ' +
      'actor, undone by `POST /api/review/actions/{id}/undo` (the faces are grouped as before).',
    tags: ['Review'],
    request: { body: jsonBody(reviewApartRequest, { sighting_ids: ['3f2a9c1e'], group_id: 'g-0b7d4e21' }) },
    responses: ok(reviewApartResponse, 'Kept apart.'),
    errors: ['bad_request', 'not_found', 'not_in_review'],
  }),
  // #26 corrections
  createCorrection: defineRoute({
    ...ENDPOINTS.createCorrection,
    summary: "Not this person: keep a sighting's face so it is not given this name again",
    description:
      "The sighting's face crop is described for both recognizers (LBPH histogram; embedding descriptor when that recognizer runs) and " +
      'kept as a "not this person" template: from then on a face that would be named this person is `unknown` with the reason ' +
      "`corrected` when it is at least as near to one of the person's corrections as to their own nearest sample, and it never " +
      'verifies as them (`POST /api/verify`). Also a review action (kind `correct`), so it can be undone. Correcting the same ' +
      'sighting for the same person again answers the correction already made.',
    tags: ['Review'],
    request: { body: jsonBody(correctionRequest, { sighting_id: '5b0f7c1e-8d4a-4c55-9a61-0c2f8e7b9d10' }) },
    responses: ok(correctionResponse, 'Kept, and applied by the recognizers from now on.'),
    errors: ['invalid_label', 'not_found', 'label_not_found', 'invalid_image', 'server_busy'],
  }),
  corrections: defineRoute({
    ...ENDPOINTS.corrections,
    summary: 'The corrections ("not this person"), newest first',
    tags: ['Review'],
    request: { query: correctionsQuery },
    responses: ok(correctionsResponse, 'The corrections.'),
    errors: ['invalid_label'],
  }),
  deleteCorrection: defineRoute({
    ...ENDPOINTS.deleteCorrection,
    summary: 'Remove a correction: the face may be given that name again',
    tags: ['Review'],
    request: { params: correctionParams },
    responses: ok(correctionDeleteResponse, 'Removed.'),
    errors: ['bad_request', 'not_found'],
  }),
} satisfies Partial<Record<EndpointName, ApiRoute>>;
