/**
 * Failed attempts per key (a username) in a sliding window: at `max` failures within `windowMs` the key is locked
 * until the oldest of them leaves the window. In memory: a restart forgives, which a lock of minutes can afford.
 * Used for passwords; the face step's limit (BIOMETRIC_MAX_ATTEMPTS per 15 minutes) can use it as well.
 */
export class AttemptLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
    /** Keys remembered at most; the stalest go first (a flood of made-up names must not grow memory for ever). */
    private readonly maxKeys = 10_000,
  ) {}

  /** Milliseconds until the key may try again; 0 when it may now. */
  lockedFor(key: string): number {
    const recent = this.recent(key);
    return recent.length >= this.max ? recent[recent.length - this.max] + this.windowMs - this.now() : 0;
  }

  fail(key: string): void {
    const recent = this.recent(key);
    recent.push(this.now());
    this.failures.delete(key);
    this.failures.set(key, recent.slice(-this.max));
    if (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value as string);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string): number[] {
    const since = this.now() - this.windowMs;
    return (this.failures.get(key) ?? []).filter((t) => t > since);
  }
}
