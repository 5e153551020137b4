/**
 * The trained models for browsers to run themselves: GET /api/models/trained describes them,
 * /api/models/trained/lbph and /api/models/trained/embedding are the files. Every answer's ETag is the
 * models' content version, so a browser that has a version asks with If-None-Match and gets a 304 until a
 * training changes the files. Each request reads one snapshot, so a download during a training gets the old
 * set or the new one, never a mix. A training answers before its training.yml is written (#27): until it is, these
 * routes wait for it (FaceService.writtenFiles), so a download is the new version whole, never a missing file.
 * What is downloaded is the kiosk gallery (server/audit/kiosk-gallery.ts): the people kept out of it
 * (`people.kiosk = false`) are not in the files, and its version changes with it.
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
import { COMPACT_FORMAT } from '../../shared/recognition/compact-model.js';
import { COMPACT_SEGMENTS_URL, type CompactModelManifest } from '../../shared/api/compact-models.js';
import { KioskCompact } from '../audit/kiosk-compact.js';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

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
    const snapshot = await gallery.view(await ctx.faces.writtenFiles());
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
    const snapshot = await gallery.view(await ctx.faces.writtenFiles());
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
  // #27: the same gallery as one segment per person, so a device fetches only the people it lacks.
  const compact = new KioskCompact();
  // Made when a model is published, in the background (after its training.yml, which the gallery's version waits
  // for), so a kiosk's first manifest request after a training or a deletion finds them made instead of making them.
  const prepareCompact = () => {
    void (async () => {
      const snapshot = await gallery.view(await ctx.faces.writtenFiles());
      if (snapshot.version) await compact.view(snapshot);
    })().catch((err) => ctx.log.warn(`preparing the compact kiosk model failed; the first request makes it: ${String(err)}`));
  };
  ctx.faces.onPublish((snapshot) => {
    if (snapshot.version && !snapshot.written) prepareCompact();
  });
  if (ctx.faces.trainedFiles.version) prepareCompact();
  mountRoute(app, 'trainedCompact', async (c) => {
    const { snapshot, corrections, version } = await current();
    if (!snapshot.version || !version) {
      throw new ApiError('not_trained', 'no model is trained yet; upload images with POST /api/images and run POST /api/train');
    }
    const headers = { etag: etagOf(version), 'cache-control': 'no-cache' };
    if (notModified(c, version)) return c.body(null, 304, headers);
    const set = await compact.view(snapshot);
    const described = describe(snapshot, corrections);
    const manifest: CompactModelManifest = {
      format: 'lookout-compact',
      format_version: COMPACT_FORMAT,
      version,
      models_version: snapshot.version,
      trained_at: snapshot.trainedAt,
      labels: snapshot.labels,
      segments_url: COMPACT_SEGMENTS_URL,
      lbph: set.lbph
        ? {
            radius: set.lbph.head.radius,
            neighbors: set.lbph.head.neighbors,
            grid_x: set.lbph.head.gridX,
            grid_y: set.lbph.head.gridY,
            threshold: set.lbph.head.threshold,
            face_alignment: set.lbph.head.faceAlignment,
            people: set.lbph.people,
            wire_bytes: set.lbph.wireBytes,
          }
        : null,
      embedding: set.embedding
        ? {
            descriptor_model: set.embedding.descriptorModel,
            dim: set.embedding.dim,
            people: set.embedding.people,
            wire_bytes: set.embedding.wireBytes,
          }
        : null,
      corrections: described.corrections ?? { available: false, url: TRAINED_CORRECTIONS_URL, bytes: null, count: 0 },
    };
    return c.json(manifest, 200, headers);
  });

  mountRoute(app, 'trainedCompactSegments', async (c, { query }) => {
    const snapshot = await gallery.view(await ctx.faces.writtenFiles());
    if (!snapshot.version)
      throw new ApiError('not_trained', 'no model is trained yet; upload images with POST /api/images and run POST /api/train');
    const set = await compact.view(snapshot);
    const parts: Uint8Array[] = [];
    for (const hash of query.hashes.split(',')) {
      const bytes = compact.segment(set, hash);
      if (!bytes)
        throw new ApiError('not_found', `no segment ${hash} in the current model (a training replaced it: read the manifest again)`);
      const length = new Uint8Array(4);
      new DataView(length.buffer).setUint32(0, bytes.length, true);
      parts.push(length, bytes);
    }
    const body = Buffer.concat(parts);
    // Named by their content, so their ETag never changes; not `immutable`: the API's policy (server/http/headers.ts)
    // keeps no biometric answer in a browser's HTTP cache past a revalidation, so a deleted person's segment does not
    // linger there. The device keeps the segments it uses itself and drops a person who leaves the manifest.
    const headers: Record<string, string> = {
      etag: etagOf(createHash('sha256').update(query.hashes).digest('hex').slice(0, 16)),
      'cache-control': 'no-cache',
      'content-type': 'application/octet-stream',
      vary: 'accept-encoding',
    };
    if (notModified(c, headers.etag.slice(1, -1))) return c.body(null, 304, headers);
    if (/\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) {
      return c.body(gzipSync(body) as Uint8Array<ArrayBuffer>, 200, { ...headers, 'content-encoding': 'gzip' });
    }
    return c.body(body as Uint8Array<ArrayBuffer>, 200, headers);
  });

  mountRoute(app, 'trainedLbph', file('lbph', 'text/yaml; charset=utf-8'));
  mountRoute(app, 'trainedEmbedding', file('embedding', 'application/json'));

  return app;
}
