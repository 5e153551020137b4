/**
 * The trained models for browsers to run themselves: GET /api/models/trained describes them,
 * /api/models/trained/lbph and /api/models/trained/embedding are the files. Every answer's ETag is the
 * models' content version, so a browser that has a version asks with If-None-Match and gets a 304 until a
 * training changes the files. Each request reads one snapshot, so a download during a training gets the old
 * set or the new one, never a mix. What is downloaded is the kiosk gallery (server/audit/kiosk-gallery.ts): the
 * people kept out of it (`people.kiosk = false`) are not in the files, and its version changes with it.
 */
import { Hono, type Context } from 'hono';
import type { TrainedModelsResponse } from '../../shared/api/index.js';
import { mountRoute } from '../http/route.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { etagMatches } from '../http/static-files.js';
import type { TrainedSnapshot } from '../storage/trained-files.js';
import { KioskGallery } from '../audit/kiosk-gallery.js';

export const TRAINED_LBPH_URL = '/api/models/trained/lbph';
export const TRAINED_EMBEDDING_URL = '/api/models/trained/embedding';

/** The ETag of a version: the version in quotes (If-None-Match may send it with or without them). */
function etagOf(version: string): string {
  return `"${version}"`;
}

function describe(snapshot: TrainedSnapshot): TrainedModelsResponse {
  const file = (bytes: Uint8Array | null, url: string) => ({ available: bytes !== null, url, bytes: bytes?.length ?? null });
  return {
    version: snapshot.version,
    trained_at: snapshot.trainedAt,
    labels: snapshot.labels,
    lbph: file(snapshot.files.lbph, TRAINED_LBPH_URL),
    embedding: file(snapshot.files.embedding, TRAINED_EMBEDDING_URL),
  };
}

function notModified(c: Context, version: string | null): boolean {
  return version !== null && etagMatches(c.req.header('if-none-match'), etagOf(version));
}

export function trainedModelRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const gallery = new KioskGallery(ctx.db);

  mountRoute(app, 'trainedModels', async (c) => {
    const snapshot = await gallery.view(ctx.faces.trainedFiles);
    const headers: Record<string, string> = { 'cache-control': 'no-cache' };
    if (snapshot.version) headers.etag = etagOf(snapshot.version);
    if (notModified(c, snapshot.version)) return c.body(null, 304, headers);
    return c.json<TrainedModelsResponse>(describe(snapshot), 200, headers);
  });

  const file = (name: 'lbph' | 'embedding', contentType: string) => async (c: Context) => {
    const snapshot = await gallery.view(ctx.faces.trainedFiles);
    const bytes = snapshot.files[name];
    if (!bytes || !snapshot.version) {
      throw new ApiError(
        'not_trained',
        snapshot.version
          ? `the ${name} recognizer has no trained model (its model did not load when the last training ran)`
          : 'no model is trained yet; upload images with POST /api/images and run POST /api/train',
      );
    }
    const headers = { etag: etagOf(snapshot.version), 'cache-control': 'no-cache', 'x-model-version': snapshot.version };
    if (notModified(c, snapshot.version)) return c.body(null, 304, headers);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { ...headers, 'content-type': contentType });
  };
  mountRoute(app, 'trainedLbph', file('lbph', 'text/yaml; charset=utf-8'));
  mountRoute(app, 'trainedEmbedding', file('embedding', 'application/json'));

  return app;
}
