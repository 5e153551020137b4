/**
 * The composition root: settings in, a running service out. Builds storage, the vision worker pool and the
 * face service, mounts the routes under /api, and maps every error to the JSON error body.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { Hono, type Context } from 'hono';
import { GROUPING_DESCRIPTOR_MODEL } from '../shared/embedding/descriptor-models.js';
import { DEFAULT_DESCRIPTOR_MODEL } from '../shared/recognition/rules.js';
import { RECOGNITION_MODELS } from '../shared/api/index.js';
import { RuntimeStore } from './config/runtime-store.js';
import type { Settings } from './config/settings.js';
import { ChatService } from './chat/chat-service.js';
import { createDatabase, isDatabaseUnreachable, redactUrl } from './db/database.js';
import { ChatStatus } from './chat/chat-status.js';
import { readFeatureCascades, readProfileCascade } from './chat/feature-cascades.js';
import { LlmClient } from './chat/llm-client.js';
import { startLocalLlmServer, type LocalLlmServer } from './chat/local-llm-server.js';
import { settingsRule } from './engines/faces/decision-rules.js';
import { readCohortFile } from './engines/faces/cohort-file.js';
import { FaceService } from './engines/faces/face-service.js';
import { ObjectService } from './engines/objects/object-service.js';
import { RemoteEngine } from './engines/remote/remote-engine.js';
import { ProcessorStatus } from './events/processor-status.js';
import { EmbeddingHost } from './engines/faces/embedding-host.js';
import type { VisionOps } from './engines/faces/vision-protocol.js';
import { WorkerPool } from './engines/workers/worker-pool.js';
import type { AppContext } from './http/context.js';
import { lastDeletion } from './deletion/forget-person.js';
import { BearerAuth } from './http/auth.js';
import { ApiError, errorBody, sendError, sendInternalError } from './http/errors.js';
import { appHeaders } from './http/headers.js';
import { readOnlyPages, wrongMethod } from './http/methods.js';
import { ApiMetrics, requestContext } from './http/observability.js';
import { bodyLimit, ClientAbortError, isAbortError } from './http/request.js';
import { allowedHostsFor, webSecurity } from './http/security.js';
import { originalWords } from './http/original-words.js';
import { routeReadsBody } from './http/route.js';
import { staticFiles } from './http/static-files.js';
import { ImageDecoder } from './imaging/decode.js';
import { PixelBudget, ServerBusyError } from './imaging/pixel-budget.js';
import { MemoryReclaimer } from './imaging/reclaim.js';
import type { Logger } from './logger.js';
import { metricsResponse } from './metrics.js';
import { PpeService } from './ppe/ppe-service.js';
import { authConfigRoutes } from './routes/auth-config.js';
import { chatRoutes } from './routes/chat.js';
import { analyzeRoutes } from './routes/analyze.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { imageRoutes } from './routes/images.js';
import { labelRoutes } from './routes/labels.js';
import { modelRoutes } from './routes/models.js';
import { objectRoutes } from './routes/objects.js';
import { ppeRoutes } from './routes/ppe.js';
import { processorRoutes } from './routes/processor.js';
import { recognizeRoutes } from './routes/recognize.js';
import { verifyRoutes } from './routes/verify.js';
import { resultRoutes } from './routes/results.js';
// #26 deletion
import { deletionRoutes } from './routes/deletions.js';
// #26 review
import { reviewRoutes } from './routes/review.js';
import { createReviewStore } from './review/review-store.js';
import { trainRoutes } from './routes/train.js';
import { trainedModelRoutes } from './routes/trained-models.js';
// #26 audit
import { AuditLog } from './audit/audit-log.js';
import { auditMiddleware } from './audit/audit-middleware.js';
import { auditRoutes } from './routes/audit.js';
// #36 2 people pages, search by face
import { peopleRoutes } from './routes/people.js';
import { ImageStore } from './storage/image-store.js';
import { FeatureStore, featureVersionsOf } from './storage/feature-store.js';
import { ModelStore } from './storage/model-store.js';
import { makeDataDirPrivate } from './storage/private-modes.js';
import { PgSharedFiles } from './storage/replication/pg-shared-files.js';
import { ResultStore } from './storage/result-store.js';
import { LocalFiles, type SharedFiles, StateUnavailableError } from './storage/shared-files.js';
// #26 sightings
import { RecognitionActivity } from './sightings/recognition-activity.js';
import { SightingRecorder } from './sightings/sighting-recorder.js';
import { SightingStore } from './sightings/sighting-store.js';
import { sightingRoutes } from './routes/sightings.js';
// #26 corrections
import { CorrectionStore } from './review/corrections.js';
import { correctionRoutes } from './routes/corrections.js';
// #26 enrollment
import { PeopleStore } from './people/people-store.js';
import { PhotoChecker } from './people/photo-checker.js';
import { enrollmentRoutes } from './routes/enrollment.js';

export interface Service {
  app: Hono;
  ctx: AppContext;
  /** The choices made through the API and kept in DATA_DIR (recognizer, detection method, thresholds). */
  runtime: RuntimeStore;
  close(): Promise<void>;
}

