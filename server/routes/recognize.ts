/** POST /api/recognize: faces in one image, each with a label and a confidence. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';

export function recognizeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'recognize', (c, { body }) => {
    // One request may name its recognizer (the identity provider's second factor always asks for embedding).
    const model = body.recognition_model === 'dlib' ? 'embedding' : body.recognition_model;
    return timeEngine(c, 'recognize', () => ctx.faces.recognize(decodeBase64Image(body.image), model));
  });
  return app;
}
