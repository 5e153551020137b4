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
  private waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly quietMs: number;
  private readonly now: () => number;

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

  /** Resolves once no recognition runs, none ended in the last quietMs and no other work waits. */
  quiet(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.check();
    });
  }

  /** Wakes every waiter now (shutdown: no recognition follows). */
  release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Wakes the waiters once quiet, checking again when the quiet time is over (or later while others are busy). */
  private check(): void {
    if (this.waiters.length === 0 || this.running > 0 || this.timer) return;
    if (!this.busy) {
      this.release();
      return;
    }
    const wait = Math.max(1, this.lastEnd + this.quietMs - this.now(), this.opts.busy?.() ? this.quietMs : 0);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
    }, wait);
    this.timer.unref();
  }
}
