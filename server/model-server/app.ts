/**
 * A KServe V2 model server that answers as OpenVINO Model Server does, for one model with the contract of
 * face-detection-retail-0005, backed by FaceBoxes (face-detection-retail-0005 itself cannot be obtained here).
 *
 * Tensor names are the real model's, `input.1` and `527` (spec: Remote model descriptor): a client written
 * against an OVMS deployment of the real model, hard-coded names included, works unchanged against this one.
 *
 * OVMS behaviour copied: error bodies `{"error": "<message> - <details>"}` with OVMS's messages and statuses
 * (404 unknown model or version, 503 while loading, 400 for a request that does not fit the model, 412 for a
 * body that is not JSON), validation in OVMS's order, detection rows padded after an image_id -1 end row.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listen } from '../http/listen.js';
import { allowedHostsFor, protectService, refuseAsV2 } from '../http/security.js';
import { Hono, type Context } from 'hono';
import { routePath } from 'hono/route';
import { Counter, type Registry } from 'prom-client';
import { shapeSize, type ModelConfigStatus, type ModelMetadata, type V2Error } from '../../shared/kserve/protocol.js';
import { createLogger, type Logger } from '../logger.js';
import { createRegistry, httpDurationHistogram, metricsResponse } from '../metrics.js';
import { loadFaceBoxes, type SsdBackend } from './faceboxes.js';

export const DEFAULT_MODEL_NAME = 'face-detection-retail-0005';
/** Names of face-detection-retail-0005's input and output tensors in its OpenVINO IR. */
export const INPUT_NAME = 'input.1';
export const OUTPUT_NAME = '527';
export const INPUT_SHAPE = [1, 3, 300, 300] as const;
export const OUTPUT_SHAPE = [1, 1, 200, 7] as const;
/** The model version served, unless ModelServerOptions.version says otherwise; also the server's own version. */
const VERSION = '1';

export type ModelState = 'LOADING' | 'AVAILABLE' | 'FAILED';

export interface ModelServerOptions {
  /** Name the model is served under (default face-detection-retail-0005). */
  modelName?: string;
  /** FaceBoxes model JSON (default `<app>/public/models/faceboxes.json`). */
  modelPath?: string;
  /** Side FaceBoxes runs at (see FaceBoxesOptions.detectSize). */
  detectSize?: number;
  /** Lowest score reported (see FaceBoxesOptions.minScore). */
  minScore?: number;
  /** The model version it serves (default "1"): a new version is another model to its clients. */
  version?: string;
  logger?: Logger;
  /** Replaces the FaceBoxes loader (tests: a slow or failing load). */
  loadBackend?: () => Promise<SsdBackend>;
  /** Host names it answers for (ALLOWED_HOSTS; default localhost and the loopback addresses); others get 421. */
  allowedHosts?: readonly string[];
  /** Its port, for its own origin (server/http/security.ts). */
  port?: number;
}

export interface ModelServer {
  app: Hono;
  /** Its Prometheus metrics (GET /metrics). */
  registry: Registry;
  state(): ModelState;
  /** Settles when loading ends: true when the model is AVAILABLE, false when loading failed. */
  loaded: Promise<boolean>;
  close(): Promise<void>;
}

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), import.meta.url.endsWith('.ts') ? '../..' : '../../..');

/** OVMS's shape notation in messages: `(1,3,300,300)`. */
function shapeText(shape: readonly unknown[]): string {
  return `(${shape.join(',')})`;
}

class V2Failure extends Error {
  constructor(
    readonly status: 400 | 404 | 412 | 500 | 503,
    message: string,
  ) {
    super(message);
  }
}

const notFoundName = () => new V2Failure(404, 'Model with requested name is not found');
const notFoundVersion = () => new V2Failure(404, 'Model with requested version is not found');
const notLoaded = () => new V2Failure(503, 'Model with requested version is not loaded yet');
const badInput = () => new V2Failure(400, 'Could not parse input content. Not valid ndarray detected');

interface ParsedInput {
  name: string;
  shape: number[];
  datatype: string;
  data: number[];
}

