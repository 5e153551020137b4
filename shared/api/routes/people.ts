/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * #26 audit and #36 2: the audit log, people's records and pages, and search by face.
 */
import { labelParams } from '../faces.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { auditQuery, auditResponse, personResponse, personUpdateRequest } from '../audit.js';
import {
  faceSearchRequest,
  faceSearchResponse,
  personActionParams,
  personActionResponse,
  personCoverRequest,
  personMergeRequest,
  personMoveRequest,
  personPageQuery,
  personPageResponse,
  personRenameRequest,
  personUndoRequest,
  personUndoResponse,
} from '../people.js';
import { json, ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const peopleRoutes = {
  // #26 audit
  auditLog: defineRoute({
    ...ENDPOINTS.auditLog,
    summary: 'The audit log of biometric operations, newest first',
    description:
      'Enroll, delete, train, verify, template download, sighting and image access, corrections and review: who (a user or a ' +
      'client under AUTH_MODE=oidc, `anonymous` without), when, from where, on whom, and how it ended. Append-only: no ' +
      'endpoint changes or deletes an entry; entries older than AUDIT_RETENTION_DAYS are purged. Paged with `next_cursor`.',
    tags: ['Audit'],
    request: { query: auditQuery },
    responses: ok(auditResponse, 'One page of entries.'),
    errors: [],
  }),
  updatePerson: defineRoute({
    ...ENDPOINTS.updatePerson,
    summary: "Change a person's settings: whether kiosks get their templates",
    description:
      '`kiosk: false` keeps the person out of the trained models that devices download (`GET /api/models/trained/*`): ' +
      'the server still recognises and verifies them (the second factor of the identity provider, which sets it for the ' +
      'people it enrols). Takes effect at the next download, without training.',
    tags: ['Faces'],
    request: { params: labelParams, body: jsonBody(personUpdateRequest, { kiosk: false }) },
    responses: ok(personResponse, 'The person as now stored.'),
    errors: ['invalid_label', 'label_not_found'],
  }),
  // #36 2: a person's page and what can be done on it, each undoable; search by face
  personPage: defineRoute({
    ...ENDPOINTS.personPage,
    summary: "A person's page: name, cover, every photo, the newest sightings recognised as or assigned to them",
    tags: ['People'],
    request: { params: labelParams, query: personPageQuery },
    responses: ok(personPageResponse, 'The person.'),
    errors: ['bad_request', 'invalid_label', 'label_not_found'],
  }),
  renamePerson: defineRoute({
    ...ENDPOINTS.renamePerson,
    summary: 'Rename a person (the display name; the label stays their id)',
    description:
      'The name follows the label rules (a name that cannot be a label is 400 `invalid_label`); a name that is, or looks like ' +
      "(Unicode confusables), another person's is 409 `label_confusable`. Undoable; in the audit log.",
    tags: ['People'],
    request: { params: labelParams, body: jsonBody(personRenameRequest, { display_name: 'Marie Skłodowska-Curie' }) },
    responses: ok(personActionResponse, 'Renamed.'),
    errors: ['invalid_label', 'label_not_found', 'label_confusable'],
  }),
  setPersonCover: defineRoute({
    ...ENDPOINTS.setPersonCover,
    summary: "Choose a person's cover photo",
    tags: ['People'],
    request: { params: labelParams, body: jsonBody(personCoverRequest, { filename: '1714564920000-1a2b3c4d.jpg' }) },
    responses: ok(personActionResponse, 'Chosen.'),
    errors: ['invalid_label', 'label_not_found', 'not_found'],
  }),
  mergePerson: defineRoute({
    ...ENDPOINTS.mergePerson,
    summary: 'Merge this person into another: their photos, sightings and corrections go to the one who stays',
    description:
      'Every photo is written under the person who stays (a new name where theirs is taken) before the old file goes, so a crash ' +
      'never loses one. Sightings recognised as or assigned to them, sightings that had them as nearest person (`candidate`) and ' +
      'their corrections follow. The trained models follow at once, without a training: their samples are relabelled as the one ' +
      "who stays (the server's recognition, the compact model browsers sync and the model downloads name them so; " +
      '`retrain_needed` is false when the models knew them). What still names the merged person after the merge (results, ' +
      'sightings and "not this person" corrections from a device with an old model) is named the one who stays as it arrives. ' +
      'Undoable (the photos go back, and so do those names and their samples in the models); in the audit log. Refused while a ' +
      'training runs on any replica (409 `training_in_progress`).',
    tags: ['People'],
    request: { params: labelParams, body: jsonBody(personMergeRequest, { into: 'marie-curie' }) },
    responses: ok(personActionResponse, 'Merged.'),
    errors: ['bad_request', 'invalid_label', 'label_not_found', 'label_confusable', 'training_in_progress'],
  }),
  movePhotos: defineRoute({
    ...ENDPOINTS.movePhotos,
    summary: "Move some of a person's photos to another person (or a new one)",
    description:
      'Written under the other person before the old files go; a sighting assigned as one of them follows it. A new person ' +
      '(`to` nobody has, with `display_name`) follows the label rules. Retrain to use them. Undoable; in the audit log.',
    tags: ['People'],
    request: { params: labelParams, body: jsonBody(personMoveRequest, { filenames: ['1714564920000-1a2b3c4d.jpg'], to: 'pierre-curie' }) },
    responses: ok(personActionResponse, 'Moved.'),
    errors: ['bad_request', 'invalid_label', 'label_not_found', 'label_confusable', 'not_found', 'training_in_progress'],
  }),
  undoPersonAction: defineRoute({
    ...ENDPOINTS.undoPersonAction,
    summary: 'Undo a rename, a cover, a merge or a move',
    description:
      "A merge or a move: the photos go back (those deleted since are named in `missing`), with the sightings and corrections; the merged person's name " +
      'and cover come back; after a merge, the trained models name them again (their samples, found by the fingerprints the merge ' +
      'noted; `retrain_needed` false). Undone once (409 `already_undone` the second time); a merge or a move waits for a running training.',
    tags: ['People'],
    request: { params: personActionParams, body: { required: false, description: 'Empty or `{}`.', content: json(personUndoRequest, {}) } },
    responses: ok(personUndoResponse, 'Undone.'),
    errors: ['bad_request', 'not_found', 'already_undone', 'label_confusable', 'training_in_progress'],
  }),
  searchFaces: defineRoute({
    ...ENDPOINTS.searchFaces,
    summary: 'Search by face: the sightings of this face, nearest first, with time and source',
    description:
      "Give one face: a sighting (`sighting_id`), a stored photo (`label` + `filename`) or an image. Compared with every kept sighting's " +
      'descriptor (the embedding recognizer must run); those within the embedding rule`s limit come back nearest first. Counted as ' +
      'verifications of anyone are (VERIFY_RATE_PER_VERIFIER per VERIFY_RATE_WINDOW_S): past it 429 `rate_limited` with Retry-After.',
    tags: ['People'],
    request: { body: jsonBody(faceSearchRequest, { sighting_id: '5b0f7c1e-8d4a-4c55-9a61-0c2f8e7b9d10', limit: 20 }) },
    responses: ok(faceSearchResponse, 'The nearest sightings.'),
    errors: [
      'bad_request',
      'invalid_image',
      'invalid_label',
      'not_found',
      'no_faces_found',
      'model_unavailable',
      'rate_limited',
      'rate_limit_unavailable',
      'server_busy',
    ],
  }),
} satisfies Partial<Record<EndpointName, ApiRoute>>;
