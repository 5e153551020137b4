/**
 * Settings of Lookout's identity provider (`npm run idp`), read once from the environment. Like the API server's
 * table (server/config/settings.ts), each row is the single source for parsing, messages and docs/settings.md's list;
 * a bad value stops the process with the variable's name, never falls back silently.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { boolean, integer } from '../config/settings.js';
import { DEFAULT_ALLOWED_HOSTS, parseHostList } from '../http/security.js';
import { DESCRIPTOR_MODELS, defaultRule } from '../../shared/recognition/rules.js';

const httpUrl = z.url({ protocol: /^https?$/ });

/**
 * #35 item 6: the loosest verification limit the face step trusts by default, per recognizer: the calibrated
 * `verify_max` (shared/recognition/rules.ts); for embedding the larger of its descriptor models' (the IdP cannot
 * tell which one the API runs).
 */
const DEFAULT_VERIFY_BOUND = {
  embedding: Math.max(...DESCRIPTOR_MODELS.map((m) => defaultRule('embedding', m).verifyMax)),
  lbph: defaultRule('lbph').verifyMax,
};
const distanceBound = z.coerce.number().positive('a distance above 0').max(1000, 'at most 1000');

/** Realm names end up in URLs, client ids and the token audience: keep them to URL-safe letters. */
export const REALM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface IdpSettingSpec {
  env: string;
  schema: z.ZodType;
  /** Default as a string; undefined: unset unless given. */
  default: string | undefined;
  doc: string;
}

