/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * Training and the models: train, the recognizers and thresholds in use, and the trained files devices download.
 */
import { z } from 'zod';
import { binaryBody } from '../common.js';
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
} from '../models.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { trainRequest, trainResponse, trainStatusResponse } from '../training.js';
import { compactModelManifest, compactSegmentsQuery } from '../compact-models.js';
import { json, ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const modelRoutes = {
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
} satisfies Partial<Record<EndpointName, ApiRoute>>;
