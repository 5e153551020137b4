/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * The chat about an image, the processor and PPE detection.
 */
import { chatRequest, chatResponse, chatStatusResponse, chatStreamEvent } from '../chat.js';
import { binaryBody, EXAMPLE_IMAGE } from '../common.js';
import { ppeDetectRequest, ppeDetectResponse, ppeEventsQuery, ppeEventsResponse, ppeStatusResponse } from '../ppe.js';
import { processorStatusResponse } from '../processor.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { ok, jsonBody } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const analysisRoutes = {
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
} satisfies Partial<Record<EndpointName, ApiRoute>>;
