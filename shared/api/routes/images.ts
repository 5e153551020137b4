/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * The training images: upload, check, list, fetch and delete a person's photos.
 */
import { binaryBody, EXAMPLE_IMAGE } from '../common.js';
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
} from '../faces.js';
import { imageCheckRequest, imageCheckResponse } from '../enrollment.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const imageRoutes = {
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
} satisfies Partial<Record<EndpointName, ApiRoute>>;