export const IDP_SETTINGS = {
  realm: {
    env: 'IDP_REALM',
    schema: z.string().trim().regex(REALM_NAME, 'letters, digits, ".", "_" or "-" (at most 64)'),
    default: 'lookout',
    doc: 'Realm name: the issuer ends in `/realms/<realm>`, the clients are `<realm>-app`, `<realm>-backend` and `<realm>-service`.',
  },
  port: { env: 'IDP_PORT', schema: integer(0, 65535), default: '8081', doc: 'TCP port of the identity provider.' },
  host: {
    env: 'HOST',
    schema: z.string().trim().min(1),
    default: '127.0.0.1',
    doc: 'Address the identity provider listens on (the same variable as the API server).',
  },
  allowedHosts: {
    env: 'ALLOWED_HOSTS',
    schema: z.string().transform((text, ctx) => {
      try {
        return parseHostList(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
        return z.NEVER;
      }
    }),
    default: DEFAULT_ALLOWED_HOSTS.join(','),
    doc: "Host names the IdP answers for (the issuer's host and HOST are added; IP addresses always pass); another `Host` is refused with 421.",
  },
  issuer: {
    env: 'IDP_ISSUER',
    schema: httpUrl,
    default: undefined,
    doc: "Issuer URL as clients reach it; unset: `http://127.0.0.1:<IDP_PORT>/realms/<IDP_REALM>` (Keycloak's URL shape). Set it whenever clients reach the IdP by another name.",
  },
  dataDir: {
    env: 'IDP_DATA_DIR',
    schema: z.string().trim().min(1),
    default: './data/idp',
    doc: 'Users, signing keys, sessions and grants (written atomically; keep it on a persistent volume).',
  },
  appRedirectUris: {
    env: 'IDP_APP_REDIRECT_URIS',
    schema: z.string().transform((text, ctx) => {
      const uris = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const uri of uris) {
        if (!httpUrl.safeParse(uri).success || uri.includes('#')) {
          ctx.addIssue({ code: 'custom', message: `${JSON.stringify(uri)} is not an http(s) URL without a fragment` });
          return z.NEVER;
        }
      }
      if (uris.length === 0) ctx.addIssue({ code: 'custom', message: 'at least one redirect URI' });
      return uris;
    }),
    default: 'http://127.0.0.1:8080/auth/callback,http://localhost:8080/auth/callback',
    doc: 'Comma-separated redirect URIs of the web app client `<realm>-app` (exact match).',
  },
  backendUrl: {
    env: 'IDP_BACKEND_URL',
    schema: httpUrl,
    default: 'http://127.0.0.1:8080',
    doc: 'The Lookout API: the resource access tokens are issued for (audience `<realm>-backend`), and the backend the IdP calls.',
  },
  serviceClientSecret: {
    env: 'IDP_SERVICE_CLIENT_SECRET',
    schema: z.string().min(16, 'at least 16 characters'),
    default: undefined,
    doc: 'Secret of the confidential client `<realm>-service` (at least 16 characters; client credentials, role `biometric-admin`); unset: the client is not offered.',
  },
  serviceClientSecretFile: {
    env: 'IDP_SERVICE_CLIENT_SECRET_FILE',
    schema: z.string().trim().min(1),
    default: undefined,
    doc: 'A file holding that secret instead (a mounted Secret); wins over `IDP_SERVICE_CLIENT_SECRET`.',
  },
  adminUsername: {
    env: 'IDP_ADMIN_USERNAME',
    schema: z.string(),
    default: undefined,
    doc: 'Bootstrap administrator, created at start when no user of that name exists (roles `biometric-user`, `biometric-admin`).',
  },
  adminPassword: {
    env: 'IDP_ADMIN_PASSWORD',
    schema: z.string(),
    default: undefined,
    doc: "The bootstrap administrator's password (used only when creating it; never logged).",
  },
  adminPasswordFile: {
    env: 'IDP_ADMIN_PASSWORD_FILE',
    schema: z.string().trim().min(1),
    default: undefined,
    doc: 'A file holding that password instead; wins over `IDP_ADMIN_PASSWORD`.',
  },
  accessTokenTtl: {
    env: 'IDP_ACCESS_TOKEN_TTL_S',
    schema: integer(30, 86_400),
    default: '300',
    doc: 'Lifetime of access tokens in seconds.',
  },
  sessionTtl: {
    env: 'IDP_SESSION_TTL_S',
    schema: integer(60, 30 * 86_400),
    default: '36000',
    doc: 'Lifetime of a sign-in session (its cookie) in seconds.',
  },
  trustProxy: {
    env: 'IDP_TRUST_PROXY',
    schema: boolean,
    default: 'false',
    doc: 'Trust `X-Forwarded-Proto`/`-Host` from a reverse proxy (set behind an Ingress that terminates TLS).',
  },
  webcamWidth: {
    env: 'BIOMETRIC_WEBCAM_WIDTH',
    schema: integer(160, 3840),
    default: '640',
    doc: 'Width in pixels the enrollment and face pages ask of the camera.',
  },
  webcamHeight: {
    env: 'BIOMETRIC_WEBCAM_HEIGHT',
    schema: integer(120, 2160),
    default: '480',
    doc: 'Height in pixels the enrollment and face pages ask of the camera.',
  },
  maxEnrollmentImages: {
    env: 'BIOMETRIC_MAX_ENROLLMENT_IMAGES',
    schema: integer(3, 20),
    default: '5',
    doc: 'Most captures an enrollment takes (at least 3 are needed), each checked to hold exactly one face.',
  },
  confidenceThreshold: {
    env: 'BIOMETRIC_CONFIDENCE_THRESHOLD',
    schema: z.coerce.number().min(0).max(100),
    default: '0',
    doc: "An extra bar on top of the API's 1:1 verification (`POST /api/verify`, which decides with its recognizer's `verify_max`): the lowest `confidence` (0 to 100, the API's score of the distance to the user's own samples) the face step accepts, in every frame. 0: the API's verification alone decides.",
  },
  livenessMin: {
    env: 'BIOMETRIC_LIVENESS_MIN',
    schema: z.coerce.number().min(0).max(1),
    default: '0.5',
    doc: "Lowest liveness score (0 to 1: the smaller of the frames' mean `antispoof` and mean `liveness` scores) the face step accepts.",
  },
  maxAttempts: {
    env: 'BIOMETRIC_MAX_ATTEMPTS',
    schema: integer(1, 1000),
    default: '5',
    doc: 'Failed face steps per user within `BIOMETRIC_ATTEMPT_WINDOW_S` before the face step is locked for that user.',
  },
  attemptWindow: {
    env: 'BIOMETRIC_ATTEMPT_WINDOW_S',
    schema: integer(1, 86_400),
    default: '900',
    doc: 'Window of that limit in seconds; the lock lifts when the oldest failure leaves it.',
  },
  passkeys: {
    env: 'IDP_PASSKEYS',
    schema: z.enum(['off', 'alternative', 'required']),
    default: 'alternative',
    doc: "Passkeys (WebAuthn) as the second factor: `off` (password + face only), `alternative` (password + face or password + passkey: a user enrolls either at first sign-in, and may add a passkey after a verified face), `required` (password + passkey for everyone). An administrator may also require a passkey of one user. Passkeys need the issuer's host to be a name, not an IP address (the rpID); with an IP address they are not offered, and `required` is refused at start.",
  },
  recognitionModel: {
    env: 'BIOMETRIC_RECOGNITION_MODEL',
    schema: z.enum(['embedding', 'lbph']),
    default: 'embedding',
    doc: "Recognizer the face step trusts: `embedding` accepts the backend's embedding answers and, while the backend runs LBPH (embedding not trained or not chosen), LBPH's; `lbph` accepts LBPH's only.",
  },
  maxVerifyDistanceEmbedding: {
    env: 'BIOMETRIC_MAX_VERIFY_DISTANCE_EMBEDDING',
    schema: distanceBound,
    default: String(DEFAULT_VERIFY_BOUND.embedding),
    doc: `The loosest verification limit the face step trusts from the embedding recognizer: a match of \`POST /api/verify\` decided with a \`threshold\` above it is denied (\`untrusted_threshold\`), whatever the API's \`verify_max\` says. The default is the calibrated \`verify_max\` of faceres' descriptor; a site on face-api's (the API's default) may set ${defaultRule('embedding', 'faceapi-128').verifyMax}.`,
  },
  maxVerifyDistanceLbph: {
    env: 'BIOMETRIC_MAX_VERIFY_DISTANCE_LBPH',
    schema: distanceBound,
    default: String(DEFAULT_VERIFY_BOUND.lbph),
    doc: "The same bound for LBPH's answers (chi-square distance); the default is LBPH's calibrated `verify_max`.",
  },
  backendTimeout: {
    env: 'BIOMETRIC_BACKEND_TIMEOUT_MS',
    schema: integer(100, 120_000),
    default: '10000',
    doc: 'Timeout of each call to the backend (health, recognise, upload); past it the step is denied (`backend_timeout`). Training gets 10 times as long.',
  },
  modelDir: {
    env: 'BIOMETRIC_MODEL_DIR',
    schema: z.string().trim().min(1),
    default: './public/models',
    doc: 'Folder holding the liveness models `antispoof.json` and `liveness.json` with their `.bin` weights.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
    default: 'info',
    doc: 'Log level (the same variable as the API server).',
  },
  logFormat: { env: 'LOG_FORMAT', schema: z.enum(['text', 'json']), default: 'text', doc: 'Log format, `text` or `json`.' },
} satisfies Record<string, IdpSettingSpec>;

