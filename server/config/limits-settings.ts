/** How much one request and all requests together may cost: body and image sizes, pixels decoded at once, vision threads. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { integer, type SettingSpec } from './setting-schemas.js';

export const LIMIT_SETTINGS = {
  maxBodyBytes: {
    env: 'MAX_BODY_BYTES',
    schema: integer(1024, 1024 * 1024 * 1024),
    default: String(10 * 1024 * 1024),
    doc: 'Largest accepted request body in bytes (larger: 413).',
  },
  maxImagePixels: {
    env: 'MAX_IMAGE_PIXELS',
    schema: integer(1, 1_000_000_000),
    default: String(40_000_000),
    doc: 'Largest accepted image in pixels (width x height); larger images are refused with 413.',
  },
  maxInflightPixels: {
    env: 'MAX_INFLIGHT_PIXELS',
    schema: integer(1_000_000, 10_000_000_000),
    default: String(48_000_000),
    doc: 'Pixels decoded at once over all requests (about 4 bytes each while in use); beyond it requests wait up to MAX_INFLIGHT_WAIT_MS, then get 503 with Retry-After. A larger image runs alone.',
  },
  maxInflightWaitMs: {
    env: 'MAX_INFLIGHT_WAIT_MS',
    schema: integer(0, 600_000),
    default: '5000',
    doc: 'How long a request waits for room in MAX_INFLIGHT_PIXELS before the 503, in milliseconds (training always waits).',
  },
  // #35: POST /api/verify is no oracle: attempts per caller and per label within a window, shared by replicas.
  verifyRateWindowS: {
    env: 'VERIFY_RATE_WINDOW_S',
    schema: integer(1, 86_400),
    default: '60',
    doc: 'The window of the verification limits (POST /api/verify), in seconds: attempts are counted per caller and per label in fixed windows of this length, in the database (replicas share them).',
  },
  verifyRatePerCaller: {
    env: 'VERIFY_RATE_PER_CALLER',
    schema: integer(1, 1_000_000),
    default: '20',
    doc: 'Verifications one user (a token without `biometric-verifier` or `biometric-admin`) may ask for within VERIFY_RATE_WINDOW_S; beyond it 429 `rate_limited` with Retry-After.',
  },
  verifyRatePerVerifier: {
    env: 'VERIFY_RATE_PER_VERIFIER',
    schema: integer(1, 1_000_000),
    default: '600',
    doc: "Verifications one caller with `biometric-verifier` or `biometric-admin` (the identity provider's service client, which verifies everyone signing in) may ask for within VERIFY_RATE_WINDOW_S; with AUTH_MODE=off, one client address.",
  },
  verifyRatePerLabel: {
    env: 'VERIFY_RATE_PER_LABEL',
    schema: integer(1, 1_000_000),
    default: '20',
    doc: 'Verifications of one label, by anyone, within VERIFY_RATE_WINDOW_S; beyond it 429 `rate_limited` with Retry-After.',
  },
  workers: {
    env: 'WORKERS',
    schema: integer(0, 64),
    default: '0',
    doc: 'Vision worker threads at most; 0 means one per CPU core. One runs from the start; the others start when requests wait for a worker or a lone one could share its image, and stop after ENGINE_IDLE_RELEASE_S without a job.',
  },
} as const satisfies Record<string, SettingSpec>;
