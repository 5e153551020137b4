/**
 * The API server's request context and metrics: every request gets an id (`X-Request-Id`, the client's when it
 * is a short safe token, else a new UUID), echoed in the response and in every error body, one log line per
 * request (method, route pattern, status, duration, id: never bodies, headers or query strings), and the
 * Prometheus metrics of GET /metrics.
 */
import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { TrainResponse } from '../../shared/api/training.js';
import type { Logger } from '../logger.js';
import type { SightingQueueStats } from '../sightings/sighting-recorder.js';
import { createRegistry, DURATION_BUCKETS, httpDurationHistogram } from '../metrics.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** This request's id (X-Request-Id). */
    requestId: string;
    /** The route table's pattern of the route that answered, e.g. `/images/{label}` (relative to /api). */
    routePattern: string;
    /** The API server's metrics (set by requestContext). */
    metrics: ApiMetrics;
  }
}

export const REQUEST_ID_HEADER = 'x-request-id';
/** A client's id is kept when it is this: short, and nothing that could forge a log line. */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export type EngineName = 'detect' | 'recognize' | 'embed' | 'objects' | 'ppe';
export type UpstreamName = 'remote' | 'llm' | 'ppe_detector' | 'broker';

/** Error codes of answers caused by an upstream service, by upstream. */
const UPSTREAM_OF_CODE: Partial<Record<string, UpstreamName>> = {
  remote_unavailable: 'remote',
  llm_unavailable: 'llm',
  llm_bad_gateway: 'llm',
  llm_timeout: 'llm',
  ppe_detector_unavailable: 'ppe_detector',
  ppe_detector_failed: 'ppe_detector',
  ppe_detector_timeout: 'ppe_detector',
};

export interface ApiMetricsOptions {
  /** Jobs waiting for a worker, by pool name (read at each scrape). */
  queues?: () => Record<string, number>;
  /** #38 2: worker threads running, by pool name (read at each scrape): the vision pool grows and shrinks with the work. */
  threads?: () => Record<string, number>;
  /** The last training run (read after each POST /api/train that succeeded). */
  lastTraining?: () => TrainResponse | undefined;
  /** #36 4: the sighting queue (read at each scrape). */
  sightings?: () => SightingQueueStats;
}

export class ApiMetrics {
  readonly registry: Registry = createRegistry();
  readonly http = httpDurationHistogram(this.registry);
  readonly engine = new Histogram({
    name: 'lookout_engine_duration_seconds',
    help: 'Time of one engine call (detect, recognize, embed, objects, ppe), failures included.',
    labelNames: ['engine'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamErrors = new Counter({
    name: 'lookout_upstream_errors_total',
    help: 'Failed calls to an upstream service (remote detector, LLM, PPE detector, Kafka broker).',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });
  readonly trainings = new Counter({
    name: 'lookout_trainings_total',
    help: 'Training runs, by result (ok or error).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly trainingDuration = new Histogram({
    name: 'lookout_training_duration_seconds',
    help: 'Time of one successful training run.',
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [this.registry],
  });
  readonly trainingFaces = new Counter({
    name: 'lookout_training_faces_total',
    help: 'Faces used by successful training runs, summed over the runs.',
    registers: [this.registry],
  });

  constructor(private readonly options: ApiMetricsOptions = {}) {
    const queues = options.queues;
    new Gauge({
      name: 'lookout_worker_queue_depth',
      help: 'Jobs waiting for a free worker thread, by pool.',
      labelNames: ['pool'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [pool, depth] of Object.entries(queues?.() ?? {})) this.set({ pool }, depth);
      },
    });
    const threads = options.threads;
    new Gauge({
      name: 'lookout_worker_threads',
      help: 'Worker threads running, by pool (the vision pool runs one at idle and up to WORKERS under load).',
      labelNames: ['pool'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [pool, count] of Object.entries(threads?.() ?? {})) this.set({ pool }, count);
      },
    });
    const sightings = options.sightings;
    if (sightings) {
      new Gauge({
        name: 'lookout_sightings_queue_depth',
        help: 'Sighting jobs waiting to be stored (they run when recognitions are quiet).',
        registers: [this.registry],
        collect() {
          this.set(sightings().queued);
        },
      });
      // Totals since the start, read from the recorder at each scrape.
      new Counter({
        name: 'lookout_sightings_dropped_total',
        help: 'Sighting jobs dropped, the oldest first, because the queue was full while recognitions kept the workers busy (or at shutdown).',
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(sightings().dropped);
        },
      });
      new Counter({
        name: 'lookout_sightings_stored_total',
        help: 'Sightings stored.',
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(sightings().stored);
        },
      });
    }
    for (const upstream of ['remote', 'llm', 'ppe_detector', 'broker'] as const) this.upstreamErrors.inc({ upstream }, 0);
    for (const result of ['ok', 'error'] as const) this.trainings.inc({ result }, 0);
  }

  upstreamError(upstream: UpstreamName): void {
    this.upstreamErrors.inc({ upstream });
  }

  /** Counts an error answer caused by an upstream service (by its code). */
  errorAnswered(code: string): void {
    const upstream = UPSTREAM_OF_CODE[code];
    if (upstream) this.upstreamError(upstream);
  }

  /** Runs an engine call and records its time, failures included. */
  async time<T>(engine: EngineName, call: () => Promise<T> | T): Promise<T> {
    const end = this.engine.startTimer({ engine });
    try {
      return await call();
    } finally {
      end();
    }
  }

  /** After each request: the trainings, from POST /api/train's answer status and the service's last run. */
  observeTraining(status: number): void {
    if (status >= 200 && status < 300) {
      this.trainings.inc({ result: 'ok' });
      const last = this.options.lastTraining?.();
      if (last) {
        this.trainingDuration.observe(last.duration_ms / 1000);
        this.trainingFaces.inc(last.total_faces);
      }
    } else if (status !== 409) {
      // 409: another run was in progress, this one never started.
      this.trainings.inc({ result: 'error' });
    }
  }
}

