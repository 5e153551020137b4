/**
 * A status check run in the background (never per request): once now, then every `intervalMs`, one at a time.
 * A caller asking while one runs shares it. The check keeps its own results; this only schedules it.
 */
export class PeriodicCheck {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly intervalMs: number,
    private readonly run: () => Promise<void>,
  ) {}

  /** Checks now and then every interval; resolves after the first check (never rejects). */
  start(): Promise<void> {
    if (!this.timer) {
      this.timer = setInterval(() => void this.now(), this.intervalMs);
      this.timer.unref();
    }
    return this.now();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Checks now, or joins the check under way. Never rejects. */
  now(): Promise<void> {
    this.running ??= this.run()
      .catch(() => {})
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
