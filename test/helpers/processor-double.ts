/**
 * TEST DOUBLE of the event processor's health server: a real HTTP server (Hono on @hono/node-server) on
 * 127.0.0.1 answering `GET /ready` with a canned ProcessorReady, so the API server's relay and the dashboard can
 * be tested without Kafka or a running processor. It can answer 503 "not ready" or a body that is not a
 * ProcessorReady, and records the requests it got.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import type { ProcessorReady } from '../../shared/api/index.js';

/** `ready`: 200 with `body`; `not_ready`: 503 with `body` (status `not_ready`); `garbage`: 200 with a non-ProcessorReady. */
export type ProcessorDoubleMode = 'ready' | 'not_ready' | 'garbage';

export interface ProcessorDouble {
  readonly url: string;
  mode: ProcessorDoubleMode;
  body: ProcessorReady;
  /** The Authorization header of each /ready request, in order (undefined when none was sent). */
  readonly authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** A processor on Kafka that polls, has sent mails and had one fail. */
export function sampleProcessorReady(): ProcessorReady {
  return {
    status: 'ready',
    version: '0.1.0',
    uptime_s: 42,
    broker: {
      kind: 'kafka',
      connected: true,
      brokers: ['kafka-0.kafka:9092'],
      topic: 'cv.face.detections',
      dlq_topic: 'dlq.face-notifications',
      group_id: 'lookout-processor',
    },
    role: 'polling',
    polls: {
      interval_ms: 10_000,
      labels: { last_at: '2025-01-02T03:04:05.000Z', ok: true, error: null, known_labels: 3, announced: 3, pending: 0 },
      remote: { last_at: '2025-01-02T03:04:05.000Z', ok: true, error: null, state: 'AVAILABLE' },
    },
    queue: { lag: 2, consumed: 17, unknown_skipped: 0, invalid: 1 },
    mail: {
      transport: 'mailpit',
      target: 'http://mailpit:8025',
      sent: 7,
      failed_attempts: 2,
      dead_lettered: 1,
      duplicates_skipped: 0,
      unchanged_skipped: 4,
      last_sent_at: '2025-01-02T03:04:00.000Z',
      last_error: 'mailpit answered 500',
    },
  };
}

export async function startProcessorDouble(init: Partial<Pick<ProcessorDouble, 'mode' | 'body'>> = {}): Promise<ProcessorDouble> {
  const authorizations: (string | undefined)[] = [];
  const double = {
    url: '',
    mode: init.mode ?? 'ready',
    body: init.body ?? sampleProcessorReady(),
    authorizations,
    close: async () => {},
  } satisfies ProcessorDouble;

  const app = new Hono();
  app.get('/ready', (c) => {
    authorizations.push(c.req.header('authorization'));
    if (double.mode === 'garbage') return c.json({ status: 'ok', hello: 'not a processor' });
    if (double.mode === 'not_ready') return c.json({ ...double.body, status: 'not_ready' }, 503);
    return c.json(double.body);
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  double.url = `http://127.0.0.1:${port}`;
  double.close = () =>
    new Promise<void>((resolve) => {
      // Keep-alive connections of the relay's fetch would hold the port open.
      if ('closeAllConnections' in server) server.closeAllConnections();
      server.close(() => resolve());
    });
  return double;
}
