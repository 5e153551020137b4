/**
 * Chat about an image: `POST /api/chat` (JSON, or server-sent events with `stream: true`) and
 * `GET /api/chat/status`.
 */
import { z } from 'zod';
import { compat, faceResult, imageField, isoTime } from './common.js';
import { detectedObject } from './objects.js';

/** CHAT_MAX_MESSAGE_CHARS's default; the server builds its schema with the configured value. */
export const CHAT_MAX_MESSAGE_CHARS_DEFAULT = 4000;

/** `POST /api/chat` body, for a server that accepts messages of at most `maxChars` characters. */
export function chatRequestFor(maxChars: number) {
  return z.object({
    message: z
      .string({ error: 'must be the question as text' })
      .trim()
      .min(1, 'must not be empty')
      .max(maxChars, `must be at most ${maxChars} characters`)
      .meta({ description: 'The question; at most CHAT_MAX_MESSAGE_CHARS characters.', example: 'Who is in this picture?' }),
    image: imageField.optional(),
    stream: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .meta({ description: 'true: answer with server-sent events (`text/event-stream`) instead of one JSON object.' }),
  });
}
export const chatRequest = chatRequestFor(CHAT_MAX_MESSAGE_CHARS_DEFAULT).meta({ id: 'ChatRequest' });
export type ChatRequest = z.input<typeof chatRequest>;

const featureBox = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() });

/** shared/vision/facial-features.ts FacialFeatures, the original service's per-face `features`. */
export const facialFeatures = z
  .object({
    eyes: z.number().int().min(0).max(2).meta({ description: 'Eyes seen (OpenCV eye and eye-with-eyeglasses cascades), 0 to 2.' }),
    eye_boxes: z.array(featureBox).meta({ description: 'Their boxes in pixels of the submitted image, left to right.' }),
    smiling: z.boolean().meta({ description: 'The smile cascade found a smile in the lower third of the face.' }),
    eyeglasses: z.boolean().meta({
      description: 'The eye-with-eyeglasses cascade found more eyes than the plain eye cascade (which misses eyes behind glasses).',
    }),
    face_too_small: z.boolean().meta({
      description: 'The face is under 80 pixels wide or high and was not searched: then `eyes` 0 and `false` say nothing about the person.',
    }),
    eyes_detected: compat(z.number().int().min(0), 'the eyes seen (`eyes`).'),
    glasses_detected: compat(z.boolean(), 'eyeglasses seen (`eyeglasses`).'),
    smile_detected: compat(z.boolean(), 'a smile seen (`smiling`).'),
    profile_face: compat(
      z.boolean().optional(),
      "OpenCV's profile-face cascade found a face turned to one side in and around the face box; given by the server (PROFILE_CASCADE_FILE), not by the browser's engine.",
    ),
    face_width: compat(z.number().int().min(0), 'the face box width in pixels (`w`).'),
    face_height: compat(z.number().int().min(0), 'the face box height in pixels (`h`).'),
    aspect_ratio: compat(z.number(), 'width / height of the face box, 2 decimals.'),
  })
  .meta({
    id: 'FacialFeatures',
    description: "Facial features of one face, from OpenCV's Haar cascades run on the face box (a `false` means not detected).",
  });

export const chatFace = faceResult.extend({ features: facialFeatures }).meta({ id: 'ChatFace', description: 'One face of the analysis.' });
export type ChatFace = z.infer<typeof chatFace>;

/** One analysed face, as the OpenAPI examples of the chat and the facial analysis show it. */
export const EXAMPLE_CHAT_FACE = {
  x: 120,
  y: 80,
  w: 96,
  h: 96,
  label: 'alice-smith',
  confidence: 87.5,
  features: {
    eyes: 2,
    eye_boxes: [
      { x: 136, y: 104, w: 22, h: 22 },
      { x: 178, y: 105, w: 21, h: 21 },
    ],
    smiling: true,
    eyeglasses: false,
    face_too_small: false,
    eyes_detected: 2,
    glasses_detected: false,
    smile_detected: true,
    profile_face: false,
    face_width: 96,
    face_height: 96,
    aspect_ratio: 1,
  },
} satisfies z.input<typeof chatFace>;