/** The KServe REST body as OVMS's parser accepts it (flat or nested `data`). */
function parseInferBody(text: string): { id?: string; inputs: ParsedInput[]; outputs?: string[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new V2Failure(412, 'The file is not valid json');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new V2Failure(400, 'Request body should be JSON object');
  const body = doc as Record<string, unknown>;
  if (body.id !== undefined && typeof body.id !== 'string') throw new V2Failure(400, 'Could not parse request parameters');
  if (body.inputs === undefined) throw new V2Failure(400, 'Invalid JSON structure, missing inputs');
  if (!Array.isArray(body.inputs)) throw badInput();
  if (body.inputs.length === 0) throw new V2Failure(400, 'Invalid JSON structure, missing inputs');
  const inputs = body.inputs.map((raw: unknown): ParsedInput => {
    if (typeof raw !== 'object' || raw === null) throw badInput();
    const t = raw as Record<string, unknown>;
    if (typeof t.name !== 'string' || typeof t.datatype !== 'string' || !Array.isArray(t.shape)) throw badInput();
    if (!t.shape.every((d) => Number.isInteger(d))) throw badInput();
    if (!Array.isArray(t.data)) throw badInput();
    const data = (t.data.length > 0 && Array.isArray(t.data[0]) ? t.data.flat(Infinity) : t.data) as unknown[];
    for (let i = 0; i < data.length; i++) if (typeof data[i] !== 'number') throw badInput();
    return { name: t.name, shape: t.shape as number[], datatype: t.datatype, data: data as number[] };
  });
  let outputs: string[] | undefined;
  if (body.outputs !== undefined) {
    if (!Array.isArray(body.outputs)) throw new V2Failure(400, 'Could not parse output content.');
    outputs = body.outputs.map((o: unknown) => {
      if (typeof o !== 'object' || o === null || typeof (o as { name?: unknown }).name !== 'string') {
        throw new V2Failure(400, 'Could not parse output content.');
      }
      return (o as { name: string }).name;
    });
  }
  return { id: body.id as string | undefined, inputs, outputs };
}

/** OVMS's request validation, in its order, against the one FP32 NCHW input. */
function validateInputs(inputs: ParsedInput[]): Float32Array {
  if (inputs.length !== 1) throw new V2Failure(400, `Invalid number of inputs - Expected: 1; Actual: ${inputs.length}`);
  const input = inputs.find((i) => i.name === INPUT_NAME);
  if (!input) throw new V2Failure(400, `Missing input with specific name - Required input: ${INPUT_NAME}`);
  const where = `; input name: ${INPUT_NAME}`;
  if (input.shape.some((d) => d <= 0)) {
    throw new V2Failure(400, `Invalid input shape - Negative or zero dimension size is not acceptable: ${shapeText(input.shape)}${where}`);
  }
  if (input.datatype !== 'FP32') throw new V2Failure(400, `Invalid input precision - Expected: FP32; Actual: ${input.datatype}${where}`);
  if (input.shape.length !== INPUT_SHAPE.length) {
    throw new V2Failure(
      400,
      `Invalid number of shape dimensions - Expected: ${shapeText(INPUT_SHAPE)}; Actual: ${shapeText(input.shape)}${where}`,
    );
  }
  if (input.shape[0] !== INPUT_SHAPE[0]) {
    throw new V2Failure(400, `Invalid input batch size - Expected: ${INPUT_SHAPE[0]}; Actual: ${input.shape[0]}${where}`);
  }
  if (input.shape.some((d, i) => d !== INPUT_SHAPE[i])) {
    throw new V2Failure(400, `Invalid input shape - Expected: ${shapeText(INPUT_SHAPE)}; Actual: ${shapeText(input.shape)}${where}`);
  }
  const expected = shapeSize(INPUT_SHAPE);
  if (input.data.length !== expected) {
    throw new V2Failure(
      400,
      `Invalid number of values in tensor proto container - Expected: ${expected} values; Actual: ${input.data.length} values${where}`,
    );
  }
  return Float32Array.from(input.data);
}

export function createModelServer(options: ModelServerOptions = {}): ModelServer {
  const modelName = options.modelName ?? DEFAULT_MODEL_NAME;
  const modelVersion = options.version ?? VERSION;
  const log = options.logger ?? createLogger('silent');
  const load =
    options.loadBackend ??
    (() =>
      loadFaceBoxes({
        modelPath: options.modelPath ?? path.join(appDir, 'public/models/faceboxes.json'),
        detectSize: options.detectSize,
        minScore: options.minScore,
      }));

  let state: ModelState = 'LOADING';
  let backend: SsdBackend | null = null;
  let closed = false;
  const started = Date.now();
  const loaded = load().then(
    (b) => {
      if (closed) {
        b.dispose();
        return false;
      }
      backend = b;
      state = 'AVAILABLE';
      log.info(`model ${modelName} version ${modelVersion} AVAILABLE after ${Date.now() - started} ms`);
      return true;
    },
    (err: unknown) => {
      state = 'FAILED';
      log.error(`model ${modelName} failed to load: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    },
  );

  const descriptor: ModelMetadata = {
    name: modelName,
    versions: [modelVersion],
    platform: 'OpenVINO',
    inputs: [{ name: INPUT_NAME, datatype: 'FP32', shape: [...INPUT_SHAPE] }],
    outputs: [{ name: OUTPUT_NAME, datatype: 'FP32', shape: [...OUTPUT_SHAPE] }],
  };

  /** Resolves the model (and optional version) of a path or throws OVMS's error for it. */
  function servable(name: string, version: string | undefined, needLoaded: boolean): void {
    if (name !== modelName) throw notFoundName();
    if (version !== undefined && version !== modelVersion) {
      // OVMS parses the version as an integer before looking it up.
      if (!/^\d+$/.test(version)) throw new V2Failure(400, 'Could not parse model version in request');
      throw notFoundVersion();
    }
    if (needLoaded && state !== 'AVAILABLE') throw notLoaded();
  }

  const fail = (c: Context, err: unknown): Response => {
    if (err instanceof V2Failure) return c.json({ error: err.message } satisfies V2Error, err.status);
    log.error(`model server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json({ error: 'Internal inference error' } satisfies V2Error, 500);
  };

  // Metrics: request time by route pattern (`/v2/models/{name}/infer`) and status, inferences by result.
  const registry = createRegistry();
  const http = httpDurationHistogram(registry);
  const inferences = new Counter({
    name: 'lookout_model_server_inferences_total',
    help: 'Inference requests, by result (ok: the model ran; error: refused or failed).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  for (const result of ['ok', 'error'] as const) inferences.inc({ result }, 0);

  const app = new Hono();
  app.use('*', async (c, next) => {
    const end = http.startTimer({ method: c.req.method });
    await next();
    const pattern = routePath(c, -1);
    const route = pattern === '*' || pattern === '/*' || pattern === '' ? 'unmatched' : pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    end({ route, status: String(c.res.status) });
  });
  // Against DNS rebinding and other web pages, with OVMS's error body.
  protectService(app, {
    allowedHosts: options.allowedHosts ?? allowedHostsFor(undefined, undefined),
    port: options.port,
    refuse: refuseAsV2,
  });
  app.get('/metrics', (c) => metricsResponse(c, registry));

  // OVMS answers the health probes with an empty JSON object.
  app.get('/v2/health/live', (c) => c.json({}));
  app.get('/v2/health/ready', (c) =>
    state === 'AVAILABLE' ? c.json({}) : c.json({ error: 'Server is not ready' } satisfies V2Error, 503),
  );
  app.get('/v2', (c) => c.json({ name: 'Lookout model server (OpenVINO Model Server compatible)', version: VERSION, extensions: [] }));

  const metadata = (c: Context, version?: string) => {
    try {
      servable(c.req.param('name') ?? '', version, true);
      return c.json(descriptor);
    } catch (err) {
      return fail(c, err);
    }
  };
  const ready = (c: Context, version?: string) => {
    try {
      servable(c.req.param('name') ?? '', version, true);
      return c.json({});
    } catch (err) {
      return fail(c, err);
    }
  };
  const infer = async (c: Context, version?: string) => {
    try {
      const body = parseInferBody(await c.req.text());
      servable(c.req.param('name') ?? '', version, true);
      const input = validateInputs(body.inputs);
      for (const o of body.outputs ?? []) {
        if (o !== OUTPUT_NAME) throw new V2Failure(400, `Missing output with specific name - Required output: ${o}`);
      }
      const rows = await backend!.infer(input, INPUT_SHAPE[3], INPUT_SHAPE[2], OUTPUT_SHAPE[2]);
      inferences.inc({ result: 'ok' });
      return c.json({
        model_name: modelName,
        model_version: modelVersion,
        ...(body.id !== undefined ? { id: body.id } : {}),
        outputs: [{ name: OUTPUT_NAME, shape: [...OUTPUT_SHAPE], datatype: 'FP32', data: Array.from(rows) }],
      });
    } catch (err) {
      inferences.inc({ result: 'error' });
      return fail(c, err);
    }
  };

  app.get('/v2/models/:name', (c) => metadata(c));
  app.get('/v2/models/:name/versions/:version', (c) => metadata(c, c.req.param('version')));
  app.get('/v2/models/:name/ready', (c) => ready(c));
  app.get('/v2/models/:name/versions/:version/ready', (c) => ready(c, c.req.param('version')));
  app.post('/v2/models/:name/infer', (c) => infer(c));
  app.post('/v2/models/:name/versions/:version/infer', (c) => infer(c, c.req.param('version')));

  app.get('/v1/config', (c) => {
    const status: ModelConfigStatus = {
      [modelName]: {
        model_version_status: [
          {
            version: modelVersion,
            state: state === 'AVAILABLE' ? 'AVAILABLE' : 'LOADING',
            status: state === 'FAILED' ? { error_code: 'UNKNOWN', error_message: 'UNKNOWN' } : { error_code: 'OK', error_message: 'OK' },
          },
        ],
      },
    };
    return c.json(status);
  });

  app.notFound((c) => c.json({ error: 'Requested REST resource not found' } satisfies V2Error, 404));
  app.onError((err, c) => fail(c, err));

  return {
    app,
    registry,
    state: () => state,
    loaded,
    async close() {
      closed = true;
      await loaded;
      backend?.dispose();
      backend = null;
    },
  };
}

export interface RunningModelServer {
  server: ModelServer;
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a model server listening on host:port (port 0 picks a free one). */
export async function listenModelServer(options: ModelServerOptions & { port?: number; host?: string } = {}): Promise<RunningModelServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createModelServer({ ...options, allowedHosts: allowedHostsFor(options.allowedHosts, host) });
  const http = await listen(server.app.fetch, host, options.port ?? 0);
  return {
    server,
    url: http.url,
    port: http.port,
    async close() {
      await http.close();
      await server.close();
    },
  };
}
