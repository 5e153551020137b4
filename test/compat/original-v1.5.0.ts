/**
 * What the original service's later releases (up to v1.5.0) added, as their clients read it: the PPE page of its
 * Angular frontend (`PpeDetectResponse`, `PpeStatusResponse` of its models/interfaces.ts; it draws each box from
 * `objects[].bbox.{x1,y1,x2,y2}` and lists `expected_ppe`) and the upstreams of its `GET /api/ready`
 * (`ppe_serving`, `chat_backend`, present only when configured). Loose objects: Lookout's own fields stand beside.
 */
import { z } from 'zod';

const ppeStatusWord = z.enum(['compliant', 'violation', 'no_persons']);

/** A PPE detection: the box as corners, in pixels of the checked frame. */
export const ppeDetection = z.looseObject({
  class_id: z.number().int(),
  class_name: z.string(),
  confidence: z.number(),
  bbox: z.looseObject({ x1: z.number(), y1: z.number(), x2: z.number(), y2: z.number() }),
});

export const ppeDetect = z.looseObject({
  objects: z.array(ppeDetection),
  count: z.number().int(),
  summary: z.record(z.string(), z.number().int()),
  ppe_status: ppeStatusWord,
  person_count: z.number().int(),
  present_ppe: z.array(z.string()),
  missing_ppe: z.array(z.string()),
  expected_ppe: z.array(z.string()),
  llm_analysis: z.string().nullable().optional(),
});

export const ppeStatus = z.looseObject({
  enabled: z.boolean(),
  endpoint: z.string().nullable(),
  reachable: z.boolean().optional(),
  expected_ppe: z.array(z.string()),
});

/** `ppe_serving` of `GET /api/ready`: the PPE detector, when PPE is on and an endpoint is set. */
export const ppeServing = z.looseObject({
  endpoint: z.string(),
  status: z.enum(['connected', 'error', 'unreachable', 'unknown']),
});

/** `chat_backend` of `GET /api/ready`: the LLM endpoint, when chat is on and an endpoint is set. */
export const chatBackend = z.looseObject({
  endpoint: z.string(),
  via_ai_gateway: z.boolean(),
  status: z.enum(['connected', 'error', 'unreachable']),
});

export const ready = z.looseObject({
  ppe_enabled: z.boolean(),
  ppe_serving: ppeServing.optional(),
  chat_backend: chatBackend.optional(),
});
