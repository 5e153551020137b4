/** POST /api/recognize: faces in one image, each with a label and a confidence. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';

export function recognizeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'recognize', (c, { body }) => timeEngine(c, 'recognize', () => ctx.faces.recognize(decodeBase64Image(body.image))));
  return app;
}
