/**
 * The LLM client's deadline for one request: an AbortController that fires after the timeout (re-armed on every
 * read of a stream, so it bounds silence rather than the whole answer) or when the caller's own signal does, and
 * says which of the two it was. Part of llm-client.ts.
 */

/** An AbortController that fires after `ms` (re-armable, for idle timeouts) or when the caller's signal does. */
export class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly onOuter = () => this.controller.abort(this.outer!.reason);

  constructor(
    private readonly ms: number,
    private readonly outer: AbortSignal | undefined,
    private readonly onTimeout?: () => void,
  ) {
    this.arm();
    if (outer?.aborted) this.controller.abort(outer.reason);
    else outer?.addEventListener('abort', this.onOuter, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return !!this.outer?.aborted;
  }

  arm(): void {
    clearTimeout(this.timer);
    if (this.controller.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
      this.onTimeout?.();
    }, this.ms);
  }

  done(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuter);
  }
}