export const chatAnalysis = z
  .object({
    count: compat(z.number().int().min(0), 'the number of faces (`faces.length`).'),
    faces: z.array(chatFace),
    objects: z.array(detectedObject),
    detection_method: z.string(),
    objects_unavailable: z
      .string()
      .optional()
      .meta({ description: 'Set when object detection could not run; the reply was made without objects.' }),
  })
  .meta({ id: 'ChatAnalysis', description: 'What the server saw in the image, given to the LLM with the question.' });
export type ChatAnalysis = z.infer<typeof chatAnalysis>;

export const chatResponse = z
  .object({
    response: z.string(),
    analysis: chatAnalysis.nullable().meta({ description: 'null when no image was sent.' }),
  })
  .meta({
    id: 'ChatResponse',
    example: {
      response: 'One person, recognised as alice-smith, sitting at a desk with a laptop.',
      analysis: {
        count: 1,
        faces: [EXAMPLE_CHAT_FACE],
        objects: [{ class_id: 63, class_name: 'laptop', confidence: 0.8, x: 300, y: 260, w: 200, h: 120 }],
        detection_method: 'local',
      },
    },
  });
export type ChatResponse = z.infer<typeof chatResponse>;

/** The events of a streamed reply, in order: `analysis`, `delta`s, then `done` or `error`. */
export const chatStreamEvent = z
  .discriminatedUnion('event', [
    z.object({ event: z.literal('analysis'), data: chatAnalysis.nullable() }),
    z.object({ event: z.literal('delta'), data: z.object({ content: z.string() }) }),
    z.object({ event: z.literal('done'), data: z.object({ response: z.string() }) }),
    z.object({ event: z.literal('error'), data: z.object({ code: z.string(), message: z.string() }) }),
  ])
  .meta({
    id: 'ChatStreamEvent',
    description:
      'One server-sent event of a streamed reply: the SSE `event:` field is `event`, its `data:` line is `data` as JSON. ' +
      'Order: `analysis`, any number of `delta` (pieces of the reply), then `done` (the whole reply) or `error` (the reply broke off).',
    example: { event: 'delta', data: { content: 'One person' } },
  });
export type ChatStreamEvent = z.infer<typeof chatStreamEvent>;

export const chatStatusResponse = z
  .object({
    enabled: z.boolean().meta({
      description:
        'Chat can answer: switched on (CHAT_ENABLED) and a model configured (CHAT_ENDPOINT or CHAT_MODEL_PATH); `reason` says why not.',
    }),
    switched_on: z.boolean().meta({ description: 'CHAT_ENABLED: chat is switched on, configured or not.' }),
    endpoint_configured: z.boolean(),
    endpoint: z
      .string()
      .nullable()
      .meta({ description: 'Base URL of the LLM endpoint without credentials; null when none is configured.' }),
    model: z
      .string()
      .nullable()
      .meta({ description: 'The model requests name (configured, else the first one the server lists); null while unknown.' }),
    reachable: z.boolean(),
    reason: z.string().optional().meta({ description: 'Why it is not reachable, in words; absent when it is.' }),
    models: z.array(z.string()).optional().meta({ description: 'Models the endpoint listed at the last check, when it succeeded.' }),
    checked_at: isoTime.nullable(),
    model_endpoint: compat(z.string().nullable(), 'the LLM endpoint (`endpoint`).'),
    model_name: compat(z.string().nullable(), 'the model (`model`).'),
  })
  .meta({
    id: 'ChatStatusResponse',
    example: {
      enabled: true,
      switched_on: true,
      endpoint_configured: true,
      endpoint: 'http://127.0.0.1:8080/v1',
      model: 'qwen2.5-1.5b-instruct',
      reachable: true,
      models: ['qwen2.5-1.5b-instruct'],
      checked_at: '2024-05-01T12:00:00.000Z',
      model_endpoint: 'http://127.0.0.1:8080/v1',
      model_name: 'qwen2.5-1.5b-instruct',
    },
  });
export type ChatStatusResponse = z.infer<typeof chatStatusResponse>;
/** The name the status body had before the contract was one schema per response. */
export type ChatStatusBody = ChatStatusResponse;
