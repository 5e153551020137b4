/**
 * The event processor's state (`npm run processor`): its own `GET /ready` answers `ProcessorReady`, and the API
 * server relays it as `GET /api/processor/status` when PROCESSOR_URL is set, so the dashboard can show it.
 * `processorRoutes` is the table of the processor's own endpoints (at its root, not under /api), which its
 * `GET /openapi.json` publishes.
 */
import { z } from 'zod';
import { healthResponse } from './health.js';
import { defineRoute } from './route.js';

const isoTime = z.string().meta({ description: 'ISO 8601 UTC time.' });

export const processorPoll = z
  .object({
    last_at: isoTime.nullable().meta({ description: 'When the last poll ended; null before the first.' }),
    ok: z.boolean().nullable().meta({ description: 'Whether it succeeded; null before the first.' }),
    error: z.string().nullable().meta({ description: 'Why the last poll failed (no credentials in it).' }),
  })
  .meta({ id: 'ProcessorPoll' });

export const processorReady = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    reason: z.string().optional().meta({
      description:
        "Why it is not ready (absent when ready): the broker, stopping, or the token endpoint refusing the processor's client credentials (no secret in it).",
    }),
    version: z.string(),
    uptime_s: z.number().int(),
    broker: z.object({
      kind: z.enum(['kafka', 'in-process']),
      connected: z.boolean(),
      brokers: z.array(z.string()).meta({ description: 'host:port of each bootstrap broker; empty in-process.' }),
      topic: z.string(),
      dlq_topic: z.string(),
      group_id: z.string(),
    }),
    role: z
      .enum(['polling', 'standby', 'stopped'])
      .meta({ description: 'Whether this processor polls (one per consumer group does) or stands by.' }),
    polls: z.object({
      interval_ms: z.number().int(),
      labels: processorPoll.extend({
        known_labels: z.number().int(),
        announced: z.number().int().meta({ description: 'person_registered events acknowledged by the broker.' }),
        pending: z.number().int().meta({ description: 'Labels seen but not yet acknowledged (announced when the broker is back).' }),
      }),
      remote: processorPoll
        .extend({ state: z.string().nullable().meta({ description: 'AVAILABLE, LOADING, missing, unreachable, ...' }) })
        .nullable()
        .meta({ description: 'null when no REMOTE_DETECTOR_URL is set.' }),
    }),
    queue: z.object({
      lag: z
        .number()
        .int()
        .nullable()
        .meta({ description: 'Events published and not yet handled by this group (in-process: waiting on disk).' }),
      consumed: z.number().int(),
      unknown_skipped: z.number().int(),
      invalid: z.number().int(),
    }),
    mail: z.object({
      transport: z.enum(['file', 'mailpit', 'smtp']),
      target: z.string().meta({ description: 'Where mails go, without credentials.' }),
      sent: z.number().int(),
      failed_attempts: z.number().int(),
      dead_lettered: z.number().int(),
      duplicates_skipped: z.number().int(),
      unchanged_skipped: z.number().int().meta({ description: 'remote_model_status events not mailed: the state had not changed.' }),
      last_sent_at: isoTime.nullable(),
      last_error: z.string().nullable(),
    }),
  })
  .meta({ id: 'ProcessorReady' });
export type ProcessorReady = z.infer<typeof processorReady>;

export const processorStatusResponse = z
  .object({
    configured: z.boolean().meta({ description: 'Whether PROCESSOR_URL is set on the API server.' }),
    reachable: z.boolean(),
    checked_at: isoTime.nullable(),
    error: z.string().nullable().meta({ description: 'Why the processor could not be read.' }),
    processor: processorReady.nullable(),
  })
  .meta({ id: 'ProcessorStatusResponse' });
export type ProcessorStatusResponse = z.infer<typeof processorStatusResponse>;

const json = <S extends z.ZodType>(schema: S) => ({ 'application/json': { schema } });

/** The processor's endpoints (paths relative to its root), documented by its `GET /openapi.json`. */
/** `GET /metrics` of a Lookout process (the API server's, the processor's), saying what `measures`. */
export function metricsRoute(measures: string) {
  return defineRoute({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    description: `Text exposition format 0.0.4: ${measures}`,
    tags: ['Health'],
    responses: {
      200: {
        description: 'The metrics.',
        content: { 'text/plain': { schema: z.string().meta({ description: 'Prometheus text exposition format.' }) } },
      },
    },
    errors: [],
  });
}

export const processorRoutes = {
  health: defineRoute({
    method: 'get',
    path: '/health',
    summary: 'Liveness: the process answers',
    tags: ['Health'],
    responses: { 200: { description: 'The processor is up.', content: json(healthResponse) } },
    errors: [],
  }),
  ready: defineRoute({
    method: 'get',
    path: '/ready',
    summary: 'Readiness: connected to the broker and consuming',
    description: 'With the broker, the poller, the queue and the mails beside it; the API server relays it as `GET /api/processor/status`.',
    tags: ['Health'],
    responses: {
      200: { description: 'Ready.', content: json(processorReady) },
      503: {
        description: 'Not ready (broker unreachable, not consuming yet, or stopping); the same body says what.',
        content: json(processorReady),
      },
    },
    errors: [],
  }),
  metrics: metricsRoute(
    'events published and consumed, mails sent, failed mail attempts, dead letters, the consumer lag, and the default Node.js process metrics.',
  ),
  openapi: defineRoute({
    method: 'get',
    path: '/openapi.json',
    summary: "This processor's description (OpenAPI 3.1)",
    tags: ['Docs'],
    responses: {
      200: { description: 'The OpenAPI document.', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
    },
    errors: [],
  }),
};
