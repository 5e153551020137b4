/** POST /api/images/check: the photo check of a training image before it is stored (nothing is stored). */
import { Hono } from 'hono';
import { toFaceBox } from '../../shared/recognition/photo-check.js';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';

export function enrollmentRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'checkImage', async (_c, { body }) => {
    const bytes = decodeBase64Image(body.image);
    return ctx.decoder.use(bytes, async (image) => {
      const { width, height } = image.rgb;
      const { boxes, check } = await ctx.photoChecks.check(image, body.face);
      return { check, faces: boxes.map(toFaceBox), width, height };
    });
  });
  return app;
}
