/** Object detection: POST /api/objects/detect, GET /api/objects/classes, GET /api/objects/status. */
import { Hono } from 'hono';
import { OBJECT_CLASSES } from '../../shared/objects/classes.js';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { objectStatus } from './compat.js';

export function objectRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'detectObjects', (c, { body }) =>
    timeEngine(c, 'objects', () => ctx.objects.detect(decodeBase64Image(body.image), body.confidence)),
  );
  mountRoute(app, 'objectClasses', () => ({
    classes: [...OBJECT_CLASSES],
    count: OBJECT_CLASSES.length,
    detector: objectStatus(ctx),
    detector_name: ctx.objects.name,
  }));
  mountRoute(app, 'objectStatus', () => objectStatus(ctx));
  return app;
}
