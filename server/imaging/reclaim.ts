/**
 * Giving memory back after large images. Decoded pixels live in Buffers and typed arrays whose memory outside the
 * JavaScript heap is only freed when the garbage collector runs, and V8 collects by the pressure on its own
 * heap, which a few small objects wrapping 108 MB each hardly raise: after a burst of 36-megapixel images the
 * process kept 1.5 GB of such garbage for as long as no other work came (measured: 2.4 GB RSS, 0.7 GB idle).
 *
 * So a full collection is asked for when the pixels given back since the last one add up to half the budget
 * (the garbage never grows much past half of MAX_INFLIGHT_PIXELS' worth), and once more when the server has gone
 * idle after large images. A collection of this server's small heap takes a few milliseconds.
 *
 * The collector is reached with `--expose-gc` set at run time (V8 makes `gc` available to contexts created
 * afterwards), so no command-line flag is needed; where that is not possible, nothing is done.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../logger.js';

/** The collector, or null when it cannot be reached. */
function collector(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

export interface ReclaimerOptions {
  /** Pixels given back that trigger a collection (half the budget). */
  threshold: number;
  /** After this long with no pixels held, a collection when at least `idleMinimum` pixels were given back. */
  idleMs?: number;
  idleMinimum?: number;
  log?: Logger;
}

export class MemoryReclaimer {
  private readonly gc = collector();
  private given = 0;
  private scheduled = false;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Collections run so far (for tests and logs). */
  collections = 0;

  constructor(private readonly opts: ReclaimerOptions) {
    if (!this.gc) opts.log?.warn('the garbage collector cannot be reached; memory of large images is given back only as V8 decides');
  }

  /** Called by the pixel budget on every release. */
  released(pixels: number, inUse: number): void {
    if (!this.gc) return;
    this.given += pixels;
    if (this.given >= this.opts.threshold) this.schedule();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (inUse === 0 && this.given >= (this.opts.idleMinimum ?? 4_000_000)) {
      this.idleTimer = setTimeout(() => {
        this.idleTimer = null;
        this.schedule();
      }, this.opts.idleMs ?? 1000);
      this.idleTimer.unref();
    }
  }

  /** On the next turn of the event loop, outside the request that released. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.given === 0) return;
      this.given = 0;
      this.collections++;
      this.gc?.();
    });
  }

  stop(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }
}
