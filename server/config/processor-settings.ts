/**
 * The event processor's own settings (`npm run processor`). It reads the server's table as well (DATA_DIR, HOST,
 * LOG_LEVEL, LOG_FORMAT, REMOTE_DETECTOR_URL, REMOTE_DETECTOR_MODEL_NAME, REMOTE_DETECTOR_TIMEOUT_MS, the Kafka
 * connection); the API server does not read this one, so a processor setting can never stop the API server.
 * Documented in docs/settings.md.
 */
import { z } from 'zod';
import { boolean, httpUrlOrEmpty, integer, type SettingSpec } from './setting-schemas.js';

export const PROCESSOR_SETTINGS = {
  processorPort: {
    env: 'PROCESSOR_PORT',
    schema: integer(0, 65535),
    default: '8090',
    doc: "TCP port of the processor's health server (`/health`, `/ready`), on `HOST`.",
  },
  processorBackendUrl: {
    env: 'PROCESSOR_BACKEND_URL',
    schema: z.url({ protocol: /^https?$/ }),
    default: 'http://127.0.0.1:8080',
    doc: 'Base URL of the Lookout API the processor polls (`/api/labels`, `/api/models/config`).',
  },
  processorOidcTokenUrl: {
    env: 'PROCESSOR_OIDC_TOKEN_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "Token endpoint of the issuer (e.g. `<OIDC_ISSUER>/protocol/openid-connect/token`) for the processor's client-credentials token, sent on its polls when the API runs with `AUTH_MODE=oidc`; empty: no token.",
  },
  processorOidcClientId: {
    env: 'PROCESSOR_OIDC_CLIENT_ID',
    schema: z.string().trim().min(1),
    default: 'lookout-service',
    doc: 'Confidential client the processor asks a token for (it needs role `biometric-user` at least).',
  },
  processorOidcClientSecret: {
    env: 'PROCESSOR_OIDC_CLIENT_SECRET',
    schema: z.string(),
    default: '',
    doc: "That client's secret (never logged).",
  },
  processorOidcClientSecretFile: {
    env: 'PROCESSOR_OIDC_CLIENT_SECRET_FILE',
    schema: z.string().trim(),
    default: '',
    doc: 'File holding the secret instead (a mounted Secret, read at each token fetch); wins over `PROCESSOR_OIDC_CLIENT_SECRET`.',
  },
  processorPollIntervalMs: {
    env: 'PROCESSOR_POLL_INTERVAL_MS',
    schema: integer(100, 86_400_000),
    default: '30000',
    doc: 'Time between two polls of the labels and of the remote model server, in milliseconds.',
  },
  processorCameraId: {
    env: 'PROCESSOR_CAMERA_ID',
    schema: z.string().trim().min(1),
    default: 'default',
    doc: '`camera_id` of every event the processor publishes.',
  },
  processorSource: {
    env: 'PROCESSOR_SOURCE',
    schema: z.string().trim().min(1),
    default: 'lookout-processor',
    doc: '`source` of every event the processor publishes.',
  },
  processorStateDir: {
    env: 'PROCESSOR_STATE_DIR',
    schema: z.string().trim(),
    default: '',
    doc: "The processor's state (labels announced, mail ledger, last mailed model states, the in-process queue); empty: `<DATA_DIR>/processor`. Processors of one consumer group share it.",
  },
  processorAnnounceExisting: {
    env: 'PROCESSOR_ANNOUNCE_EXISTING',
    schema: boolean,
    default: 'false',
    doc: 'On the very first start, announce the labels that already exist (default: record them silently).',
  },
  processorExitAfterMails: {
    env: 'PROCESSOR_EXIT_AFTER_MAILS',
    schema: integer(0, 1_000_000),
    default: '0',
    doc: 'Fault injection for tests: exit (code 70) right after the N-th mail is accepted and recorded, before its offset is committed; 0: off.',
  },
  kafkaGroupId: {
    env: 'KAFKA_GROUP_ID',
    schema: z.string().trim().min(1),
    default: 'lookout-processor',
    doc: 'Consumer group of the processors (they share the partitions; one of them polls).',
  },
  kafkaTopicFace: {
    env: 'KAFKA_TOPIC_FACE',
    schema: z.string().trim().min(1),
    default: 'cv.face.detections',
    doc: 'Topic of the face pipeline events.',
  },
  kafkaTopicFaceDlq: {
    env: 'KAFKA_TOPIC_FACE_DLQ',
    schema: z.string().trim().min(1),
    default: 'dlq.face-notifications',
    doc: 'Dead-letter topic: events whose mail failed `MAIL_MAX_ATTEMPTS` times (or could not be read), with the error; in-process: files in `<state>/queue/<topic>/`.',
  },
  kafkaSessionTimeoutMs: {
    env: 'KAFKA_SESSION_TIMEOUT_MS',
    schema: integer(1000, 600_000),
    default: '30000',
    doc: 'Consumer session timeout: how long a silent processor keeps its partitions before the group takes them over.',
  },
  mailTransport: {
    env: 'MAIL_TRANSPORT',
    schema: z.enum(['file', 'mailpit', 'smtp']),
    default: 'file',
    doc: '`file` (each mail an `.eml` file in `<DATA_DIR>/outbox/`), `mailpit` (its HTTP send API) or `smtp`.',
  },
  mailUrl: {
    env: 'MAIL_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: 'Base URL of Mailpit for `MAIL_TRANSPORT=mailpit` (`/api/v1/send` is appended).',
  },
  mailSmtpUrl: {
    env: 'MAIL_SMTP_URL',
    schema: z.union([z.literal(''), z.url({ protocol: /^smtps?$/ })]),
    default: '',
    doc: 'SMTP server for `MAIL_TRANSPORT=smtp`, e.g. `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://` (never logged).',
  },
  mailSmtpCaFile: {
    env: 'MAIL_SMTP_CA_FILE',
    schema: z.string().trim(),
    default: '',
    doc: "PEM file of a private CA to trust for the SMTP server's certificate (STARTTLS or smtps://).",
  },
  mailFrom: {
    env: 'MAIL_FROM',
    schema: z.string().trim().min(3),
    default: 'Lookout <lookout@localhost>',
    doc: 'Sender of every mail (`Name <address>` or an address).',
  },
  mailSecurityTo: {
    env: 'MAIL_SECURITY_TO',
    schema: z.string().trim().min(3),
    default: 'security@localhost',
    doc: 'Recipient of `person_registered` mails (the security administrators), comma separated.',
  },
  mailMlopsTo: {
    env: 'MAIL_MLOPS_TO',
    schema: z.string().trim().min(3),
    default: 'mlops@localhost',
    doc: 'Recipient of `remote_model_status` mails (ML operations), comma separated.',
  },
  mailRemoteStatus: {
    env: 'MAIL_REMOTE_STATUS',
    schema: z.enum(['changes', 'every']),
    default: 'changes',
    doc: '`changes`: mail a model status only when its state changed since the last mail; `every`: every status event.',
  },
  mailMaxAttempts: {
    env: 'MAIL_MAX_ATTEMPTS',
    schema: integer(1, 1000),
    default: '10',
    doc: 'Tries of one mail before its event goes to the dead-letter topic.',
  },
  mailRetryBaseMs: {
    env: 'MAIL_RETRY_BASE_MS',
    schema: integer(1, 3_600_000),
    default: '1000',
    doc: 'Wait before the second try of a mail, in milliseconds; doubled after each failure.',
  },
  mailRetryMaxMs: {
    env: 'MAIL_RETRY_MAX_MS',
    schema: integer(1, 3_600_000),
    default: '60000',
    doc: 'Longest wait between two tries of a mail, in milliseconds.',
  },
  mailTimeoutMs: {
    env: 'MAIL_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '10000',
    doc: 'Timeout of one mail delivery, in milliseconds.',
  },
} as const satisfies Record<string, SettingSpec>;
