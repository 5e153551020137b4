/**
 * The LLM client's admission gate: at most `max` requests upstream at once (by default one: the LLM runtime has
 * one slot), the rest waiting in a bounded queue; each wait ends with a slot, with `llm_busy` after the timeout,
 * or with the caller's abort. Part of llm-client.ts.
 */
import type { ApiError } from '../../http/errors.js';

/** Limits requests upstream to `max` at once, with a bounded queue. */
export class Gate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly max: number,
    private readonly maxQueue: number,
  ) {}

  /** Resolves with a release function (idempotent) once a slot is free; throws `llm_busy` when it cannot wait. */
  acquire(waitMs: number, busy: (why: string) => ApiError, signal?: AbortSignal): Promise<() => void> {
    const slot = () => {
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        this.active--;
        const next = this.waiting.shift();
        if (next) next();
      };
    };
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(slot());
    }
    if (this.waiting.length >= this.maxQueue) {
      return Promise.reject(busy(`${this.active} request(s) running and ${this.waiting.length} waiting`));
    }
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        resolve(slot());
      };
      const leave = () => {
        const i = this.waiting.indexOf(wake);
        if (i >= 0) this.waiting.splice(i, 1);
      };
      const timer = setTimeout(() => {
        leave();
        signal?.removeEventListener('abort', onAbort);
        reject(busy(`no slot became free within ${waitMs} ms`));
      }, waitMs);
      const onAbort = () => {
        leave();
        clearTimeout(timer);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(wake);
    });
  }
}