export interface IdpSettings {
  realm: string;
  port: number;
  host: string;
  allowedHosts: string[];
  /** Undefined: derived from the port the server listens on (see issuerFor). */
  issuer: string | undefined;
  dataDir: string;
  appRedirectUris: string[];
  backendUrl: string;
  serviceClientSecret: string | undefined;
  adminUsername: string | undefined;
  adminPassword: string | undefined;
  accessTokenTtl: number;
  sessionTtl: number;
  trustProxy: boolean;
  webcamWidth: number;
  webcamHeight: number;
  maxEnrollmentImages: number;
  confidenceThreshold: number;
  livenessMin: number;
  maxAttempts: number;
  /** Seconds. */
  attemptWindow: number;
  passkeys: 'off' | 'alternative' | 'required';
  recognitionModel: 'embedding' | 'lbph';
  /** The loosest verification threshold (and distance) the face step trusts, per recognizer (#35 item 6). */
  maxVerifyDistance: { embedding: number; lbph: number };
  /** Milliseconds. */
  backendTimeout: number;
  modelDir: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  logFormat: 'text' | 'json';
}

export class IdpSettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'IdpSettingsError';
  }
}

/** A secret from `<NAME>_FILE` (trailing newline dropped, as `kubectl create secret --from-file` keeps it) or `<NAME>`. */
function secretFrom(file: string | undefined, value: string | undefined, name: string, problems: string[]): string | undefined {
  if (file === undefined) return value;
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    return undefined;
  }
}

