/**
 * The trained models for browsers to run themselves: GET /api/models/trained describes them,
 * /api/models/trained/lbph and /api/models/trained/embedding are the files. Every answer's ETag is the
 * models' content version, so a browser that has a version asks with If-None-Match and gets a 304 until a
 * training changes the files. Each request reads one snapshot, so a download during a training gets the old
 * set or the new one, never a mix. What is downloaded is the kiosk gallery (server/audit/kiosk-gallery.ts): the
 * people kept out of it (`people.kiosk = false`) are not in the files, and its version changes with it.
 *
 * The corrections of the gallery's people come with them (/api/models/trained/corrections, kiosk-corrections.ts):
 * the list's version (its ETag) covers both, so a new or deleted correction reaches a kiosk at its next check
 * without a training; `models_version` stays the files' own version, so the kiosk downloads only what changed.
 */
import path from 'node:path';
import { Hono, type Context } from 'hono';
import type { TrainedModelsResponse } from '../../shared/api/index.js';
import { mountRoute } from '../http/route.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { etagMatches } from '../http/static-files.js';
import type { TrainedSnapshot } from '../storage/trained-files.js';
import { KioskGallery } from '../audit/kiosk-gallery.js';
import { type KioskCorrectionSet, KioskCorrections } from '../audit/kiosk-corrections.js';
import { encodeCorrectionsFile } from '../../shared/recognition/correction-file.js';

export const TRAINED_LBPH_URL = '/api/models/trained/lbph';
export const TRAINED_EMBEDDING_URL = '/api/models/trained/embedding';
export const TRAINED_CORRECTIONS_URL = '/api/models/trained/corrections';

/** The ETag of a version: the version in quotes (If-None-Match may send it with or without them). */
function etagOf(version: string): string {
  return `"${version}"`;
}

function describe(snapshot: TrainedSnapshot, corrections: KioskCorrectionSet | null): TrainedModelsResponse {
  const file = (bytes: Uint8Array | null, url: string) => ({ available: bytes !== null, url, bytes: bytes?.length ?? null });
  const described: TrainedModelsResponse = {
    version: corrections?.version ?? snapshot.version,
    trained_at: snapshot.trainedAt,
    labels: snapshot.labels,
    // training.yml's size from its open file: its bytes are streamed, never held (1.2 GB at 10,000 faces).
    lbph: { available: snapshot.lbphFile !== null, url: TRAINED_LBPH_URL, bytes: snapshot.lbphFile?.size ?? null },
    embedding: file(snapshot.files.embedding, TRAINED_EMBEDDING_URL),
  };
  // Nothing trained: no corrections to apply (and the answer stays as it always was).
  if (!snapshot.version) return described;
  return {
    ...described,
    models_version: snapshot.version,
    corrections: { ...file(corrections?.body ?? null, TRAINED_CORRECTIONS_URL), count: corrections?.count ?? 0 },
  };
}

function notModified(c: Context, version: string | null): boolean {
  return version !== null && etagMatches(c.req.header('if-none-match'), etagOf(version));
}

export function trainedModelRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  // The kiosk's filtered training.yml is spooled beside the models (same disk; the system temp folder may be RAM),
  // unlinked at once; a crash's leftover starts with the temp prefix the model store sweeps.
  const gallery = new KioskGallery(ctx.db, path.join(ctx.settings.dataDir, 'models'));
  const kioskCorrections = new KioskCorrections(ctx.db, () => ctx.faces.embeddingAvailability.descriptorModel ?? null);
  /** The gallery a device gets, and the corrections of its people (null: none, or nothing trained). */
  const current = async () => {
    const snapshot = await gallery.view(ctx.faces.trainedFiles);
    const corrections = snapshot.version ? await kioskCorrections.view(snapshot.version, snapshot.labels) : null;
    return { snapshot, corrections, version: corrections?.version ?? snapshot.version };
  };

  mountRoute(app, 'trainedModels', async (c) => {
    const { snapshot, corrections, version } = await current();
    const headers: Record<string, string> = { 'cache-control': 'no-cache' };
    if (version) headers.etag = etagOf(version);
    if (notModified(c, version)) return c.body(null, 304, headers);
    return c.json<TrainedModelsResponse>(describe(snapshot, corrections), 200, headers);
  });

  // The corrections as the list's version has them: an empty set when there are none (a device clears its own).
  mountRoute(app, 'trainedCorrections', async (c) => {
    const { snapshot, corrections, version } = await current();
    if (!snapshot.version || !version) {
      throw new ApiError('not_trained', 'no model is trained yet; corrections are applied to a trained model (POST /api/train)');
    }
    const headers = { etag: etagOf(version), 'cache-control': 'no-cache', 'x-model-version': version };
    if (notModified(c, version)) return c.body(null, 304, headers);
    const body =
      corrections?.body ?? new TextEncoder().encode(encodeCorrectionsFile({ version, descriptorModel: null, lbph: [], embedding: [] }));
    return c.body(body as Uint8Array<ArrayBuffer>, 200, { ...headers, 'content-type': 'application/json' });
  });

  const file = (name: 'lbph' | 'embedding', contentType: string) => async (c: Context) => {
    const snapshot = await gallery.view(ctx.faces.trainedFiles);
    const lbph = name === 'lbph' ? snapshot.lbphFile : null;
    const bytes = name === 'lbph' ? null : snapshot.files[name];
    if (!(lbph || bytes) || !snapshot.version) {
      throw new ApiError(
        'not_trained',
        snapshot.version
          ? `the ${name} recognizer has no trained model (its model did not load when the last training ran)`
          : 'no model is trained yet; upload images with POST /api/images and run POST /api/train',
      );
    }
    const headers = { etag: etagOf(snapshot.version), 'cache-control': 'no-cache', 'x-model-version': snapshot.version };
    if (notModified(c, snapshot.version)) return c.body(null, 304, headers);
    if (lbph) {
      // From the snapshot's open file, in pieces: the bytes of this version even if a training renamed new ones in.
      const body = ReadableStream.from(lbph.chunks()) as ReadableStream<Uint8Array<ArrayBuffer>>;
      return c.body(body, 200, { ...headers, 'content-type': contentType, 'content-length': String(lbph.size) });
    }
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, { ...headers, 'content-type': contentType });
  };
  mountRoute(app, 'trainedLbph', file('lbph', 'text/yaml; charset=utf-8'));
  mountRoute(app, 'trainedEmbedding', file('embedding', 'application/json'));

  return app;
}
