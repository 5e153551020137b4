/**
 * The route table: every endpoint under /api, once. The server mounts and validates with it and publishes it
 * as OpenAPI (GET /api/openapi.json); the typed client (client.ts) takes its types from it; the API tests
 * check every real answer against it.
 */
import { z } from 'zod';
import { authConfigResponse } from './auth.js';
import { analyzeRequest, analyzeResponse } from './analyze.js';
import { chatRequest, chatResponse, chatStatusResponse, chatStreamEvent } from './chat.js';
import { binaryBody, EXAMPLE_IMAGE } from './common.js';
import {
  imageDeleteParams,
  imageDeleteResponse,
  imageFileParams,
  imageUploadForm,
  imageUploadJson,
  imageUploadResponse,
  labelDeleteResponse,
  labelImagesResponse,
  labelParams,
  labelsResponse,
  recognizeRequest,
  recognizeResponse,
} from './faces.js';
import { healthResponse, readyResponse } from './health.js';
// #26 enrollment
import { imageCheckRequest, imageCheckResponse } from './enrollment.js';
import {
  detectionRequest,
  detectionResponse,
  modelsAvailableResponse,
  modelsConfigRequest,
  modelsConfigResponse,
  modelsConfigUpdateResponse,
  thresholdsPreviewResponse,
  thresholdsRequest,
  thresholdsResponse,
  trainedFileHeaders,
  trainedModelHeaders,
  trainedModelsResponse,
  trainedCorrectionsFile,
} from './models.js';
import { objectClassesResponse, objectDetectionResponse, objectDetectRequest, objectStatusResponse } from './objects.js';
import { ppeDetectRequest, ppeDetectResponse, ppeEventsQuery, ppeEventsResponse, ppeStatusResponse } from './ppe.js';
import { metricsRoute, processorStatusResponse } from './processor.js';
// #26 sightings
import {
  sighting,
  sightingDeleteResponse,
  sightingParams,
  sightingsPurgeQuery,
  sightingsPurgeResponse,
  sightingsQuery,
  sightingsResponse,
  sightingsStatusResponse,
} from './sightings.js';
import { resultsListResponse, resultsPostRequest, resultsPostResponse, resultsQuery } from './results.js';
// #26 deletion
import { deletionsQuery, deletionsResponse } from './deletions.js';
// #26 corrections
import {
  correctionDeleteResponse,
  correctionParams,
  correctionRequest,
  correctionResponse,
  correctionsQuery,
  correctionsResponse,
} from './corrections.js';
// #26 review
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
} from './review.js';
import { ENDPOINTS, type EndpointName } from './endpoints.js';
import { defineRoute, type ApiRoute } from './route.js';
import { withAccess } from './roles.js';
// #26 audit
import { auditQuery, auditResponse, personResponse, personUpdateRequest } from './audit.js';
import { trainRequest, trainResponse, trainStatusResponse } from './training.js';
// #27 compact browser models
import { compactModelManifest, compactSegmentsQuery } from './compact-models.js';
import { MAX_VERIFY_FRAMES, verifyRequest, verifyResponse } from './verify.js';
// #36 2 people pages
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
} from './people.js';

const json = <S extends z.ZodType>(schema: S, example?: unknown) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
});
const ok = <S extends z.ZodType>(schema: S, description: string) => ({ 200: { description, content: json(schema) } });
const jsonBody = <S extends z.ZodType>(schema: S, example?: unknown) => ({ required: true as const, content: json(schema, example) });

/** A page or file of the API reference (`text/html`, CSS, JavaScript, PNG). */
const docsFile = z.string().meta({ description: 'The file.' });

