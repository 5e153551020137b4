/** Events: the Kafka connection the API server (PPE checks) and the processor (face events) share, and the processor's state shown on the dashboard. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { boolean, httpUrlOrEmpty, integer, type SettingSpec } from './setting-schemas.js';

export const EVENT_SETTINGS = {
  kafkaBrokers: {
    env: 'KAFKA_BROKERS',
    schema: z.string().trim(),
    default: '',
    doc: 'Kafka bootstrap brokers, comma separated (`host:port,...`); empty: the processor uses an in-process queue on disk (one processor) and PPE checks stay in the local history.',
  },
  kafkaClientId: {
    env: 'KAFKA_CLIENT_ID',
    schema: z.string().trim().min(1),
    default: 'lookout',
    doc: 'Kafka client id (the API server publishes PPE checks, the processor face events).',
  },
  kafkaSsl: { env: 'KAFKA_SSL', schema: boolean, default: 'false', doc: 'Connect to the brokers over TLS.' },
  kafkaSslCaFile: {
    env: 'KAFKA_SSL_CA_FILE',
    schema: z.string().trim(),
    default: '',
    doc: "PEM file of a private CA to trust for the brokers' certificates (implies TLS).",
  },
  kafkaSaslMechanism: {
    env: 'KAFKA_SASL_MECHANISM',
    schema: z.enum(['', 'plain', 'scram-sha-256', 'scram-sha-512']),
    default: '',
    doc: 'SASL mechanism: `scram-sha-512` (the spec cluster), `scram-sha-256` or `plain`; empty: none.',
  },
  kafkaUsername: { env: 'KAFKA_USERNAME', schema: z.string().trim(), default: '', doc: 'SASL user name.' },
  kafkaPassword: {
    env: 'KAFKA_PASSWORD',
    schema: z.string(),
    default: '',
    doc: 'SASL password (never logged or returned).',
  },
  kafkaPasswordFile: {
    env: 'KAFKA_PASSWORD_FILE',
    schema: z.string().trim(),
    default: '',
    doc: 'File holding the SASL password (e.g. a mounted secret); wins over KAFKA_PASSWORD.',
  },
  kafkaRequestTimeoutMs: {
    env: 'KAFKA_REQUEST_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '10000',
    doc: 'Timeout of one request to a broker, in milliseconds (a publish that times out is tried again at the next poll).',
  },
  processorUrl: {
    env: 'PROCESSOR_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "Base URL of the event processor's health server (e.g. `http://127.0.0.1:8090`); when set, the dashboard shows its state.",
  },
  processorCheckIntervalMs: {
    env: 'PROCESSOR_CHECK_INTERVAL_MS',
    schema: integer(100, 3_600_000),
    default: '5000',
    doc: "How often the event processor's `/ready` is read in the background (PROCESSOR_URL set), in milliseconds.",
  },
} as const satisfies Record<string, SettingSpec>;
