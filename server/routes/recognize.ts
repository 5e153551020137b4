/** POST /api/recognize: faces in one image, each with a label and a confidence. */
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { keepRecognition } from '../sightings/hooks.js';

export function recognizeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'recognize', async (c, { body }) => {
    // One request may name its recognizer (the identity provider's second factor always asks for embedding).
    const model = body.recognition_model === 'dlib' ? 'embedding' : body.recognition_model;
    const bytes = decodeBase64Image(body.image);
    const answer = await timeEngine(c, 'recognize', () => ctx.faces.recognize(bytes, model));
    // The faces kept as sightings (SIGHTINGS_*): cropped and stored after this answer, never holding it up.
    keepRecognition(ctx, c, { source: body.source ?? 'api', camera: body.camera ?? null, bytes, answer });
    return answer;
  });
  return app;
}