const routeTable = {
  health: defineRoute({
    ...ENDPOINTS.health,
    summary: 'Liveness: the process answers',
    tags: ['Health'],
    responses: ok(healthResponse, 'The service is up.'),
    errors: [],
  }),
  ready: defineRoute({
    ...ENDPOINTS.ready,
    summary: 'Readiness: the local detector runs',
    description: 'The remote engine and the object detector are reported beside it; neither holds readiness back.',
    tags: ['Health'],
    responses: {
      200: { description: 'Ready.', content: json(readyResponse) },
      503: { description: 'Not ready yet; the same body says what is missing.', content: json(readyResponse) },
    },
    errors: [],
  }),
  authConfig: defineRoute({
    ...ENDPOINTS.authConfig,
    summary: 'How the web app signs in: the OpenID issuer and client, or that no sign-in is needed',
    description:
      'Open, like the probes. With AUTH_MODE=oidc every other endpoint but the probes and the docs needs ' +
      '`Authorization: Bearer <access token>` from this issuer, with the audience OIDC_AUDIENCE and the role the operation names.',
    tags: ['Auth'],
    responses: ok(authConfigResponse, 'The sign-in configuration.'),
    errors: [],
  }),
  recognize: defineRoute({
    ...ENDPOINTS.recognize,
    summary: 'Recognise the faces in one image',
    tags: ['Faces'],
    request: { body: jsonBody(recognizeRequest, { image: EXAMPLE_IMAGE }) },
    responses: ok(recognizeResponse, 'Every face found, with a label (or `unknown`) and a confidence.'),
    errors: ['invalid_image', 'image_too_large', 'remote_unavailable', 'server_busy', 'model_unavailable'],
  }),
  analyze: defineRoute({
    ...ENDPOINTS.analyze,
    summary: 'Analyse the faces (and objects) of one image: labels, facial features, which detector found them',
    description:
      "The original service's facial analysis: every face recognised as `POST /api/recognize` does, with its eyes, eyeglasses " +
      'and smile (the Haar cascades), and the objects in the image: the analysis `POST /api/chat` gives its LLM, without one.',
    tags: ['Faces'],
    request: { body: jsonBody(analyzeRequest, { image: EXAMPLE_IMAGE }) },
    responses: ok(analyzeResponse, 'Every face with its features, and the objects.'),
    errors: ['invalid_image', 'image_too_large', 'remote_unavailable', 'server_busy'],
  }),
  verify: defineRoute({
    ...ENDPOINTS.verify,
    summary: 'Verify 1:1: does the face in this image (or these frames) belong to this person?',
    description:
      "The one face of each image is compared only with this person's own samples (nobody else's), and it is a match iff " +
      "its distance to their nearest sample is at most the recognizer's `verify_max` (stricter than recognition's limit). " +
      `\`image\` or \`frames\` (1 to ${MAX_VERIFY_FRAMES}, a match only when every one matches). A label nobody enrolled is ` +
      'an answer (`match: false`, `not_enrolled`), not an error. ' +
      // #35: no oracle on anyone's face
      'With AUTH_MODE=oidc a plain `biometric-user` verifies only their own label (the one of their `preferred_username`; ' +
      'another is refused with 403 `not_own_label` before the image is read) and is told no `distance` or `confidence`; ' +
      "verifying anyone, with the distance, takes the role `biometric-verifier` (the identity provider's service client) or " +
      '`biometric-admin`. Verifications are limited per caller and per label within VERIFY_RATE_WINDOW_S, counted in the ' +
      'database so that replicas share them: past a limit 429 `rate_limited` with Retry-After (seconds); counters that cannot ' +
      'be read deny (503 `rate_limit_unavailable`). With AUTH_MODE=off the caller is the client address.',
    tags: ['Faces'],
    request: { body: jsonBody(verifyRequest, { label: 'alice-smith', image: EXAMPLE_IMAGE }) },
    responses: ok(
      verifyResponse,
      'The verdict, with the threshold it was decided with (and the distance, for a caller that may verify anyone).',
    ),
    errors: [
      'invalid_image',
      'invalid_label',
      'image_too_large',
      'remote_unavailable',
      'server_busy',
      'model_unavailable',
      'not_own_label',
      'rate_limited',
      'rate_limit_unavailable',
    ],
  }),
  uploadImage: defineRoute({
    ...ENDPOINTS.uploadImage,
    summary: 'Store one training image for a person',
    description:
      'Multipart (parts `label`, `file`, optional `capture_id`) or JSON (`label`, `image`, optional `capture_id`). ' +
      'The image is fully decoded before it is stored (a truncated image is refused). With `capture_id` the upload is idempotent. ' +
      // #26 enrollment
      'The answer carries the photo check (`check`, never an error); the original file name and `display_name` are kept; ' +
      'with several faces, `face` picks the one stored (a `face` that is outside the image or matches no face found: 400, nothing stored). ' +
      // #35 9
      'A new label that looks like an existing one (equal Unicode confusable skeletons, UTS #39: `\u0430lice` beside `alice`) ' +
      'is refused with 409 `label_confusable`, naming the existing label in `details.existing_label`.',
    tags: ['Faces'],
    request: {
      body: {
        required: true,
        content: {
          'multipart/form-data': { schema: imageUploadForm },
          'application/json': { schema: imageUploadJson, example: { label: 'Alice Smith', image: EXAMPLE_IMAGE } },
        },
      },
    },
    responses: ok(imageUploadResponse, 'Stored (or, with a known `capture_id`, already stored).'),
    errors: ['invalid_label', 'label_confusable', 'invalid_image', 'image_too_large', 'server_busy'],
  }),
  // #26 enrollment
  checkImage: defineRoute({
    ...ENDPOINTS.checkImage,
    summary: 'Check a training photo before storing it (nothing is stored)',
    description:
      'Finds the faces and checks the largest (or the one given as `face`): size, sharpness, exposure, how frontal. ' +
      'The same check `POST /api/images` answers with; the faces found are listed to pick from.',
    tags: ['Faces'],
    request: { body: jsonBody(imageCheckRequest, { image: EXAMPLE_IMAGE }) },
    responses: ok(imageCheckResponse, 'The check and the faces found.'),
    errors: ['bad_request', 'invalid_image', 'image_too_large', 'server_busy'],
  }),
  labelImages: defineRoute({
    ...ENDPOINTS.labelImages,
    summary: 'List the stored images of a label',
    description: 'A label with no stored images answers an empty list (`count` 0), as the original service did.',
    tags: ['Faces'],
    request: { params: labelParams },
    responses: ok(labelImagesResponse, 'The images, oldest first; none for a label nobody enrolled.'),
    errors: ['invalid_label'],
  }),
  imageFile: defineRoute({
    ...ENDPOINTS.imageFile,
    summary: "One stored image's bytes",
    tags: ['Faces'],
    request: { params: imageFileParams },
    responses: {
      200: {
        description: 'The image, with its type (`application/octet-stream` for a type not known).',
        content: { 'image/*': { schema: binaryBody }, 'application/octet-stream': { schema: binaryBody } },
      },
    },
    errors: ['invalid_label', 'not_found'],
  }),
  deleteLabel: defineRoute({
    ...ENDPOINTS.deleteLabel,
    summary: 'Delete a person everywhere',
    description:
      'Removes the person everywhere and says what was removed: training images, their templates in the trained models (rewritten without them: no retraining needed), sightings, corrections, stored results naming them, display name and image metadata. Devices drop what they still queue of them at their next sync (`GET /api/deletions`). 409 while a training runs (nothing removed); 404 when nothing of the label is stored.',
    tags: ['Faces'],
    request: { params: labelParams },
    responses: ok(labelDeleteResponse, 'Deleted.'),
    errors: ['invalid_label', 'label_not_found', 'training_in_progress'],
  }),
  deleteImage: defineRoute({
    ...ENDPOINTS.deleteImage,
    summary: 'Delete one stored image of a label',
    description:
      'Removes one file at once (a bad photo, without losing the person). The last image of a label takes the label with it. The trained model keeps the face until the next training run.',
    tags: ['Faces'],
    request: { params: imageDeleteParams },
    responses: ok(imageDeleteResponse, 'Deleted.'),
    errors: ['bad_request', 'invalid_label', 'label_not_found', 'not_found'],
  }),
  labels: defineRoute({
    ...ENDPOINTS.labels,
    summary: 'The known persons',
    tags: ['Faces'],
    responses: ok(labelsResponse, 'Labels with image counts and whether the trained model knows each.'),
    errors: [],
  }),
  train: defineRoute({
    ...ENDPOINTS.train,
    summary: 'Train on every stored image',
    description:
      "One run at a time. When no image gives a face, nothing is saved and the previous models stay in use. Each image's " +
      'features (face box, histogram, descriptor) are kept and reused while what made them is unchanged; with the ' +
      "`remote` detection method the model server is asked for its model's identity (versions, tensors) first, so a new " +
      'model version recomputes the boxes, and a model server that cannot be reached fails the run with `remote_unavailable`.',
    tags: ['Training'],
    request: { body: { required: false, description: 'Empty or `{}`.', content: json(trainRequest, {}) } },
    responses: ok(trainResponse, 'Trained; the new models are in use.'),
    errors: ['training_in_progress', 'no_training_data', 'no_faces_found', 'remote_unavailable'],
  }),
  trainStatus: defineRoute({
    ...ENDPOINTS.trainStatus,
    summary: 'Progress of the running training, and the last one',
    tags: ['Training'],
    responses: ok(trainStatusResponse, 'The training state.'),
    errors: [],
  }),
  modelsConfig: defineRoute({
    ...ENDPOINTS.modelsConfig,
    summary: 'The active recognizer and detection method',
    tags: ['Models'],
    responses: ok(modelsConfigResponse, 'The configuration.'),
    errors: [],
  }),
  setModelsConfig: defineRoute({
    ...ENDPOINTS.setModelsConfig,
    summary: 'Choose the recognizer',
    description: 'Applies to the next request, with no restart.',
    tags: ['Models'],
    request: { body: jsonBody(modelsConfigRequest, { recognition_model: 'embedding' }) },
    responses: ok(modelsConfigUpdateResponse, 'Changed; the whole configuration.'),
    errors: ['model_unavailable'],
  }),
  setDetection: defineRoute({
    ...ENDPOINTS.setDetection,
    summary: 'Choose the detection method',
    tags: ['Models'],
    request: { body: jsonBody(detectionRequest, { detection_method: 'remote' }) },
    responses: ok(detectionResponse, 'Changed.'),
    errors: ['model_unavailable'],
  }),
  modelsAvailable: defineRoute({
    ...ENDPOINTS.modelsAvailable,
    summary: 'Which recognizers and detection methods can be chosen, and why not',
    tags: ['Models'],
    responses: ok(modelsAvailableResponse, 'The choices.'),
    errors: [],
  }),
  thresholds: defineRoute({
    ...ENDPOINTS.thresholds,
    summary: "Each recognizer's decision thresholds: in force, defaults, and which are the site's own",
    description:
      "Distances in the recognizer's own scale (LBPH chi-square, embedding euclidean between descriptors of `descriptor_model`). " +
      'The defaults are calibrated per recognizer and descriptor model (bench/RESULTS.md), with LBPH_DISTANCE_* and EMBEDDING_DISTANCE_MAX over them.',
    tags: ['Models'],
    responses: ok(thresholdsResponse, 'Both recognizers.'),
    errors: [],
  }),
  setThresholds: defineRoute({
    ...ENDPOINTS.setThresholds,
    summary: "Set a recognizer's thresholds (kept in DATA_DIR)",
    description:
      'Sets the keys sent for one recognizer; `null` puts a key back to its default. Saved in DATA_DIR (every replica follows within a second) and ' +
      'applied to the next request. Refused with 400 when the rule would not be usable: `sure_max` and `verify_max` at most `max`, distances within ' +
      '`bounds` (`GET` shows them: #35, the calibrated bound of the recognizer and descriptor model, past which strangers pass as enrolled people; ' +
      'THRESHOLD_BOUNDS=off lifts it for a lab), `ratio_max` above 0 and at most 1. Each change is in the audit log (`settings_change`, who, old and new ' +
      'values). `POST /api/models/thresholds/preview` shows what a change does first.',
    tags: ['Models'],
    request: { body: jsonBody(thresholdsRequest, { recognizer: 'embedding', max: 0.45, ratio_max: null }) },
    responses: ok(thresholdsResponse, 'Saved; both recognizers as they are now.'),
    errors: ['server_busy'],
  }),
  previewThresholds: defineRoute({
    ...ENDPOINTS.previewThresholds,
    summary: 'What a change of thresholds would do, before saving it',
    description:
      'Takes the body of `PUT /api/models/thresholds` and saves nothing. Answers, before and after: the enrolled people (leave-one-out over the ' +
      'trained model: each training sample decided against all the others) and the recent sightings stored through `POST /api/results` ' +
      '(each face decided again from its stored distance; `recent.limits` says what that cannot see, such as the margin rule).',
    tags: ['Models'],
    request: { body: jsonBody(thresholdsRequest, { recognizer: 'embedding', max: 0.45 }) },
    responses: ok(thresholdsPreviewResponse, 'The rule now and proposed, and what each does.'),
    errors: [],
  }),
  trainedModels: defineRoute({
    ...ENDPOINTS.trainedModels,
    summary: 'The trained models a browser can download',
    description: "The ETag is the models' version: send it in If-None-Match to get 304 until a training changes them.",
    tags: ['Models'],
    responses: {
      200: { description: 'The models.', headers: trainedModelHeaders, content: json(trainedModelsResponse) },
      304: { description: 'Not modified since the version in If-None-Match.', headers: trainedModelHeaders },
    },
    errors: [],
  }),
  trainedLbph: defineRoute({
    ...ENDPOINTS.trainedLbph,
    summary: 'The trained LBPH model (OpenCV YAML)',
    tags: ['Models'],
    responses: {
      200: { description: 'The model file.', headers: trainedFileHeaders, content: { 'text/yaml': { schema: binaryBody } } },
      304: { description: 'Not modified since the version in If-None-Match.', headers: trainedFileHeaders },
    },
    errors: ['not_trained'],
  }),
  trainedEmbedding: defineRoute({
    ...ENDPOINTS.trainedEmbedding,
    summary: 'The trained embedding model (JSON)',
    tags: ['Models'],
    responses: {
      200: {
        description: 'The model file.',
        headers: trainedFileHeaders,
        content: {
          'application/json': {
            schema: z.record(z.string(), z.unknown()).meta({ description: 'The embedding model file: labels and face descriptors.' }),
          },
        },
      },
      304: { description: 'Not modified since the version in If-None-Match.', headers: trainedFileHeaders },
    },
    errors: ['not_trained'],
  }),
  // #26 corrections in the browser
  trainedCorrections: defineRoute({
    ...ENDPOINTS.trainedCorrections,
    summary: 'The corrections ("not this person") of the trained models, for the in-browser engine',
    description:
      "Only the kiosk gallery's people, embedding templates of the descriptor model the server runs. The ETag is the version of " +
      '`GET /api/models/trained`; an empty set when there are no corrections.',
    tags: ['Models'],
    responses: {
      200: { description: 'The corrections.', headers: trainedFileHeaders, content: json(trainedCorrectionsFile) },
      304: { description: 'Not modified since the version in If-None-Match.', headers: trainedFileHeaders },
    },
    errors: ['not_trained'],
  }),
  // #27 compact browser models
  trainedCompact: defineRoute({
    ...ENDPOINTS.trainedCompact,
    summary: 'The trained models in compact form: one segment per person, listed by hash',
    description:
      "The kiosk gallery's people (as `GET /api/models/trained`), each one's LBPH and embedding segment named by its hash; a device fetches " +
      'the segments it lacks from `segments_url`. The ETag is the version of `GET /api/models/trained`.',
    tags: ['Models'],
    responses: {
      200: { description: 'The manifest.', headers: trainedModelHeaders, content: json(compactModelManifest) },
      304: { description: 'Not modified since the version in If-None-Match.', headers: trainedModelHeaders },
    },
    errors: ['not_trained'],
  }),
  trainedCompactSegments: defineRoute({
    ...ENDPOINTS.trainedCompactSegments,
    summary: 'Compact model segments by hash (immutable)',
    description:
      'The segments asked for, in the order asked, each as its length (u32 little-endian) then its bytes (shared/recognition/compact-model.ts); ' +
      'gzip-compressed when the request accepts it. A hash of neither the current nor the previous model: 404 `not_found`.',
    tags: ['Models'],
    request: { query: compactSegmentsQuery },
    responses: {
      200: { description: 'The segments.', headers: trainedModelHeaders, content: { 'application/octet-stream': { schema: binaryBody } } },
      304: { description: 'Not modified since the ETag in If-None-Match (segments never change).', headers: trainedModelHeaders },
    },
    errors: ['bad_request', 'not_trained', 'not_found'],
  }),
  // #26 sightings
  sightings: defineRoute({
    ...ENDPOINTS.sightings,
    summary: 'Faces the recognitions saw (sightings), newest first, paged',
    description:
      'Filter by person (`label`), unknown faces only (`unknown=true`), time (`from`, `to`), `source` and review `group`; ' +
      'dismissed faces are left out unless `include_dismissed=true`. `next_cursor` gives the next page. What is kept, and for how long: ' +
      'SIGHTINGS_ENABLED, SIGHTINGS_SOURCES, SIGHTINGS_RETENTION_DAYS, SIGHTINGS_MAX, SIGHTINGS_INTERVAL_S.',
    tags: ['Sightings'],
    request: { query: sightingsQuery },
    responses: ok(sightingsResponse, 'One page of sightings.'),
    errors: [],
  }),
  // #36 4 (before `sighting`, whose {id} would match "status")
  sightingsStatus: defineRoute({
    ...ENDPOINTS.sightingsStatus,
    summary: 'The queue of sightings waiting to be stored (below recognition: they wait while recognitions run)',
    description:
      "A sighting's crop, descriptor and row are made after the answer, when no recognition runs. `queued`: jobs " +
      'waiting; `dropped`: jobs dropped since the start, the oldest first, because the queue (256 jobs) was full while ' +
      'recognitions kept the server busy, or at shutdown; `stored` and `failed`: sightings since the start.',
    tags: ['Sightings'],
    responses: ok(sightingsStatusResponse, 'The queue now.'),
    errors: [],
  }),
  sighting: defineRoute({
    ...ENDPOINTS.sighting,
    summary: 'One sighting',
    tags: ['Sightings'],
    request: { params: sightingParams },
    responses: ok(sighting, 'The sighting.'),
    errors: ['bad_request', 'not_found'],
  }),
  sightingCrop: defineRoute({
    ...ENDPOINTS.sightingCrop,
    summary: "A sighting's face crop (JPEG)",
    description: 'The face box widened by 40% each side, its longest side at most 160 px.',
    tags: ['Sightings'],
    request: { params: sightingParams },
    responses: { 200: { description: 'The crop.', content: { 'image/jpeg': { schema: binaryBody } } } },
    errors: ['bad_request', 'not_found'],
  }),
  deleteSighting: defineRoute({
    ...ENDPOINTS.deleteSighting,
    summary: 'Delete one sighting and its crop',
    tags: ['Sightings'],
    request: { params: sightingParams },
    responses: ok(sightingDeleteResponse, 'Deleted.'),
    errors: ['bad_request', 'not_found'],
  }),
  purgeSightings: defineRoute({
    ...ENDPOINTS.purgeSightings,
    summary: 'Delete the sightings seen before a time, with their crops',
    tags: ['Sightings'],
    request: { query: sightingsPurgeQuery },
    responses: ok(sightingsPurgeResponse, 'Deleted.'),
    errors: [],
  }),
  detectObjects: defineRoute({
    ...ENDPOINTS.detectObjects,
    summary: 'Detect objects (80 COCO classes) in one image',
    tags: ['Objects'],
    request: { body: jsonBody(objectDetectRequest, { image: EXAMPLE_IMAGE, confidence: 0.4 }) },
    responses: ok(objectDetectionResponse, 'The objects found.'),
    errors: ['invalid_image', 'image_too_large', 'detector_unavailable', 'server_busy'],
  }),
  objectClasses: defineRoute({
    ...ENDPOINTS.objectClasses,
    summary: 'The class names the detector knows',
    tags: ['Objects'],
    responses: ok(objectClassesResponse, 'The classes, index = `class_id`.'),
    errors: [],
  }),
  objectStatus: defineRoute({
    ...ENDPOINTS.objectStatus,
    summary: "The object detector's state",
    tags: ['Objects'],
    responses: ok(objectStatusResponse, 'The detector.'),
    errors: [],
  }),
  storeResults: defineRoute({
    ...ENDPOINTS.storeResults,
    summary: 'Store results captured on a device',
    description:
      '1 to 100 records, all or nothing: one invalid record and none is stored. Re-sent records (same `id`) are counted as duplicates.',
    tags: ['Results'],
    request: { body: jsonBody(resultsPostRequest) },
    responses: ok(resultsPostResponse, 'Stored.'),
    errors: [],
  }),
  results: defineRoute({
    ...ENDPOINTS.results,
    summary: 'The results history, newest first',
    tags: ['Results'],
    request: { query: resultsQuery },
    responses: ok(resultsListResponse, 'The matching records.'),
    errors: [],
  }),
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
      'Faces named nobody, not dismissed and not assigned, grouped by their face descriptors (clustered on the faces themselves, by the ' +
      'limit of the embedding rule of the descriptor in use); two faces of one picture are never in one group; a face without a ' +
      'descriptor is a group of its own. Groups may be revised as faces arrive; a group keeps its id with most of its faces. A group ' +
      'whose faces do not agree is `coherent: false`, with why.',
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
  chat: defineRoute({
    ...ENDPOINTS.chat,
    summary: 'Ask about an image',
    description:
      'The server analyses the image (faces and objects) and asks the configured LLM. With `stream: true` the answer is ' +
      'server-sent events (`text/event-stream`), each described by ChatStreamEvent.',
    tags: ['Chat'],
    request: { body: jsonBody(chatRequest, { message: 'Who is in this picture?', image: EXAMPLE_IMAGE }) },
    responses: {
      200: {
        description: 'The reply: one JSON object, or with `stream: true` a stream of server-sent events.',
        content: {
          'application/json': { schema: chatResponse },
          'text/event-stream': {
            schema: chatStreamEvent,
            example:
              'event: analysis\ndata: {"faces":[],"objects":[],"detection_method":"local"}\n\n' +
              'event: delta\ndata: {"content":"Nobody"}\n\nevent: done\ndata: {"response":"Nobody"}\n\n',
          },
        },
      },
    },
    errors: [
      'invalid_image',
      'image_too_large',
      'remote_unavailable',
      'server_busy',
      'chat_disabled',
      'chat_not_configured',
      'llm_unavailable',
      'llm_bad_gateway',
      'llm_timeout',
      'llm_busy',
    ],
  }),
  chatStatus: defineRoute({
    ...ENDPOINTS.chatStatus,
    summary: 'The chat feature and its LLM endpoint',
    tags: ['Chat'],
    responses: ok(chatStatusResponse, 'The status.'),
    errors: [],
  }),
  processorStatus: defineRoute({
    ...ENDPOINTS.processorStatus,
    summary: "The event processor's state, relayed",
    description:
      "With PROCESSOR_URL set, the last answer of the processor's `GET /ready` (checked in the background every few seconds, " +
      'its 503 "not ready" answer included); `configured: false` otherwise. A processor that cannot be reached, or whose ' +
      'answer is not a ProcessorReady (`error`: `unexpected answer`), is `reachable: false` with `processor: null`.',
    tags: ['Events'],
    responses: ok(processorStatusResponse, 'The last check.'),
    errors: [],
  }),
  ppeDetect: defineRoute({
    ...ENDPOINTS.ppeDetect,
    summary: 'Check one frame for protective equipment, person by person',
    description:
      'The frame goes to the PPE detector as JPEG (`POST {PPE_ENDPOINT}/v1/predict`). Each person must wear every item of ' +
      'PPE_EXPECTED; items belong to the person whose box holds most of them (hardhat and goggles on the head, the vest on ' +
      'the torso). On a violation the chat LLM adds a safety analysis. Every check is published as `ppe_compliance_check` ' +
      '(Kafka when KAFKA_BROKERS is set) and kept in the local history; a failed stage puts `ppe_processing_failed` on ' +
      'the dead-letter topic.',
    tags: ['PPE'],
    request: { body: jsonBody(ppeDetectRequest, { image: EXAMPLE_IMAGE, confidence: 0.5 }) },
    responses: ok(ppeDetectResponse, 'The verdict, per person and for the frame.'),
    errors: [
      'invalid_image',
      'image_too_large',
      'server_busy',
      'ppe_disabled',
      'ppe_not_configured',
      'ppe_detector_unavailable',
      'ppe_detector_failed',
      'ppe_detector_timeout',
    ],
  }),
  ppeStatus: defineRoute({
    ...ENDPOINTS.ppeStatus,
    summary: 'Whether PPE checks can run, and how they are configured',
    tags: ['PPE'],
    responses: ok(ppeStatusResponse, 'The status.'),
    errors: [],
  }),
  ppeEvents: defineRoute({
    ...ENDPOINTS.ppeEvents,
    summary: 'The history of PPE checks, newest first',
    description: 'The last PPE_HISTORY_MAX checks kept in DATA_DIR/ppe/ (with or without Kafka), optionally of one status.',
    tags: ['PPE'],
    request: { query: ppeEventsQuery },
    responses: ok(ppeEventsResponse, 'The matching checks.'),
    errors: [],
  }),
  ppeDataset: defineRoute({
    ...ENDPOINTS.ppeDataset,
    summary: 'The frames checked so far with YOLO labels, as a zip (training data for the next model)',
    tags: ['PPE'],
    responses: {
      200: {
        description: 'A zip: images/, labels/ (YOLO format) and classes.txt.',
        content: { 'application/zip': { schema: binaryBody } },
      },
    },
    errors: ['dataset_disabled'],
  }),
  openapi: defineRoute({
    ...ENDPOINTS.openapi,
    summary: 'This API description (OpenAPI 3.1)',
    tags: ['Docs'],
    responses: {
      200: { description: 'The OpenAPI document.', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
    },
    errors: [],
  }),
  docs: defineRoute({
    ...ENDPOINTS.docs,
    summary: 'The interactive API reference (Swagger UI, served from this server: works offline)',
    tags: ['Docs'],
    responses: { 200: { description: 'The page.', content: { 'text/html': { schema: docsFile } } } },
    errors: [],
  }),
  docsAsset: defineRoute({
    ...ENDPOINTS.docsAsset,
    summary: 'A file of the API reference page (script, style sheet, icon)',
    tags: ['Docs'],
    request: { params: z.object({ file: z.string().meta({ example: 'swagger-ui.css' }) }) },
    responses: {
      200: {
        description: 'The file.',
        content: {
          'text/javascript': { schema: docsFile },
          'text/css': { schema: docsFile },
          'image/png': { schema: binaryBody },
        },
      },
    },
    errors: ['not_found'],
  }),
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
      'never loses one. Sightings recognised as or assigned to them and their corrections follow. The models still hold both ' +
      'labels until the next training (`retrain_needed`). Undoable (the photos go back); in the audit log.',
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
      'and cover come back. Undone once (409 `already_undone` the second time); a merge or a move waits for a running training.',
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
} satisfies Record<EndpointName, ApiRoute>;

/** The table with who may call each route under AUTH_MODE=oidc (roles.ts, beside this file). */
export const apiRoutes = withAccess(routeTable);

export type ApiRoutes = typeof apiRoutes;
export type RouteName = keyof ApiRoutes;

/**
 * The API server's endpoints outside /api, in its document at their own paths. Only probes and scrapers call them:
 * the typed client does not.
 */
export const rootRoutes = {
  metrics: metricsRoute(
    'request durations by route and status, engine timings, worker queue depths, trainings, upstream errors and the ' +
      'default Node.js process metrics (docs/operations.md, "Metrics and request ids"). No labels or secrets.',
  ),
} satisfies Record<string, ApiRoute>;

export type RootRouteName = keyof typeof rootRoutes;
