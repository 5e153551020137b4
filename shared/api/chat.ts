/**
 * Chat about an image: `POST /api/chat` (JSON, or server-sent events with `stream: true`) and
 * `GET /api/chat/status`.
 */
import { z } from 'zod';
import { faceResult, imageField, isoTime } from './common.js';
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

export const chatAnalysis = z
  .object({
    faces: z.array(faceResult),
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
        faces: [{ x: 120, y: 80, w: 96, h: 96, label: 'alice-smith', confidence: 87.5 }],
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
    enabled: z.boolean(),
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
  })
  .meta({
    id: 'ChatStatusResponse',
    example: {
      enabled: true,
      endpoint_configured: true,
      endpoint: 'http://127.0.0.1:8080/v1',
      model: 'qwen2.5-1.5b-instruct',
      reachable: true,
      models: ['qwen2.5-1.5b-instruct'],
      checked_at: '2024-05-01T12:00:00.000Z',
    },
  });
export type ChatStatusResponse = z.infer<typeof chatStatusResponse>;
/** The name the status body had before the contract was one schema per response. */
export type ChatStatusBody = ChatStatusResponse;
