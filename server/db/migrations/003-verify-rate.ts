/**
 * #35: verification attempts counted per caller and per label in fixed windows (server/verify/rate-limit.ts), in the
 * database so that API replicas share one count. A row per bucket and window; rows of past windows are purged.
 */
import type { Migration } from './index.js';

export const verifyRate: Migration = {
  version: 3,
  name: 'verify-rate',
  sql: `
CREATE TABLE verify_attempts (
  bucket text NOT NULL,
  window_start timestamptz NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX verify_attempts_window ON verify_attempts (window_start);
`,
};
