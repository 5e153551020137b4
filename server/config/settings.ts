/**
 * Runtime settings, read once from the environment at start-up.
 *
 * Every setting of the service spec's table is an environment variable named by its path in upper snake case
 * (`remoteDetector.confidenceThreshold` -> `REMOTE_DETECTOR_CONFIDENCE_THRESHOLD`). A bad value stops the
 * server with a message naming the variable and what it accepts: a typo must not silently fall back.
 *
 * The rows live in one module per concern (http, auth, storage, limits, face, object, chat, ppe, event and
 * processor settings), as docs/settings.md lists them; this module joins them and parses.
 */
import path from 'node:path';
import type { z } from 'zod';
import { defaultRule, limitBound } from '../../shared/recognition/rules.js';
import { AUTH_SETTINGS } from './auth-settings.js';
import { CHAT_SETTINGS } from './chat-settings.js';
import { EVENT_SETTINGS } from './event-settings.js';
import { FACE_SETTINGS } from './face-settings.js';
import { HTTP_SETTINGS } from './http-settings.js';
import { LIMIT_SETTINGS } from './limits-settings.js';
import { OBJECT_SETTINGS } from './object-settings.js';
import { PPE_SETTINGS } from './ppe-settings.js';
import { PROCESSOR_SETTINGS } from './processor-settings.js';
import type { SettingSpec } from './setting-schemas.js';
import { STORAGE_SETTINGS } from './storage-settings.js';

export { boolean, detectionMethodInput, integer, recognitionModelInput } from './setting-schemas.js';
export { PROCESSOR_SETTINGS };

/**
 * The API server's table of settings: the single source for parsing, validation messages and the documented list
 * (docs/settings.md, in this order). Defaults are strings, parsed like any value from the environment.
 */
export const SETTINGS = {
  ...HTTP_SETTINGS,
  ...AUTH_SETTINGS,
  ...STORAGE_SETTINGS,
  ...LIMIT_SETTINGS,
  ...FACE_SETTINGS,
  ...OBJECT_SETTINGS,
  ...CHAT_SETTINGS,
  ...PPE_SETTINGS,
  ...EVENT_SETTINGS,
} as const satisfies Record<string, SettingSpec>;

type Parsed<T extends Record<string, SettingSpec>> = { -readonly [K in keyof T]: z.output<T[K]['schema']> };
export type Settings = Parsed<typeof SETTINGS> & {
  /** Absolute application directory (where `public/` lives). */
  appDir: string;
};
export type ProcessorSettings = Settings & Parsed<typeof PROCESSOR_SETTINGS>;

/** Thrown when one or more environment variables are invalid; the message lists each. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function describe(spec: SettingSpec, issue: z.core.$ZodIssue): string {
  return `${spec.env}: ${issue.message}. ${spec.doc}`;
}

function parseTable(table: Record<string, SettingSpec>, env: NodeJS.ProcessEnv, out: Record<string, unknown>, problems: string[]): void {
  for (const [key, spec] of Object.entries(table)) {
    const raw = env[spec.env] ?? spec.default;
    const result = spec.schema.safeParse(raw);
    if (result.success) out[key] = result.data;
    else problems.push(describe(spec, result.error.issues[0]));
  }
}

/** Parses and validates every setting; throws SettingsError naming each bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv, appDir: string): Settings {
  const problems: string[] = [];
  const out: Record<string, unknown> = { appDir };
  parseTable(SETTINGS, env, out, problems);
  if (problems.length === 0) {
    const s = out as Settings;
    if (s.lbphDistanceMin > (s.lbphDistanceMax === '' ? defaultRule('lbph').max : s.lbphDistanceMax)) {
      problems.push('LBPH_DISTANCE_MIN: must not be larger than LBPH_DISTANCE_MAX.');
    }
    // #35: the deployment's limits are held to the calibrated bounds too (past them strangers pass as anyone).
    if (s.thresholdBounds !== 'off') {
      const limits = [
        ['LBPH_DISTANCE_MAX', s.lbphDistanceMax, limitBound('lbph')],
        ['EMBEDDING_DISTANCE_MAX', s.embeddingDistanceMax, limitBound('embedding', s.embeddingDescriptor)],
      ] as const;
      for (const [env, value, bound] of limits) {
        if (value !== '' && value > bound.max)
          problems.push(`${env}: must be at most ${bound.max} (the calibrated bound: ${bound.basis}), or set THRESHOLD_BOUNDS=off.`);
      }
    }
    if (s.kafkaSaslMechanism && !s.kafkaUsername) problems.push('KAFKA_USERNAME: must be set with KAFKA_SASL_MECHANISM.');
    if (s.authMode === 'oidc' && !s.oidcIssuer) problems.push(`OIDC_ISSUER: must be set with AUTH_MODE=oidc. ${SETTINGS.oidcIssuer.doc}`);
    // The entry is not echoed: a mistaken `user:password@host:port` must not reach the log.
    const bad = kafkaBrokerList(s).findIndex((b) => !/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/.test(b));
    if (bad >= 0) problems.push(`KAFKA_BROKERS: entry ${bad + 1} is not host:port. ${SETTINGS.kafkaBrokers.doc}`);
    s.dataDir = path.resolve(s.dataDir);
    s.cascadeFile = path.resolve(appDir, s.cascadeFile);
    for (const key of ['eyeCascadeFile', 'eyeglassesCascadeFile', 'smileCascadeFile', 'profileCascadeFile'] as const)
      s[key] = path.resolve(appDir, s[key]);
  }
  if (problems.length) throw new SettingsError(problems);
  return out as Settings;
}

/** KAFKA_BROKERS as a list (empty: no Kafka). */
export function kafkaBrokerList(s: Pick<Settings, 'kafkaBrokers'>): string[] {
  return s.kafkaBrokers
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
}

/** The processor's settings: the common table and its own; throws SettingsError naming each bad variable. */
export function loadProcessorSettings(env: NodeJS.ProcessEnv, appDir: string): ProcessorSettings {
  const problems: string[] = [];
  let common: Settings | null = null;
  try {
    common = loadSettings(env, appDir);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    problems.push(...err.problems);
  }
  const own: Record<string, unknown> = {};
  parseTable(PROCESSOR_SETTINGS, env, own, problems);
  if (problems.length === 0) {
    const s = { ...common, ...own } as ProcessorSettings;
    if (s.mailTransport === 'mailpit' && !s.mailUrl) problems.push('MAIL_URL: must be set when MAIL_TRANSPORT=mailpit.');
    if (s.mailTransport === 'smtp' && !s.mailSmtpUrl) problems.push('MAIL_SMTP_URL: must be set when MAIL_TRANSPORT=smtp.');
    if (s.mailRetryBaseMs > s.mailRetryMaxMs) problems.push('MAIL_RETRY_BASE_MS: must not be larger than MAIL_RETRY_MAX_MS.');
    if (s.processorOidcTokenUrl && !s.processorOidcClientSecret && !s.processorOidcClientSecretFile)
      problems.push('PROCESSOR_OIDC_CLIENT_SECRET: must be set (or PROCESSOR_OIDC_CLIENT_SECRET_FILE) when PROCESSOR_OIDC_TOKEN_URL is.');
    s.processorStateDir = path.resolve(s.processorStateDir || path.join(s.dataDir, 'processor'));
    if (problems.length === 0) return s;
  }
  throw new SettingsError(problems);
}
