/**
 * POST /api/chat `{ message, image?, stream? }` -> `{ response, analysis }`, or with `stream: true` server-sent
 * events: `analysis` (the analysis used), `delta` ({ content }) pieces of the reply, then `done` ({ response })
 * or `error` ({ code, message }). GET /api/chat/status reports the feature and the endpoint.
 */
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { readJson } from '../http/request.js';
import { decodeBase64Image } from '../imaging/decode.js';

export function chatRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const maxChars = ctx.settings.chatMaxMessageChars;
  const chatRequest = z.object({
    message: z
      .string({ error: 'must be the question as text' })
      .trim()
      .min(1, 'must not be empty')
      .max(maxChars, `must be at most ${maxChars} characters`),
    image: z.string({ error: 'must be the image as base64 text or a data URL' }).min(1, 'must not be empty').optional(),
    stream: z.boolean({ error: 'must be true or false' }).optional(),
  });

  app.post('/chat', async (c) => {
    const { message, image, stream } = await readJson(c, chatRequest);
    const { messages, analysis } = await ctx.chat.prepare(message, image ? decodeBase64Image(image) : undefined);
    const signal = c.req.raw.signal;
    if (!stream) {
      const response = await ctx.chat.complete(messages, signal);
      return c.json({ response, analysis });
    }
    // Opened before the SSE response starts, so connection and auth errors are still a JSON error.
    const reply = await ctx.chat.stream(messages, signal);
    return streamSSE(c, async (sse) => {
      sse.onAbort(() => void reply.cancel());
      await sse.writeSSE({ event: 'analysis', data: JSON.stringify(analysis) });
      let response = '';
      try {
        for await (const piece of reply) {
          response += piece;
          await sse.writeSSE({ event: 'delta', data: JSON.stringify({ content: piece }) });
        }
        await sse.writeSSE({ event: 'done', data: JSON.stringify({ response }) });
      } catch (err) {
        const e = err instanceof ApiError ? err : new ApiError('llm_bad_gateway', 'the reply from the LLM broke off');
        await sse.writeSSE({ event: 'error', data: JSON.stringify({ code: e.code, message: e.message }) });
      }
    });
  });

  app.get('/chat/status', (c) => c.json(ctx.chatStatus.status()));
  return app;
}
