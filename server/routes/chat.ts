/**
 * POST /api/chat `{ message, image?, stream? }` -> `{ response, analysis }`, or with `stream: true` server-sent
 * events: `analysis` (the analysis used), `delta` ({ content }) pieces of the reply, then `done` ({ response })
 * or `error` ({ code, message }). GET /api/chat/status reports the feature and the endpoint.
 */
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { chatRequestFor, type ChatStreamEvent } from '../../shared/api/index.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';

/** One event of a streamed reply, as the contract's ChatStreamEvent describes it. */
function sseEvent(e: ChatStreamEvent): { event: string; data: string } {
  return { event: e.event, data: JSON.stringify(e.data) };
}

export function chatRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  // The documented schema has the default length limit; this server checks its configured one.
  const chatRequest = chatRequestFor(ctx.settings.chatMaxMessageChars);

  mountRoute(
    app,
    'chat',
    async (c, { body }) => {
      const { message, image, stream } = body;
      const { messages, analysis } = await ctx.chat.prepare(message, image ? decodeBase64Image(image) : undefined);
      const signal = c.req.raw.signal;
      if (!stream) {
        const response = await ctx.chat.complete(messages, signal);
        return { response, analysis };
      }
      // Opened before the SSE response starts, so connection and auth errors are still a JSON error.
      const reply = await ctx.chat.stream(messages, signal);
      return streamSSE(c, async (sse) => {
        sse.onAbort(() => void reply.cancel());
        await sse.writeSSE(sseEvent({ event: 'analysis', data: analysis }));
        let response = '';
        try {
          for await (const piece of reply) {
            response += piece;
            await sse.writeSSE(sseEvent({ event: 'delta', data: { content: piece } }));
          }
          await sse.writeSSE(sseEvent({ event: 'done', data: { response } }));
        } catch (err) {
          const e = err instanceof ApiError ? err : new ApiError('llm_bad_gateway', 'the reply from the LLM broke off');
          await sse.writeSSE(sseEvent({ event: 'error', data: { code: e.code, message: e.message } }));
        }
      });
    },
    { body: chatRequest },
  );

  mountRoute(app, 'chatStatus', () => ctx.chatStatus.status());
  return app;
}
