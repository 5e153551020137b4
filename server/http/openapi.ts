/**
 * The OpenAPI 3.1 documents, generated from route tables with @hono/zod-openapi's generator: the API's (shared/api/routes.ts,
 * under /api) and the event processor's (`processorRoutes` of shared/api/processor.ts, at its root), from the same zod
 * schemas the servers answer with and the client is typed from.
 */
import { createRoute, OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import { errorBody } from '../../shared/api/common.js';
import type { ErrorCode } from '../../shared/api/errors.js';
import { errorStatusesOf, type ApiRoute } from '../../shared/api/route.js';
import { processorRoutes } from '../../shared/api/processor.js';
import { apiRoutes, rootRoutes } from '../../shared/api/routes.js';

/** A typical message per code, for the examples (the real ones say what exactly was wrong). */
const EXAMPLE_MESSAGES: Partial<Record<ErrorCode, string>> = {
  bad_request: 'field "image": must not be empty',
  invalid_json: 'the request body is not valid JSON',
  invalid_image: 'the image could not be decoded',
  invalid_label: 'label must not be empty',
  missing_field: 'the request body is empty; send a JSON object',
  not_found: 'no such image',
  label_not_found: 'there are no images for label "alice-smith"',
  label_confusable:
    'label "\u0430lice" looks like the existing label "alice" (Unicode confusables, UTS #39): add the images to "alice", or choose a name that cannot be mistaken for it',
  not_trained: 'no model is trained yet; upload images with POST /api/images and run POST /api/train',
  training_in_progress: 'a training run is already in progress (5 of 13 images); try again when it ends',
  model_unavailable: 'detection method "remote" is not available: REMOTE_DETECTOR_ENABLED is false',
  no_training_data: 'there are no training images; upload images with POST /api/images first',
  no_faces_found: 'no face was found in any of the 3 training images; the previous model is kept',
  payload_too_large: 'the request body is larger than 20971520 bytes',
  image_too_large: 'the image is 10000x10000 pixels; at most 40000000 pixels are accepted',
  unsupported_media_type: 'send the body as application/json (got text/html)',
  remote_unavailable: 'the remote detection server is unreachable',
  chat_disabled: 'Chat is switched off on this server (CHAT_ENABLED=false).',
  chat_not_configured: 'Chat needs an LLM endpoint; none is configured (set CHAT_ENDPOINT).',
  llm_unavailable: 'the LLM endpoint could not be reached',
  llm_bad_gateway: 'the reply from the LLM broke off',
  llm_timeout: 'the LLM did not answer within 60000 ms',
  llm_busy: 'the offline model is answering another question; try again in a moment',
  detector_unavailable: 'the object detector is not available',
  ppe_disabled: 'PPE checks are switched off on this server (PPE_ENABLED=false)',
  ppe_not_configured: 'PPE checks need a PPE detector; none is configured (set PPE_ENDPOINT)',
  ppe_detector_unavailable: 'the PPE detector at http://ppe:9100 cannot be reached',
  ppe_detector_failed: 'the PPE detector answered 500: model not loaded',
  ppe_detector_timeout: 'the PPE detector did not answer within 10000 ms',
  dataset_disabled: 'no PPE training set is kept (set PPE_DATASET_DIR)',
  internal_error: 'the server failed to handle this request; it has been logged',
  forbidden_origin:
    'requests from the web page at https://other.example are not accepted; to allow them, add "https://other.example" to the ALLOWED_ORIGINS setting',
  host_not_allowed:
    'this server does not answer for the host "rebind.example"; if that is its name, add "rebind.example" to the ALLOWED_HOSTS setting',
  method_not_allowed: 'GET is not served at /api/train; it answers POST',
  missing_token: 'this endpoint needs a bearer token from http://127.0.0.1:8081/realms/lookout (Authorization: Bearer <access token>)',
  invalid_token: 'the token expired at 2026-11-24T10:20:30.000Z',
  insufficient_role: 'this endpoint needs the role biometric-admin; the token has biometric-user',
  not_own_label:
    'a user may verify only their own label (alice-smith); verifying "bob" needs the role biometric-verifier or biometric-admin',
  rate_limited: 'too many verifications by this caller: 20 within 60 s (VERIFY_RATE_PER_CALLER); try again in 42 s',
  rate_limit_unavailable: 'the verification counters could not be read (the database); verification is denied until they can be',
  auth_unavailable:
    "the identity provider's keys could not be fetched from http://127.0.0.1:8081/realms/lookout/protocol/openid-connect/certs; requests are denied until they can be",
  storage_unavailable: 'the shared storage cannot be reached; the change was not made, try again shortly',
  server_busy:
    'the server is decoding 96.0 MP of images (MAX_INFLIGHT_PIXELS 96.0 MP) and this 36.0 MP image did not fit within 2000 ms; try again in 1 s',
};

function errorResponse(codes: ErrorCode[]) {
  return {
    description: `Error: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    content: {
      'application/json': {
        schema: errorBody,
        examples: Object.fromEntries(
          codes.map((code) => {
            const message = EXAMPLE_MESSAGES[code] ?? code.replace(/_/g, ' ');
            return [code, { summary: code, value: { error: { code, message }, detail: message } }];
          }),
        ),
      },
    },
  };
}

/** One table entry as @hono/zod-openapi's route config, with its error answers added; `prefix` goes before its path. */
export function routeConfig(name: string, route: ApiRoute, prefix = '/api'): RouteConfig {
  const responses: RouteConfig['responses'] = {};
  for (const [status, res] of Object.entries(route.responses)) responses[status] = res;
  for (const [status, codes] of errorStatusesOf(route)) responses[status] = errorResponse(codes);
  const role = route.access && route.access !== 'public' ? route.access : null;
  const roleNote = role ? `With AUTH_MODE=oidc: a bearer token with the role \`${role}\`.` : '';
  const description = [route.description, roleNote].filter(Boolean).join(' ');
  return createRoute({
    method: route.method,
    path: `${prefix}${route.path}`,
    operationId: name,
    summary: route.summary,
    ...(description ? { description } : {}),
    ...(role ? { security: [{ [BEARER_SCHEME]: [] }] } : {}),
    tags: [...route.tags],
    ...(route.request ? { request: route.request } : {}),
    responses,
  });
}

const TAGS = [
  { name: 'Faces', description: 'Recognition, training images and labels.' },
  { name: 'Training', description: 'Training the recognizers on the stored images.' },
  { name: 'Models', description: 'Which engines are active, and the trained models for browsers.' },
  { name: 'Objects', description: 'Object detection (80 COCO classes).' },
  { name: 'Results', description: 'The results history captured on devices.' },
  // #26 sightings
  { name: 'Sightings', description: 'Faces the recognitions saw, with their crops: list, filter, delete (SIGHTINGS_* settings).' },
  // #26 review
  { name: 'Review', description: 'Reviewing what the service saw: unknown faces grouped, assigned to people or dismissed, with undo.' },
  { name: 'Chat', description: 'Questions about an image, answered by an LLM.' },
  { name: 'PPE', description: 'Protective-equipment compliance, checked per person.' },
  { name: 'Events', description: 'The event processor (face events, mails), as the API server sees it.' },
  { name: 'Health', description: 'Probes.' },
  { name: 'Auth', description: 'Signing in (AUTH_MODE=oidc).' },
  { name: 'Docs', description: 'This description and its reference page.' },
];

/** The bearer scheme of the operations that need a role (shared/api/roles.ts), checked only under AUTH_MODE=oidc. */
const BEARER_SCHEME = 'bearer';
const BEARER_DESCRIPTION =
  'An access token (JWT) of the OpenID issuer OIDC_ISSUER, audience OIDC_AUDIENCE, with the role the operation names in ' +
  "`realm_access.roles` (Keycloak's shape; `biometric-admin` may do what `biometric-user` may). Checked only when the " +
  'server runs with AUTH_MODE=oidc (GET /api/auth/config says so); with AUTH_MODE=off (the default) no token is needed. ' +
  '401 `missing_token` or `invalid_token` (with `WWW-Authenticate: Bearer`), 403 `insufficient_role`, 503 `auth_unavailable` ' +
  "when the issuer's keys cannot be fetched (the request is denied).";

const ERROR_BODY_NOTE =
  'Every error answers `{ "error": { "code", "message" } }` with the status its code implies; codes are stable identifiers ' +
  'for programs, messages are sentences for people.';
/** The API keeps the original service's (v1.2.0) fields for its clients; the processor is Lookout's own. */
const COMPAT_NOTE =
  "Error bodies also carry `detail`, the message as the original service's FastAPI answers gave it. Fields described as " +
  '"Compatibility (original v1.2.0)" (marked `x-compat: true`) keep the names and types the original service answered, ' +
  'beside Lookout\'s own (docs/migrating.md, "Moving from the original service"). A request with Angular\'s default ' +
  "`Accept: application/json, text/plain, */*`, as the original's frontend sends, gets the original's identifiers in the " +
  'fields that frontend reads on GET /api/ready, /api/models/config, /api/models/available, PUT /api/models/detection and ' +
  'POST /api/recognize, /api/train, /api/analyze, /api/chat (`detection_method` `opencv`/`openvino`, `ai_model`, ' +
  '`model_info.type` and `models[].type` `dlib`, `detection_methods[].type`), unless COMPAT_IDENTIFIERS=off; every other ' +
  'request gets the values documented here.';
/** What any path may answer before (or instead of) a documented route: the API's own document says it once. */
const UNROUTED_NOTE =
  'Any request, whatever its path or method, may be refused before routing: 421 `host_not_allowed` when its Host is ' +
  'not one of ALLOWED_HOSTS, 403 `forbidden_origin` when a browser sends it from another web page, 415 ' +
  '`unsupported_media_type` when a request other than GET, HEAD or OPTIONS carries a body that is not JSON or multipart (a form ' +
  'a page could send without asking). A documented path ' +
  'asked with another method answers 405 `method_not_allowed` with an `Allow` header; any other path 404 `not_found` ' +
  '(with AUTH_MODE=oidc, 401 first when it carries no valid token: only the open operations are answered without one).';

interface DocumentSpec {
  routes: Record<string, ApiRoute>;
  /** Before every path of the table: `/api` for the API, `` for the processor. */
  prefix: string;
  /** Routes at the server's root, outside `prefix` (the API's /metrics). */
  rootRoutes?: Record<string, ApiRoute>;
  title: string;
  description: string;
  tags: { name: string; description: string }[];
}

function buildDocument(spec: DocumentSpec, version: string): Record<string, unknown> {
  const app = new OpenAPIHono();
  for (const [name, route] of Object.entries(spec.routes)) app.openAPIRegistry.registerPath(routeConfig(name, route, spec.prefix));
  for (const [name, route] of Object.entries(spec.rootRoutes ?? {})) app.openAPIRegistry.registerPath(routeConfig(name, route, ''));
  if (Object.values(spec.routes).some((r) => r.access && r.access !== 'public'))
    app.openAPIRegistry.registerComponent('securitySchemes', BEARER_SCHEME, {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: BEARER_DESCRIPTION,
    });
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: spec.title, version, description: spec.description, license: { name: 'MIT' } },
    tags: spec.tags,
  }) as unknown as Record<string, unknown>;
}

export function openApiDocument(version: string): Record<string, unknown> {
  return buildDocument(
    {
      routes: apiRoutes,
      prefix: '/api',
      rootRoutes,
      title: 'Lookout API',
      description: `Face recognition and object detection. ${ERROR_BODY_NOTE} ${COMPAT_NOTE} ${UNROUTED_NOTE}`,
      tags: TAGS,
    },
    version,
  );
}

/** The event processor's own document (`npm run processor`, its `GET /openapi.json`): its probes, at its root. */
export function processorOpenApiDocument(version: string): Record<string, unknown> {
  return buildDocument(
    {
      routes: processorRoutes,
      prefix: '',
      title: 'Lookout event processor',
      description:
        "The event processor's health server: liveness, readiness (what the API server relays as `GET /api/processor/status`), " +
        `Prometheus metrics and this description. ${ERROR_BODY_NOTE} Any other path answers 404 \`not_found\`.`,
      tags: [
        { name: 'Health', description: 'Probes.' },
        { name: 'Docs', description: 'This description.' },
      ],
    },
    version,
  );
}
