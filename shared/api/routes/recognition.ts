/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * Recognition: name the faces of an image, analyse it, verify one person (1:1).
 */
import { analyzeRequest, analyzeResponse } from '../analyze.js';
import { EXAMPLE_IMAGE } from '../common.js';
import { recognizeRequest, recognizeResponse } from '../faces.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { MAX_VERIFY_FRAMES, verifyRequest, verifyResponse } from '../verify.js';
import { ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const recognitionRoutes = {
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
} satisfies Partial<Record<EndpointName, ApiRoute>>;
