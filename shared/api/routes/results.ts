/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * Object detection and the recognitions' stored results.
 */
import { EXAMPLE_IMAGE } from '../common.js';
import { objectClassesResponse, objectDetectionResponse, objectDetectRequest, objectStatusResponse } from '../objects.js';
import { resultsListResponse, resultsPostRequest, resultsPostResponse, resultsQuery } from '../results.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const resultRoutes = {
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
      '1 to 100 records, all or nothing: one invalid record and none is stored. Re-sent records (same `id`) are counted as duplicates. ' +
      'A face named (or, unknown, nearest to) a person merged into another since (a device with an old model) is stored under the ' +
      'one who stays, while that merge is not undone and nobody is enrolled under the old label again; an undo of the merge names ' +
      'it back.',
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
} satisfies Partial<Record<EndpointName, ApiRoute>>;
