/**
 * The composition root: settings in, a running service out. Builds storage, the vision worker pool and the
 * face service, mounts the routes under /api, and maps every error to the JSON error body.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Settings } from './config/settings.js';
import { FaceService } from './engines/face-service.js';
import { VisionPool } from './engines/vision-pool.js';
import type { AppContext } from './http/context.js';
import { ApiError, errorBody, sendError } from './http/errors.js';
import type { Logger } from './logger.js';
import { healthRoutes } from './routes/health.js';
import { imageRoutes } from './routes/images.js';
import { labelRoutes } from './routes/labels.js';
import { recognizeRoutes } from './routes/recognize.js';
import { trainRoutes } from './routes/train.js';
import { ImageStore } from './storage/image-store.js';
import { ModelStore } from './storage/model-store.js';

export interface Service {
  app: Hono;
  ctx: AppContext;
  close(): Promise<void>;
}

async function readVersion(appDir: string): Promise<string> {
  try {
    return (JSON.parse(await fs.readFile(path.join(appDir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export async function createService(settings: Settings, log: Logger): Promise<Service> {
  let cascadeXml: string;
  try {
    cascadeXml = await fs.readFile(settings.cascadeFile, 'utf8');
  } catch (err) {
    throw new Error(`CASCADE_FILE: cannot read ${settings.cascadeFile} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  const images = new ImageStore(path.join(settings.dataDir, 'images'));
  const models = new ModelStore(path.join(settings.dataDir, 'models'));
  await Promise.all([images.init(), models.init()]);

  const pool = new VisionPool(
    {
      cascadeXml,
      cascade: {
        scaleFactor: settings.cascadeScaleFactor,
        minNeighbors: settings.cascadeMinNeighbors,
        minSize: settings.cascadeMinSize,
      },
    },
    settings.workers,
  );
  // Fail at start, not at the first request, when a worker cannot load the cascade.
  await pool.broadcast({ op: 'setModel', model: null, version: 0 });

  const faces = new FaceService({
    pool,
    images,
    models,
    limits: { maxPixels: settings.maxImagePixels },
    lbphWindow: { min: settings.lbphDistanceMin, max: settings.lbphDistanceMax },
    detectionMethod: settings.remoteDetectorDefaultMethod,
    recognitionModel: settings.recognitionModel,
    log,
  });
  await faces.init();

  const ctx: AppContext = {
    settings,
    faces,
    images,
    log,
    version: await readVersion(settings.appDir),
    startedAt: Date.now(),
    workers: pool.size,
  };

  const api = new Hono();
  api.use(
    '*',
    bodyLimit({
      maxSize: settings.maxBodyBytes,
      onError: (c) =>
        c.json(errorBody('payload_too_large', `the request body is larger than ${settings.maxBodyBytes} bytes`), 413),
    }),
  );
  for (const routes of [healthRoutes, imageRoutes, labelRoutes, trainRoutes, recognizeRoutes]) api.route('/', routes(ctx));
  api.notFound((c) => c.json(errorBody('not_found', `no endpoint ${c.req.method} ${c.req.path}`), 404));

  const app = new Hono();
  app.route('/api', api);
  app.onError((err, c) => {
    if (err instanceof ApiError) return sendError(c, err);
    log.error(`${c.req.method} ${c.req.path} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json(errorBody('internal_error', 'the server failed to handle this request; it has been logged'), 500);
  });
  app.notFound((c) => c.json(errorBody('not_found', `no page ${c.req.path}`), 404));

  return { app, ctx, close: () => pool.close() };
}
