/** What the processor has done so far, for `GET /ready` and the dashboard (no secrets in any of it). */
export interface PollRecord {
  last_at: string | null;
  ok: boolean | null;
  error: string | null;
}

export class ProcessorStats {
  labels: PollRecord & { known_labels: number; announced: number; pending: number } = {
    last_at: null,
    ok: null,
    error: null,
    known_labels: 0,
    announced: 0,
    pending: 0,
  };
  remote: PollRecord & { state: string | null } = { last_at: null, ok: null, error: null, state: null };
  /** Why the token endpoint refused the processor's client credentials (or its secret file is unreadable); null: fine. */
  credentials: string | null = null;
  published = 0;
  consumed = 0;
  unknownSkipped = 0;
  invalid = 0;
  mailsSent = 0;
  mailFailedAttempts = 0;
  deadLettered = 0;
  duplicatesSkipped = 0;
  unchangedSkipped = 0;
  lastSentAt: string | null = null;
  lastMailError: string | null = null;
}
