/**
 * The PPE module's events (spec "Event `ppe_compliance_check`"): every check is published to `cv.ppe.detections`
 * with exactly the spec's fields plus `persons`; any failed stage of a check puts a `ppe_processing_failed` dead
 * letter on `dlq.ppe-errors`.
 */
import { z } from 'zod';
import { isoUtcTimestamp } from './face-events.js';

export const ppeStatus = z.enum(['compliant', 'violation', 'no_persons']);
export type PpeStatus = z.infer<typeof ppeStatus>;

/** A detector box in pixels of the checked image. */
export const ppeBbox = z.object({ x1: z.number(), y1: z.number(), x2: z.number(), y2: z.number() });
export type PpeBbox = z.infer<typeof ppeBbox>;

export const ppeEventDetection = z.object({
  class_name: z.string(),
  confidence: z.number().min(0).max(1),
  bbox: ppeBbox,
});

/** One person's findings: the box (integers, pixels), the verdict and the items found on and missing from them. */
export const ppePerson = z
  .object({
    x: z.number().int(),
    y: z.number().int(),
    w: z.number().int(),
    h: z.number().int(),
    status: z.enum(['compliant', 'violation']),
    present: z.array(z.string()),
    missing: z.array(z.string()),
  })
  .meta({ id: 'PpePerson' });
export type PpePerson = z.infer<typeof ppePerson>;

export const ppeComplianceCheckEvent = z.object({
  event_type: z.literal('ppe_compliance_check'),
  source: z.string(),
  timestamp: isoUtcTimestamp,
  ppe_status: ppeStatus,
  person_count: z.number().int().min(0),
  expected_ppe: z.array(z.string()),
  present_ppe: z.array(z.string()),
  missing_ppe: z.array(z.string()),
  detections: z.array(ppeEventDetection),
  llm_analysis: z.string().meta({ description: 'Natural-language safety analysis; empty when none was made.' }),
  persons: z.array(ppePerson),
});
export type PpeComplianceCheckEvent = z.infer<typeof ppeComplianceCheckEvent>;

export const ppeFailureStage = z.enum(['decode', 'detector', 'persons', 'llm', 'publish']);
export type PpeFailureStage = z.infer<typeof ppeFailureStage>;

export const ppeProcessingFailedEvent = z.object({
  event_type: z.literal('ppe_processing_failed'),
  timestamp: isoUtcTimestamp,
  stage: ppeFailureStage,
  error: z.object({ code: z.string(), message: z.string() }),
  request: z.object({
    image_sha256: z.string().meta({ description: 'sha256 of the request image bytes as received (decoded from base64), hex.' }),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    confidence: z.number(),
  }),
  attempt: z.number().int().min(1),
});
export type PpeProcessingFailedEvent = z.infer<typeof ppeProcessingFailedEvent>;
