/**
 * PPE compliance (`/api/ppe/*`): a frame is checked per person for the expected protective equipment. The
 * verdict's fields are those of the `ppe_compliance_check` event (shared/events/ppe-events.ts).
 */
import { z } from 'zod';
import { ppeComplianceCheckEvent, ppePerson, ppeStatus } from '../events/ppe-events.js';
import { compat, imageField, isoTime } from './common.js';

export const ppeDetectRequest = z
  .object({
    image: imageField,
    confidence: z
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be from 0 to 1')
      .max(1, 'must be from 0 to 1')
      .optional()
      .meta({ description: 'Lowest detector confidence kept (sent to the detector as X-Confidence); default PPE_CONFIDENCE.' }),
  })
  .meta({ id: 'PpeDetectRequest' });
export type PpeDetectRequest = z.infer<typeof ppeDetectRequest>;

/** One detection as the response lists it: the box in integer pixels, and what the rule made of it. */
export const ppeObject = z
  .object({
    class_id: z.number().int(),
    class_name: z.string(),
    confidence: z.number().min(0).max(1),
    x: z.number().int(),
    y: z.number().int(),
    w: z.number().int(),
    h: z.number().int(),
    item: z.string().nullable().meta({ description: 'The expected item this detection is (or shows missing); null otherwise.' }),
    absent: z.boolean().meta({ description: 'A `NO-<item>` class: the item is missing on the person it overlaps.' }),
    source: z.enum(['ppe_detector', 'object_detector']).meta({ description: 'Who found it (persons may come from the object detector).' }),
    bbox: compat(
      z.object({ x1: z.number().int(), y1: z.number().int(), x2: z.number().int(), y2: z.number().int() }),
      'the box as its corners in pixels (`x1 = x`, `y1 = y`, `x2 = x + w`, `y2 = y + h`), as the v1.5.0 PPE page draws it.',
    ),
  })
  .meta({ id: 'PpeObject' });
export type PpeObject = z.infer<typeof ppeObject>;

export const ppeDetectResponse = z
  .object({
    id: z.string().meta({ description: 'Id of this check (the key of its event and history record).' }),
    timestamp: isoTime,
    objects: z.array(ppeObject),
    count: z.number().int(),
    summary: z.record(z.string(), z.number().int()).meta({ description: 'Class name -> number of detections.' }),
    ppe_status: ppeStatus,
    person_count: z.number().int(),
    expected_ppe: z.array(z.string()),
    present_ppe: z.array(z.string()),
    missing_ppe: z.array(z.string()),
    persons: z.array(ppePerson),
    llm_analysis: z
      .string()
      .nullable()
      .meta({ description: 'Safety analysis by the chat LLM on a violation; null otherwise or when it failed.' }),
    width: z.number().int(),
    height: z.number().int(),
  })
  .meta({ id: 'PpeDetectResponse' });
export type PpeDetectResponse = z.infer<typeof ppeDetectResponse>;

export const ppeStatusResponse = z
  .object({
    enabled: z.boolean(),
    endpoint: z.string().nullable().meta({ description: 'PPE_ENDPOINT without credentials; null when not set.' }),
    reachable: z.boolean().meta({ description: "From the detector's GET /health, checked in the background." }),
    checked_at: isoTime.nullable(),
    reason: z.string().nullable().meta({ description: 'Why checks cannot run now, in words; null when they can.' }),
    expected: z.array(z.string()),
    expected_ppe: compat(z.array(z.string()), 'the expected items (`expected`).'),
    aliases: z.record(z.string(), z.string()).meta({ description: 'Detector class name (lower case) -> expected item.' }),
    events: z.object({
      sink: z
        .enum(['kafka', 'history'])
        .meta({ description: 'Where checks go: Kafka when KAFKA_BROKERS is set, else only the local history.' }),
      topic: z.string(),
      dlq_topic: z.string(),
      dead_letters: z.string().meta({ description: 'Where dead letters go: `kafka topic <name>` or `file <path>` (without Kafka).' }),
    }),
    history_size: z.number().int(),
    dataset: z.object({ enabled: z.boolean(), images: z.number().int() }),
  })
  .meta({ id: 'PpeStatusResponse' });
export type PpeStatusResponse = z.infer<typeof ppeStatusResponse>;

export const ppeEventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional().meta({ description: 'Newest first; default 100.' }),
  status: ppeStatus.optional(),
});

/** A check as the history keeps it: the event plus its id. */
export const ppeHistoryRecord = ppeComplianceCheckEvent.extend({ id: z.string() }).meta({ id: 'PpeHistoryRecord' });
export type PpeHistoryRecord = z.infer<typeof ppeHistoryRecord>;

export const ppeEventsResponse = z
  .object({ events: z.array(ppeHistoryRecord).meta({ description: 'Newest first.' }), count: z.number().int() })
  .meta({ id: 'PpeEventsResponse' });
export type PpeEventsResponse = z.infer<typeof ppeEventsResponse>;
