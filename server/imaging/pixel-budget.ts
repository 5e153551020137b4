/**
 * Admission of decoded pixels against a budget (MAX_INFLIGHT_PIXELS), so a burst of large images cannot take the
 * server's memory with it: a 36-megapixel image is a 105 KB PNG or a few hundred bytes of JPEG, but 108 MB of
 * RGB once decoded. Every route that decodes (recognise, objects, chat, PPE, upload validation, training) takes a
 * lease of width x height pixels before decoding (server/imaging/decode.ts) and gives it back when its pixels are
 * no longer used.
 *
 * - Leases are granted in arrival order while they fit; the rest wait in a queue, each at most `waitMs`, then
 *   are refused with 503 `server_busy` and a Retry-After (seconds: about how long a lease is held now). Training
 *   waits as long as it takes instead (it is not a client waiting on a socket, and must not lose images).
 * - An image larger than the whole budget (MAX_IMAGE_PIXELS may be set above it) is admitted alone: when nothing
 *   else holds pixels. So the pixels decoded at once never exceed max(budget, the largest accepted image).
 * - The order is first come, first served: a large image at the head is not overtaken by small ones forever.
 */
import { ApiError } from '../http/errors.js';

/** The 503 of a full budget; `retryAfterSeconds` becomes the Retry-After header (server/app.ts). */
export class ServerBusyError extends ApiError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('server_busy', message);
  }
}

export interface PixelLease {
  readonly pixels: number;
  /** Gives the pixels back; a second call does nothing. */
  release(): void;
}

export interface PixelBudgetOptions {
  /** Pixels decoded at once, over every request (MAX_INFLIGHT_PIXELS). */
  capacity: number;
  /** Longest wait of a request for room before it is refused (MAX_INFLIGHT_WAIT_MS). */
  waitMs: number;
  /** Told of every release (how many pixels, how many are still held): the memory reclaimer listens. */
  onRelease?: (pixels: number, inUse: number) => void;
}

export interface AcquireOptions {
  /** `bounded` (requests): at most waitMs, then 503. `unbounded` (training): as long as it takes. */
  wait?: 'bounded' | 'unbounded';
}

interface Waiter {
  pixels: number;
  grant: () => void;
  timer: NodeJS.Timeout | null;
}

export class PixelBudget {
  private held = 0;
  private readonly queue: Waiter[] = [];
  /** How long a lease is held, smoothed (for Retry-After); a second until measured. */
  private holdMs = 1000;

  constructor(private readonly opts: PixelBudgetOptions) {
    if (!(opts.capacity > 0)) throw new RangeError('PixelBudget: capacity must be positive');
  }

  get capacity(): number {
    return this.opts.capacity;
  }

  /** Pixels held by granted leases now. */
  get inUse(): number {
    return this.held;
  }

  /** Requests waiting for room now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Seconds a refused client is told to wait before trying again. */
  get retryAfterSeconds(): number {
    return Math.min(60, Math.max(1, Math.ceil(this.holdMs / 1000)));
  }

  /** A lease of `pixels`, when it fits (at once, or after waiting in line); rejects with ServerBusyError. */
  acquire(pixels: number, options: AcquireOptions = {}): Promise<PixelLease> {
    if (!(pixels > 0)) return Promise.resolve({ pixels: 0, release: () => {} });
    if (this.queue.length === 0 && this.fits(pixels)) return Promise.resolve(this.grant(pixels));
    const bounded = (options.wait ?? 'bounded') === 'bounded';
    return new Promise<PixelLease>((resolve, reject) => {
      const waiter: Waiter = { pixels, grant: () => resolve(this.grant(pixels)), timer: null };
      if (bounded) {
        waiter.timer = setTimeout(() => {
          const at = this.queue.indexOf(waiter);
          if (at < 0) return;
          this.queue.splice(at, 1);
          reject(this.busy(pixels));
          // The one that gave up may have held back smaller ones behind it.
          this.pump();
        }, this.opts.waitMs);
        waiter.timer.unref();
      }
      this.queue.push(waiter);
    });
  }

  private fits(pixels: number): boolean {
    return this.held === 0 || this.held + pixels <= this.opts.capacity;
  }

  private grant(pixels: number): PixelLease {
    this.held += pixels;
    const since = Date.now();
    let released = false;
    return {
      pixels,
      release: () => {
        if (released) return;
        released = true;
        this.held -= pixels;
        this.holdMs = 0.8 * this.holdMs + 0.2 * (Date.now() - since);
        this.opts.onRelease?.(pixels, this.held);
        this.pump();
      },
    };
  }

  /** Grants the waiting leases that fit now, in order. */
  private pump(): void {
    while (this.queue.length > 0 && this.fits(this.queue[0].pixels)) {
      const next = this.queue.shift()!;
      if (next.timer) clearTimeout(next.timer);
      next.grant();
    }
  }

  private busy(pixels: number): ServerBusyError {
    const mp = (n: number) => `${(n / 1e6).toFixed(1)} MP`;
    return new ServerBusyError(
      `the server is decoding ${mp(this.held)} of images (MAX_INFLIGHT_PIXELS ${mp(this.opts.capacity)}) and this ${mp(pixels)} image did not fit within ${this.opts.waitMs} ms; try again in ${this.retryAfterSeconds} s`,
      this.retryAfterSeconds,
    );
  }
}
