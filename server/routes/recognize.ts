/** POST /api/recognize: faces in one image, each with a label and a confidence. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';

export function recognizeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'recognize', (_c, { body }) => ctx.faces.recognize(decodeBase64Image(body.image)));
  return app;
}
