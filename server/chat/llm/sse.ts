/**
 * The streamed reply's server-sent events, read with `eventsource-parser` (the spec's line endings, CR, LF or
 * CRLF, even split across reads; comments; multi-line data) behind the small push interface the client reads
 * with: text in as it arrives, the `data` of every complete event out. Two rules of its own: an event or line
 * longer than 1 MiB is an error (an upstream that never ends one is broken), and at the end of the stream a last
 * event without its blank line still counts. Part of llm-client.ts, which re-exports SseParser.
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';

/** Longest SSE line or event kept in memory; an upstream that never ends a line is broken. */
const MAX_EVENT_CHARS = 1 << 20;

/** Server-sent events: feed text as it arrives, get the `data` of every complete event. */
export class SseParser {
  private readonly parser: EventSourceParser;
  private events: string[] = [];
  private overflow = false;

  constructor() {
    this.parser = createParser({
      // `event`, `id` and `retry` are not used by the OpenAI protocol: only the data counts.
      onEvent: (event) => this.events.push(event.data),
      // Unknown fields and bad retry values are reported here too; like the spec, they are ignored.
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.overflow = true;
      },
      maxBufferSize: MAX_EVENT_CHARS,
    });
  }

  push(text: string, end = false): string[] {
    if (!this.overflow) this.parser.feed(text);
    // Lenient: a last event not followed by a blank line still counts (the blank lines end it, and its last line).
    if (end && !this.overflow) this.parser.feed('\n\n');
    if (this.overflow) throw new RangeError('an event of the stream is longer than 1 MiB');
    const out = this.events;
    this.events = [];
    return out;
  }
}