export function loadIdpSettings(env: NodeJS.ProcessEnv = process.env): IdpSettings {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(IDP_SETTINGS) as [string, IdpSettingSpec][]) {
    // Unset and empty both mean "the default".
    const raw = env[spec.env] === '' || env[spec.env] === undefined ? spec.default : env[spec.env];
    if (raw === undefined) continue;
    const parsed = spec.schema.safeParse(raw);
    if (parsed.success) values[key] = parsed.data;
    // Never echo a value: some of these are secrets.
    else problems.push(`${spec.env}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  const serviceClientSecret = secretFrom(
    values.serviceClientSecretFile as string | undefined,
    values.serviceClientSecret as string | undefined,
    'IDP_SERVICE_CLIENT_SECRET',
    problems,
  );
  if (serviceClientSecret !== undefined && serviceClientSecret.length < 16)
    problems.push('IDP_SERVICE_CLIENT_SECRET_FILE: the secret must have at least 16 characters');
  const adminPassword = secretFrom(
    values.adminPasswordFile as string | undefined,
    values.adminPassword as string | undefined,
    'IDP_ADMIN_PASSWORD',
    problems,
  );
  if ((values.adminUsername === undefined) !== (adminPassword === undefined))
    problems.push('IDP_ADMIN_USERNAME and IDP_ADMIN_PASSWORD (or IDP_ADMIN_PASSWORD_FILE) go together: set both or neither');
  const issuerHost = new URL((values.issuer as string | undefined) ?? 'http://127.0.0.1').hostname.replace(/^\[|\]$/g, '');
  if (values.passkeys === 'required' && isIP(issuerHost))
    problems.push('IDP_PASSKEYS=required needs IDP_ISSUER with a host name: browsers refuse passkeys for an IP address');
  if (problems.length) throw new IdpSettingsError(problems);
  return {
    realm: values.realm as string,
    port: values.port as number,
    host: values.host as string,
    allowedHosts: values.allowedHosts as string[],
    issuer: (values.issuer as string | undefined)?.replace(/\/+$/, ''),
    dataDir: path.resolve(values.dataDir as string),
    appRedirectUris: values.appRedirectUris as string[],
    backendUrl: (values.backendUrl as string).replace(/\/+$/, ''),
    serviceClientSecret,
    adminUsername: values.adminUsername as string | undefined,
    adminPassword,
    accessTokenTtl: values.accessTokenTtl as number,
    sessionTtl: values.sessionTtl as number,
    trustProxy: values.trustProxy as boolean,
    webcamWidth: values.webcamWidth as number,
    webcamHeight: values.webcamHeight as number,
    maxEnrollmentImages: values.maxEnrollmentImages as number,
    confidenceThreshold: values.confidenceThreshold as number,
    livenessMin: values.livenessMin as number,
    maxAttempts: values.maxAttempts as number,
    attemptWindow: values.attemptWindow as number,
    passkeys: values.passkeys as IdpSettings['passkeys'],
    recognitionModel: values.recognitionModel as IdpSettings['recognitionModel'],
    maxVerifyDistance: { embedding: values.maxVerifyDistanceEmbedding as number, lbph: values.maxVerifyDistanceLbph as number },
    backendTimeout: values.backendTimeout as number,
    modelDir: path.resolve(values.modelDir as string),
    logLevel: values.logLevel as IdpSettings['logLevel'],
    logFormat: values.logFormat as IdpSettings['logFormat'],
  };
}

/** The issuer: IDP_ISSUER, else Keycloak's shape on the port actually listened on. */
export function issuerFor(settings: Pick<IdpSettings, 'issuer' | 'realm'>, port: number): string {
  return settings.issuer ?? `http://127.0.0.1:${port}/realms/${settings.realm}`;
}
