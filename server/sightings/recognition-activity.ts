/**
 * #36 4: recognition comes first. The routes that recognise (POST /api/recognize, POST /api/verify) run inside
 * `during`; the sighting recorder's work (a crop's JPEG, its descriptor, its row) waits for `quiet`: no recognition
 * running, none ended in the last `quietMs` (a client's next frame or request usually follows within that), and
 * nothing waiting for a worker thread (`busy`: the pools' queues). On a 2-core machine a descriptor computed between
 * two requests is a request answered late, so sighting work only runs in the gaps.
 */

/** Recognitions ended less than this long ago hold sighting work back. */
export const QUIET_MS = 100;

export interface RecognitionActivityOptions {
  quietMs?: number;
  /** Other work waiting for the workers (e.g. the pools' queues): sighting work waits for it too. */
  busy?: () => boolean;
  /** The clock (tests). */
  now?: () => number;
}

export class RecognitionActivity {
  private running = 0;
  private lastEnd = Number.NEGATIVE_INFINITY;
  private waiters: { wake: () => void; deadline: number }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly quietMs: number;
  /** Its clock (deadlines of `quiet` are times of it). */
  readonly now: () => number;

  constructor(private readonly opts: RecognitionActivityOptions = {}) {
    this.quietMs = opts.quietMs ?? QUIET_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Runs a recognition: sighting work waits until it (and the quiet time after it) is over. */
  async during<T>(work: () => Promise<T> | T): Promise<T> {
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.lastEnd = this.now();
      this.check();
    }
  }

  /** Whether sighting work has to wait now. */
  get busy(): boolean {
    return this.running > 0 || this.now() - this.lastEnd < this.quietMs || (this.opts.busy?.() ?? false);
  }

  /**
   * Resolves once no recognition runs, none ended in the last quietMs and no other work waits; or, from `deadline`
   * on (a time of `now`), as soon as no recognition runs: work that has waited long enough takes a gap between two
   * recognitions, so recognitions that never pause do not starve it.
   */
  quiet(deadline = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.ready(deadline)) return Promise.resolve();
    return new Promise((wake) => {
      this.waiters.push({ wake, deadline });
      this.check();
    });
  }

  /** Wakes every waiter now (shutdown: no recognition follows). */
  release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const { wake } of this.waiters.splice(0)) wake();
  }

  private ready(deadline: number): boolean {
    return !this.busy || (this.running === 0 && this.now() >= deadline);
  }

  /** Wakes the waiters that may go; checks again when the quiet time or a deadline is over (or later while others are busy). */
  private check(): void {
    if (this.running > 0) return;
    const now = this.now();
    const waiting = this.waiters.filter((w) => !this.ready(w.deadline));
    for (const w of this.waiters) if (!waiting.includes(w)) w.wake();
    this.waiters = waiting;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (waiting.length === 0) return;
    const next = Math.min(...waiting.map((w) => w.deadline), this.lastEnd + this.quietMs);
    const wait = Math.max(1, Math.min(next - now, this.quietMs));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
    }, wait);
    this.timer.unref();
  }
}
