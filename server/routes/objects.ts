/** Object detection: POST /api/objects/detect, GET /api/objects/classes, GET /api/objects/status. */
import { Hono } from 'hono';
import { z } from 'zod';
import { OBJECT_CLASSES } from '../../shared/objects/classes.js';
import type { AppContext } from '../http/context.js';
import { readJson } from '../http/request.js';
import { decodeBase64Image } from '../imaging/decode.js';

const detectRequest = z.object({
  image: z.string({ error: 'must be the image as base64 text or a data URL' }).min(1, 'must not be empty'),
  confidence: z.number({ error: 'must be a number from 0 to 1' }).min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').optional(),
});

export function objectRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  app.post('/objects/detect', async (c) => {
    const { image, confidence } = await readJson(c, detectRequest);
    return c.json(await ctx.objects.detect(decodeBase64Image(image), confidence));
  });

  app.get('/objects/classes', (c) => c.json({ classes: [...OBJECT_CLASSES], count: OBJECT_CLASSES.length, detector: ctx.objects.name }));

  app.get('/objects/status', (c) => c.json(ctx.objects.status()));

  return app;
}
