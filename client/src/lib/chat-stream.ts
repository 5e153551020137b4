/**
 * The chat's streamed reply: `POST /api/chat` with `stream: true` answers server-sent events (server/routes/
 * chat.ts): `analysis` (the analysis used, or null), `delta` ({ content }) pieces of the reply, then `done`
 * ({ response }) or `error` ({ code, message }). The SSE framing (chunks split anywhere, CRLF, multi-line
 * data, comments) is eventsource-parser's; this file only sends the request and types the events. Not
 * EventSource itself: it can only GET, and the question (with its photo) is a POST body.
 */
import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { ChatAnalysis } from '../../../shared/api/contract';
import { ApiFailure, UNREACHABLE_MESSAGE } from './api';

export type ChatStreamEvent =
  | { event: 'analysis'; data: ChatAnalysis | null }
  | { event: 'delta'; data: { content: string } }
  | { event: 'done'; data: { response: string } }
  | { event: 'error'; data: { code: string; message: string } };

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
export async function chatStream(message: string, image: string | undefined, onEvent: (e: ChatStreamEvent) => void, signal?: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch('/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(image ? { message, image, stream: true } : { message, stream: true }),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err; // stopped by the person: not a failure to report
    throw new ApiFailure(UNREACHABLE_MESSAGE, 0, 'network');
  }
  if (!res.ok) throw await failureOf(res);
  if (!res.body) throw new ApiFailure('The server sent an empty reply.', 502, 'llm_bad_gateway');
  await readChatEvents(res.body, onEvent);
}

/** The API's error body as an ApiFailure, as lib/api.ts reads it. */
async function failureOf(res: Response): Promise<ApiFailure> {
  let code = 'http_error';
  let message = `The server answered ${res.status} ${res.statusText}.`;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.message) message = sentence(body.error.message);
    if (body.error?.code) code = body.error.code;
  } catch {
    // Not our JSON error body (a proxy's page in front of a stopped server, say).
    if (res.status === 502 || res.status === 504) message = UNREACHABLE_MESSAGE;
  }
  return new ApiFailure(message, res.status, code);
}

function sentence(s: string): string {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}
