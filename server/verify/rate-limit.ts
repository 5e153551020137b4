/**
 * #35: how often POST /api/verify may be asked, per caller and per label, so that it cannot be used as an oracle
 * (thousands of tries steering a made-up face towards someone's template, around the face step's attempt lock).
 *
 * Fixed windows of VERIFY_RATE_WINDOW_S, by the database's clock, counted in the database (migration 003): every
 * replica on one DATABASE_URL increments the same rows, in one statement each, so the limit is shared. Every attempt
 * counts, refused ones included. A database that cannot be read denies (503), never lets the attempt through.
 */
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { ApiError } from '../http/errors.js';

export interface VerifyRateLimits {
  windowS: number;
  /** A user without the verifier role. */
  perCaller: number;
  /** A caller that may verify anyone (the IdP's service client); with AUTH_MODE=off, a client address. */
  perVerifier: number;
  perLabel: number;
}

/** A caller past a limit: 429 with Retry-After (server/app.ts sets the header). */
export class RateLimitedError extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate_limited', message);
  }
}

export interface VerifyAttempt {
  /** Who asks: `user:<sub>`, `client:<id>` or `address:<ip>`. */
  caller: string;
  /** Whether the caller may verify anyone (its limit is perVerifier). */
  verifier: boolean;
  /** The label as normalised. */
  label: string;
}

const COUNT = `
WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now())::float8 / $3::int) * $3::int) AS start)
INSERT INTO verify_attempts (bucket, window_start, hits)
SELECT v.bucket, w.start, 1 FROM w, (VALUES ($1::text), ($2::text)) AS v(bucket)
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = verify_attempts.hits + 1
RETURNING bucket, hits,
  greatest(1, ceil(extract(epoch FROM window_start)::float8 + $3::int - extract(epoch FROM clock_timestamp())::float8))::int AS retry_after`;

export class VerifyRateLimiter {
  private lastPurge = 0;

  constructor(
    private readonly db: Database,
    private readonly limits: () => VerifyRateLimits,
    private readonly log: Logger,
  ) {}

  /** Counts one attempt; throws RateLimitedError past a limit, ApiError `rate_limit_unavailable` when it cannot count. */
  async admit(attempt: VerifyAttempt): Promise<void> {
    const limits = this.limits();
    const callerBucket = `caller:${attempt.caller}`;
    const labelBucket = `label:${attempt.label}`;
    let rows: { bucket: string; hits: number; retry_after: number }[];
    try {
      rows = await this.db.query(COUNT, [callerBucket, labelBucket, limits.windowS]);
    } catch (err) {
      this.log.warn(`verification counters could not be updated: ${err instanceof Error ? err.message : String(err)}`);
      throw new ApiError(
        'rate_limit_unavailable',
        'the verification counters could not be read (the database); verification is denied until they can be',
      );
    }
    this.purgeNowAndThen(limits.windowS);
    const caller = rows.find((r) => r.bucket === callerBucket);
    const label = rows.find((r) => r.bucket === labelBucket);
    const callerLimit = attempt.verifier ? limits.perVerifier : limits.perCaller;
    const callerSetting = attempt.verifier ? 'VERIFY_RATE_PER_VERIFIER' : 'VERIFY_RATE_PER_CALLER';
    if (caller && caller.hits > callerLimit)
      throw new RateLimitedError(
        `too many verifications by this caller: ${callerLimit} within ${limits.windowS} s (${callerSetting}); try again in ${caller.retry_after} s`,
        caller.retry_after,
      );
    if (label && label.hits > limits.perLabel)
      throw new RateLimitedError(
        `too many verifications of this label: ${limits.perLabel} within ${limits.windowS} s (VERIFY_RATE_PER_LABEL); try again in ${label.retry_after} s`,
        label.retry_after,
      );
  }

  /** Rows of past windows are dropped, at most once a window per process; a failure waits for the next one. */
  private purgeNowAndThen(windowS: number): void {
    const now = Date.now();
    if (now - this.lastPurge < windowS * 1000) return;
    this.lastPurge = now;
    this.db
      .query('DELETE FROM verify_attempts WHERE window_start < now() - make_interval(secs => $1::int * 2)', [windowS])
      .catch((err) => this.log.warn(`old verification counters could not be purged: ${err instanceof Error ? err.message : String(err)}`));
  }
}
