/**
 * The chat's streamed reply: `POST /api/chat` with `stream: true` answers server-sent events (server/routes/
 * chat.ts): `analysis` (the analysis used, or null), `delta` ({ content }) pieces of the reply, then `done`
 * ({ response }) or `error` ({ code, message }). The SSE framing (chunks split anywhere, CRLF, multi-line
 * data, comments) is eventsource-parser's; this file only sends the request and types the events. Not
 * EventSource itself: it can only GET, and the question (with its photo) is a POST body.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { ChatStreamEvent } from '../../../shared/api/index';
import { ApiFailure, api } from './api';

export type { ChatStreamEvent };

const EVENTS = new Set<string>(['analysis', 'delta', 'done', 'error']);

/**
 * Reads an event stream to its end, calling `onEvent` for each of the chat's events (others, and an event cut
 * off by the end of the stream, are ignored). Resolves when the stream ends, whether or not `done` came: the
 * caller tells a finished reply from a broken one.
 */
export async function readChatEvents(body: ReadableStream<Uint8Array<ArrayBuffer>>, onEvent: (e: ChatStreamEvent) => void): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const name = value.event ?? 'message';
    if (!EVENTS.has(name)) continue;
    let data: unknown;
    try {
      data = JSON.parse(value.data);
    } catch {
      await reader.cancel().catch(() => undefined);
      throw new ApiFailure('The server sent a reply Lookout cannot read.', 502, 'llm_bad_gateway');
    }
    onEvent({ event: name, data } as ChatStreamEvent);
  }
}

/** Asks `message` (with a photo as a data URL, if any) and streams the reply to `onEvent`; resolves when it ends. */
export async function chatStream(
  message: string,
  image: string | undefined,
  onEvent: (e: ChatStreamEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const res = await api.chatEvents(message, image, signal);
  if (!res.body) throw new ApiFailure('The server sent an empty reply.', 502, 'llm_bad_gateway');
  await readChatEvents(res.body, onEvent);
}