async function readVersion(appDir: string): Promise<string> {
  try {
    return (JSON.parse(await fs.readFile(path.join(appDir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

const LANDING_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lookout</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
<h1>Lookout is running</h1><p>The REST API is at <a href="/api/health">/api/health</a>,
<a href="/api/ready">/api/ready</a> and the others in the <a href="/api/docs">API reference</a>.
The web app has not been built in this installation.</p></body></html>`;

/** Model files only change with an upgrade (and the service worker keeps its own copy): cache a day, revalidate. */
export const MODEL_CACHE_CONTROL = 'public, max-age=86400, stale-while-revalidate=604800';
/** Vite names /assets/* files by their content hash: a changed file is a new URL. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * Model files for the browser, and the web app's build where one exists (else a page saying the API runs).
 * The app's routes all answer index.html; a missing file (a path with an extension) is a 404, not the page.
 */
function mountStatic(app: Hono, appDir: string): void {
  const notFound = (what: string) => (c: Context) => c.json(errorBody('not_found', `no ${what} ${c.req.path}`), 404);
  app.use('/models/*', staticFiles({ root: path.join(appDir, 'public'), cacheControl: () => MODEL_CACHE_CONTROL }));
  app.get('/models/*', notFound('model file'));
  const clientDir = path.join(appDir, 'dist/client');
  const index = path.join(clientDir, 'index.html');
  if (existsSync(index)) {
    // A service worker is checked for updates on every navigation; Service-Worker-Allowed lets it control "/".
    app.use('/sw.js', staticFiles({ root: clientDir, cacheControl: () => 'no-cache', headers: () => ({ 'service-worker-allowed': '/' }) }));
    app.use('/assets/*', staticFiles({ root: clientDir, cacheControl: () => ASSET_CACHE_CONTROL }));
    app.get('/assets/*', notFound('file'));
    app.use('/*', staticFiles({ root: clientDir, cacheControl: () => 'no-cache' }));
    app.get('*', (c, next) => (/\.[A-Za-z0-9]+$/.test(c.req.path) ? notFound('file')(c) : next()));
    app.get('*', staticFiles({ root: clientDir, file: index, cacheControl: () => 'no-cache' }));
  } else {
    app.get('/', (c) => c.html(LANDING_PAGE, 200, { 'cache-control': 'no-cache' }));
  }
}

/** What a caller may give the service besides its settings. */
export interface ServiceOptions {
  /**
   * #37: where the file stores' state is shared (server/storage/shared-files.ts); the embedded default, DATA_DIR's
   * own files, when absent.
   */
  shared?: SharedFiles;
}

export async function createService(settings: Settings, log: Logger, opts: ServiceOptions = {}): Promise<Service> {
  let cascadeXml: string;
  try {
    cascadeXml = await fs.readFile(settings.cascadeFile, 'utf8');
  } catch (err) {
    throw new Error(`CASCADE_FILE: cannot read ${settings.cascadeFile} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  const featureCascadeXml = await readFeatureCascades(settings);
  const profileCascadeXml = await readProfileCascade(settings);
  // #35 12: biometric files readable by this user only; what older versions made is made private once.
  await makeDataDirPrivate(settings.dataDir, log);
  // Opened at start in the background by server/main.ts, or by its first query; the connection string is never logged whole.
  const db = createDatabase({
    url: settings.databaseUrl,
    embeddedDir: path.join(settings.dataDir, 'db'),
    embeddedBuffersMb: settings.embeddedDbBuffersMb,
    log,
  });
  // #37: one seam for every file store: each tells it what it changed, and takes its cross-process locks from it.
  // With DATABASE_URL the state is PostgreSQL's and DATA_DIR a copy, made whole here before any store reads it.
  const shared =
    opts.shared ??
    (settings.databaseUrl
      ? await PgSharedFiles.open({ db, url: settings.databaseUrl, dataDir: settings.dataDir, log })
      : new LocalFiles(settings.dataDir));
  // #27: each image's training features beside it (DATA_DIR/features mirrors DATA_DIR/images), reused by training.
  const images = new ImageStore(
    path.join(settings.dataDir, 'images'),
    log,
    new FeatureStore(path.join(settings.dataDir, 'features'), log, shared),
    shared,
  );
  const models = new ModelStore(path.join(settings.dataDir, 'models'), { shared });
  // The results history is in the database; the files of earlier versions in DATA_DIR/results are imported once.
  const results = new ResultStore({ db, dir: path.join(settings.dataDir, 'results'), max: settings.resultsMax, log });
  log.info(
    settings.databaseUrl
      ? `database: PostgreSQL at ${redactUrl(settings.databaseUrl)}`
      : `database: embedded in ${path.join(settings.dataDir, 'db')}`,
  );
  // The recognizer's descriptor model, known once the face service exists (its embedding worker says).
  let descriptorModel = (): string => DEFAULT_DESCRIPTOR_MODEL;
  // Choices made through the API (recognizer, detection method, thresholds), kept in DATA_DIR: they win over the settings.
  const runtime = new RuntimeStore({
    dataDir: settings.dataDir,
    shared,
    defaultRule: (recognizer, descriptor) => settingsRule(settings, recognizer, descriptor),
    descriptorModel: () => descriptorModel(),
    log,
    // #35: limits past the calibrated bounds are refused unless THRESHOLD_BOUNDS=off.
    calibratedBounds: settings.thresholdBounds !== 'off',
  });
  // A settings' rule that cannot work stops the start with the reason, rather than failing every recognition.
  for (const recognizer of RECOGNITION_MODELS) {
    try {
      runtime.defaultsFor(recognizer);
    } catch (err) {
      const names = recognizer === 'lbph' ? 'LBPH_DISTANCE_MIN/LBPH_DISTANCE_MAX' : 'EMBEDDING_DISTANCE_MAX';
      throw new Error(
        `${names}: the ${recognizer} decision rule they make is not usable (${err instanceof Error ? err.message : String(err)})`,
      );
    }
  }
  await Promise.all([images.init(), models.init(), results.init(), runtime.init()]);
  const saved = runtime.saved;

  const pool = new WorkerPool<VisionOps>({
    name: 'vision',
    script: 'faces/vision-worker',
    data: {
      cascadeXml,
      featureCascadeXml,
      profileCascadeXml,
      cascade: { scaleFactor: settings.cascadeScaleFactor, minNeighbors: settings.cascadeMinNeighbors, minSize: settings.cascadeMinSize },
    },
    size: settings.workers,
    // #38 2: one worker at start; the others (up to WORKERS) when requests wait for one or a lone one asks for help,
    // stopped again after ENGINE_IDLE_RELEASE_S without a job.
    min: 1,
    idleReleaseMs: settings.engineIdleReleaseS * 1000,
    log: (message) => log.info(message),
  });
  // Fail at start, not at the first request, when a worker cannot load the cascade.
  await pool.broadcast('setModel', null);
  const cohortDir = path.join(settings.appDir, 'public/models/cohort');
  // #38 2: the embedding worker starts on the first job that needs its nets and goes after ENGINE_IDLE_RELEASE_S.
  const embedding = settings.embeddingEnabled
    ? new EmbeddingHost({
        data: { modelDir: path.join(settings.appDir, 'public/models/face-api'), descriptor: settings.embeddingDescriptor, cohortDir },
        idleReleaseMs: settings.engineIdleReleaseS * 1000,
        log,
      })
    : null;
  // The same cohort file the worker reads, for 1:1 verification's per-person limit (a problem is logged by the worker's status).
  const { cohort } = settings.embeddingEnabled ? readCohortFile(cohortDir, settings.embeddingDescriptor) : { cohort: null };

  const remote = new RemoteEngine({
    enabled: settings.remoteDetectorEnabled,
    url: settings.remoteDetectorUrl,
    modelName: settings.remoteDetectorModelName,
    confidenceThreshold: settings.remoteDetectorConfidenceThreshold,
    timeoutMs: settings.remoteDetectorTimeoutMs,
    checkIntervalMs: settings.remoteDetectorCheckIntervalMs,
    log,
  });
  await remote.start();

  // A configured or saved choice of `remote` with the server down at start: start on `local`, say so, switch later.
  let startDetectionMethod = saved.detection_method ?? settings.remoteDetectorDefaultMethod;
  if (startDetectionMethod === 'remote' && remote.unavailableReason) {
    const source = saved.detection_method ? 'the saved detection method is remote' : 'REMOTE_DETECTOR_DEFAULT_METHOD=remote';
    log.warn(`${source} but ${remote.unavailableReason}; starting with local detection`);
    startDetectionMethod = 'local';
  }
  // Decoded pixels over every route are admitted against MAX_INFLIGHT_PIXELS; their memory is collected after.
  const reclaimer = new MemoryReclaimer({ threshold: settings.maxInflightPixels / 2, log });
  const budget = new PixelBudget({
    capacity: settings.maxInflightPixels,
    waitMs: settings.maxInflightWaitMs,
    onRelease: (pixels, inUse) => reclaimer.released(pixels, inUse),
  });
  const decoder = new ImageDecoder({ maxPixels: settings.maxImagePixels }, budget);
  const faces = new FaceService({
    pool,
    embedding,
    remote,
    images,
    models,
    decoder,
    rules: runtime,
    cohort,
    detectionMethod: startDetectionMethod,
    recognitionModel: saved.recognition_model ?? settings.recognitionModel,
    log,
    featureVersions: featureVersionsOf({
      cascadeXml,
      cascade: { scaleFactor: settings.cascadeScaleFactor, minNeighbors: settings.cascadeMinNeighbors, minSize: settings.cascadeMinSize },
      eyeCascadeXml: featureCascadeXml.eye,
      remote: {
        url: settings.remoteDetectorUrl,
        modelName: settings.remoteDetectorModelName,
        confidenceThreshold: settings.remoteDetectorConfidenceThreshold,
      },
    }),
  });
  descriptorModel = () => faces.embeddingAvailability.descriptorModel ?? DEFAULT_DESCRIPTOR_MODEL;
  // Another replica's change of recognizer or detection method (read from DATA_DIR) applies here too.
  runtime.onChange((now, before) => {
    if (now.recognition_model && now.recognition_model !== before.recognition_model) faces.setRecognitionModel(now.recognition_model);
    if (now.detection_method && now.detection_method !== before.detection_method) faces.setDetectionMethod(now.detection_method);
  });
  await faces.init();

  const objects = new ObjectService({
    enabled: settings.objectDetectionEnabled,
    model: settings.objectModel,
    modelDir: path.join(settings.appDir, 'public/models'),
    workers: settings.objectWorkers,
    confidence: settings.objectConfidence,
    nmsIou: settings.objectNmsIou,
    idleReleaseMs: settings.engineIdleReleaseS * 1000,
    decoder,
    log,
  });
  objects.start();
  // Prometheus metrics (GET /metrics): one registry per service; the pools' queues are read at each scrape.
  const metrics = new ApiMetrics({
    queues: () => ({ vision: pool.queueLength, embedding: embedding?.queueLength ?? 0, object: objects.queueLength }),
    threads: () => ({ vision: pool.running }),
    // #36 4: read at each scrape (the recorder is made below, before any scrape).
    sightings: () => sightingRecorder.stats(),
    lastTraining: () => faces.trainStatus().last,
  });
  const engineOf: Record<string, 'detect' | 'embed'> = { detect: 'detect', describe: 'embed' };
  for (const p of [pool, embedding]) p?.onJob((op, seconds) => engineOf[op] && metrics.engine.observe({ engine: engineOf[op] }, seconds));

  // Offline chat: the GGUF model is served in-process behind the same OpenAI interface on 127.0.0.1.
  let local: LocalLlmServer | null = null;
  if (settings.chatEnabled && settings.chatModelPath) {
    try {
      local = await startLocalLlmServer({
        modelPath: path.resolve(settings.chatModelPath),
        threads: settings.chatThreads,
        contextSize: 8192,
        maxTokens: settings.chatMaxTokens,
        temperature: settings.chatTemperature,
        appDir: settings.appDir,
        log,
      });
    } catch (err) {
      await Promise.all([pool.close(), embedding?.close(), objects.close()]);
      throw new Error(`CHAT_MODEL_PATH: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (settings.chatEndpoint) log.warn('CHAT_MODEL_PATH is set, so CHAT_ENDPOINT is not used');
    log.info(`offline chat model ${local.llm.model} served on ${local.url}`);
  }
  const chatEndpoint = local?.url ?? settings.chatEndpoint;
  const llm = chatEndpoint
    ? new LlmClient({
        endpoint: chatEndpoint,
        model: (local ? local.llm.model : settings.chatModel) || undefined,
        apiKey: settings.chatApiKey || undefined,
        tokenFile: settings.chatTokenFile || undefined,
        maxTokens: settings.chatMaxTokens,
        temperature: settings.chatTemperature,
        timeoutMs: settings.chatTimeoutMs,
        log,
      })
    : null;
  const chatStatus = new ChatStatus({ enabled: settings.chatEnabled, client: llm, intervalMs: settings.chatCheckIntervalMs, log });
  void chatStatus.start();
  const chat = new ChatService({
    status: chatStatus,
    faces,
    objects,
    systemPrompt: settings.chatSystemPrompt,
    decoder,
    features: (faces) =>
      pool.run(
        'features',
        { faces },
        faces.flatMap((f) => [f.gray.data.buffer as ArrayBuffer, ...(f.around ? [f.around.data.buffer as ArrayBuffer] : [])]),
      ),
  });
  const processorStatus = new ProcessorStatus({ url: settings.processorUrl, intervalMs: settings.processorCheckIntervalMs, log });
  void processorStatus.start();
  // PPE checks: the detector's health in the background, the history in DATA_DIR/ppe/, events to Kafka when set.
  let ppe: PpeService;
  try {
    ppe = new PpeService({ settings, objects, chat, chatStatus, decoder, log, onUpstreamError: (u) => metrics.upstreamError(u) });
    await ppe.init();
  } catch (err) {
    remote.stop();
    chatStatus.stop();
    processorStatus.stop();
    await local?.close();
    await Promise.all([pool.close(), embedding?.close(), objects.close()]);
    throw err;
  }
  void ppe.start();

  // #26 audit: purged at start (once the database is open) and every hour; stopped in close().
  const audit = new AuditLog(db, { retentionDays: settings.auditRetentionDays, log });
  audit.start();
  // #26 sightings: rows in the database, crops in DATA_DIR/sightings; kept after the answers, purged at start and hourly.
  const sightings = new SightingStore({
    db,
    dir: path.join(settings.dataDir, 'sightings'),
    retentionDays: settings.sightingsRetentionDays,
    max: settings.sightingsMax,
    shared,
  });
  const sightingRecorder = new SightingRecorder({
    store: sightings,
    settings: { enabled: settings.sightingsEnabled, sources: settings.sightingsSources, intervalS: settings.sightingsIntervalS },
    describe: () => (embedding && faces.embeddingAvailability.available ? (rgb, boxes) => embedding.run('describe', { rgb, boxes }) : null),
    // #36 1: grouping is tuned on the 128-d descriptor; a faceres-1024 server keeps one more per unknown face kept.
    describeForGrouping: () =>
      embedding && faces.embeddingAvailability.available && faces.embeddingAvailability.descriptorModel !== GROUPING_DESCRIPTOR_MODEL
        ? async (rgb, boxes) => (await embedding.run('describeForGrouping', { rgb, boxes })) ?? []
        : null,
    // A camera face continues a track within the distance at which the embedding recognizer would name someone.
    trackMax: () => faces.ruleFor('embedding').max,
    // #36 4: its work waits for quiet recognitions, and for the workers' queues to be empty.
    activity: new RecognitionActivity({ busy: () => pool.queueLength > 0 || (embedding?.queueLength ?? 0) > 0 }),
    log,
  });
  if (settings.sightingsEnabled) sightingRecorder.start();
  // #26 corrections: "not this person" templates, installed in the recognizers at start when any were ever made (a
  // database that does not answer now is logged; the watch below tries again).
  const corrections = new CorrectionStore({ db, dataDir: settings.dataDir, faces, images, log, shared });
  await corrections.start().catch((err) => log.error(`the corrections could not be loaded (tried again shortly): ${String(err)}`));
  // #26 review: assign / dismiss / undo of the faces seen (an assign's undo holds until the next training).
  const review = createReviewStore({ db, dataDir: settings.dataDir, images, faces, corrections, log });
  const ctx: AppContext = {
    settings,
    shared,
    faces,
    remote,
    objects,
    embedding,
    chat,
    chatStatus,
    ppe,
    processorStatus,
    images,
    decoder,
    results,
    models,
    db,
    audit,
    sightings,
    sightingRecorder,
    corrections,
    // #26 review
    review,
    // #26 enrollment
    people: new PeopleStore(db),
    photoChecks: new PhotoChecker(pool, { method: () => faces.detectionMethod, remote }),
    log,
    version: await readVersion(settings.appDir),
    startedAt: Date.now(),
    workers: pool.size,
  };

  const api = new Hono();
  // A path served under other methods: 405 with Allow instead of the catch-all's 404.
  api.use('*', wrongMethod(api));
  // #26 audit: biometric operations recorded once answered, refusals by the bearer check below included.
  api.use('*', auditMiddleware(audit, log, { aggregateAnonymousRefusals: settings.authMode === 'oidc' }));
  // AUTH_MODE=oidc: a bearer token with the operation's role (shared/api/roles.ts), checked before any body is read.
  if (settings.authMode === 'oidc') {
    const auth = new BearerAuth({
      issuer: settings.oidcIssuer,
      audience: settings.oidcAudience,
      jwksUrl: settings.oidcJwksUrl,
      cooldownMs: settings.oidcJwksCooldownMs,
      // #28: a user's tokens issued before their face data was deleted (the IdP removing them) are refused.
      lastDeletion: (label) => lastDeletion(ctx, label),
      log,
    });
    auth.start();
    api.use('*', auth.middleware());
  }
  // 413 over MAX_BODY_BYTES, after reading (and dropping) a bounded rest of the body so the client reads it.
  api.use('*', bodyLimit({ maxBytes: settings.maxBodyBytes, readsBody: routeReadsBody('/api') }));
  // Each module mounts its entries of the route table (shared/api/routes.ts), which is also the OpenAPI document.
  const routeModules = [
    healthRoutes,
    authConfigRoutes,
    imageRoutes,
    // #26 enrollment
    enrollmentRoutes,
    labelRoutes,
    trainRoutes,
    recognizeRoutes,
    analyzeRoutes,
    verifyRoutes,
    trainedModelRoutes,
    (c: AppContext) => modelRoutes(c, runtime),
    objectRoutes,
    resultRoutes,
    deletionRoutes,
    // #26 sightings
    sightingRoutes,
    // #26 review
    reviewRoutes,
    // #26 corrections
    correctionRoutes,
    chatRoutes,
    ppeRoutes,
    processorRoutes,
    docsRoutes,
    // #26 audit
    auditRoutes,
    // #36 2
    peopleRoutes,
  ];
  for (const routes of routeModules) api.route('/', routes(ctx));
  // Every other /api path: a JSON 404 (never the web app's page).
  api.all('*', (c) => c.json(errorBody('not_found', `no endpoint ${c.req.method} ${c.req.path}`), 404));

  const app = new Hono();
  app.use('*', requestContext(log, metrics));
  app.use('*', appHeaders(settings.authMode === 'oidc' && settings.oidcIssuer ? [new URL(settings.oidcIssuer).origin] : []));
  // Other web pages (CSRF, DNS rebinding): Host, Origin and body type checked before anything else runs.
  app.use(
    '*',
    webSecurity({
      allowedHosts: allowedHostsFor(settings.allowedHosts, settings.host),
      allowedOrigins: settings.allowedOrigins,
      port: settings.port,
      requireBodyType: true,
    }),
  );
  // The original's frontend gets its own identifiers in what it reads (docs/migrating.md).
  app.use('/api/*', originalWords(settings.compatIdentifiers === 'auto'));
  app.route('/api', api);
  app.get('/metrics', (c) => metricsResponse(c, metrics.registry));
  mountStatic(app, settings.appDir);
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], '*', readOnlyPages());
  app.onError((err, c) => {
    // A client that hung up while sending is no server error: one line, no stack.
    const aborted = err instanceof ClientAbortError || (!(err instanceof ApiError) && isAbortError(err));
    if (aborted) {
      log.info(`client aborted ${c.req.method} ${c.req.path} before its body was complete`, { request_id: c.get('requestId') });
      return sendError(c, err instanceof ClientAbortError ? err : new ClientAbortError());
    }
    if (err instanceof ServerBusyError) c.header('retry-after', String(err.retryAfterSeconds));
    if (err instanceof ApiError) return sendError(c, err);
    // #37: the shared state (PostgreSQL) is away: the change was not made (the store undid its step where it could).
    if (err instanceof StateUnavailableError || isDatabaseUnreachable(err)) {
      log.warn(`${c.req.method} ${c.req.path}: the shared state cannot be reached: ${(err as Error).message}`, {
        request_id: c.get('requestId'),
      });
      return sendError(
        c,
        new ApiError(
          'storage_unavailable',
          c.req.method === 'GET' || c.req.method === 'HEAD'
            ? 'the shared storage cannot be reached; try again shortly'
            : 'the shared storage cannot be reached; the change was not made, try again shortly',
        ),
      );
    }
    log.error(`${c.req.method} ${c.req.path} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, {
      request_id: c.get('requestId'),
    });
    return sendInternalError(c);
  });
  app.notFound((c) => c.json(errorBody('not_found', `no page ${c.req.path}`), 404));
  // API replicas on one DATA_DIR: a training saved by another one is loaded here within about this interval.
  faces.watchModels(500);
  // ... and so are their changes of recognizer, detection method and thresholds.
  runtime.watch(500);
  // #26 corrections made or removed on another replica.
  corrections.watch(1000);

  return {
    app,
    ctx,
    runtime,
    close: async () => {
      faces.stopWatching();
      corrections.stopWatching();
      runtime.stopWatching();
      audit.stop();
      reclaimer.stop();
      remote.stop();
      chatStatus.stop();
      processorStatus.stop();
      await ppe.close();
      await local?.close();
      // #26 sightings: the timer stopped and the sightings still being stored written, before their workers and database go.
      await sightingRecorder.stop();
      await Promise.all([pool.close(), embedding?.close(), objects.close()]);
      if (!opts.shared && shared instanceof PgSharedFiles) await shared.close();
      await db.close();
    },
  };
}
