/** POST /api/recognize: faces in one image, each with a label and a confidence. */
import { Hono } from 'hono';
import { recognizeRequest } from '../../shared/api/contract.js';
import type { AppContext } from '../http/context.js';
import { readJson } from '../http/request.js';
import { decodeBase64Image } from '../imaging/decode.js';

export function recognizeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  app.post('/recognize', async (c) => {
    const { image } = await readJson(c, recognizeRequest);
    return c.json(await ctx.faces.recognize(decodeBase64Image(image)));
  });
  return app;
}