/** Runs an engine call of a route handler, timed in `lookout_engine_duration_seconds{engine}`. */
export function timeEngine<T>(c: Context, engine: EngineName, call: () => Promise<T> | T): Promise<T> | T {
  const metrics = c.get('metrics');
  return metrics ? metrics.time(engine, call) : call();
}

/** The metrics label of a request: the route table's pattern, or a fixed name (never the raw path). */
export function routeLabel(c: Context): string {
  const pattern = c.get('routePattern');
  if (pattern) return `/api${pattern}`;
  const p = c.req.path;
  if (p === '/metrics') return '/metrics';
  if (p === '/api' || p.startsWith('/api/')) return '/api/*';
  if (p.startsWith('/models/')) return '/models/*';
  if (p.startsWith('/assets/')) return '/assets/*';
  return '/*';
}

/**
 * An error answer made without the request id (the body limit's 413, the 404s): the id added to its body. Every
 * error answer's code is counted as an upstream error when an upstream caused it.
 */
async function stampErrorBody(c: Context, requestId: string, metrics: ApiMetrics): Promise<void> {
  if (!c.res.headers.get('content-type')?.startsWith('application/json')) return;
  let body: { error?: { code?: unknown; request_id?: unknown } };
  try {
    body = (await c.res.clone().json()) as typeof body;
  } catch {
    return;
  }
  const error = body?.error;
  if (typeof error !== 'object' || error === null) return;
  if (typeof error.code === 'string') metrics.errorAnswered(error.code);
  if (error.request_id !== undefined) return;
  error.request_id = requestId;
  const headers = new Headers(c.res.headers);
  headers.delete('content-length');
  const status = c.res.status;
  c.res = undefined;
  c.res = new Response(JSON.stringify(body), { status, headers });
}

/** Probes logged at debug level (they come every few seconds). */
const QUIET_ROUTES = new Set(['/api/health', '/api/ready', '/metrics']);

/**
 * Assigns the request id, times the request, and logs one line for it. Mounted first on the root app, so it sees
 * every answer, errors included (the error handler's answer is in place when `next()` returns).
 */
export function requestContext(log: Logger, metrics: ApiMetrics): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header(REQUEST_ID_HEADER);
    const requestId = given && SAFE_ID.test(given) ? given : randomUUID();
    c.set('requestId', requestId);
    c.set('metrics', metrics);
    const started = process.hrtime.bigint();
    await next();
    if (c.res.status >= 400) await stampErrorBody(c, requestId, metrics);
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = routeLabel(c);
    const status = c.res.status;
    const method = c.req.method;
    metrics.http.observe({ method, route, status: String(status) }, seconds);
    if (route === '/api/train' && method === 'POST') metrics.observeTraining(status);
    const fields = { method, route, status, duration_ms: Math.round(seconds * 1e4) / 10, request_id: requestId };
    if (QUIET_ROUTES.has(route) && status < 400) log.debug('request', fields);
    else log.info('request', fields);
  };
}
