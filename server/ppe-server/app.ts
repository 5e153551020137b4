/**
 * `npm run ppe-server`: serves an operator's YOLOv8 PPE detector (an Ultralytics export, `yolo export
 * model=best.pt format=onnx`) through onnxruntime-node. No PPE weights ship with Lookout (MODELS.md).
 *
 *   POST /v1/predict                 raw JPEG/PNG/WebP body → `{ detections: [{ class_id, class_name, confidence,
 *                                    bbox: { x1, y1, x2, y2 } }], count }`, boxes in the image's pixels
 *   POST /v2/models/{name}/infer     KServe V2: FP32 [1, 3, H, W] in, the raw output tensor out
 *   GET  /v2/models/{name}[/ready]   KServe V2 model metadata / readiness
 *   GET  /health                     `{ status: 'ok', model, ready }`
 *
 * The pre- and post-processing are the object detector's (shared/objects/yolo.ts: Ultralytics letterbox,
 * pad 114; YOLOv8 `[1, 4 + nc, N]` decode; per-class NMS), with the class count taken from the class names:
 * the `names` ONNX metadata property Ultralytics writes (a Python dict literal, `{0: 'Hardhat', ...}`), or
 * names given by the operator (class-names.ts, onnx-metadata.ts). Like the model server, it listens at once and
 * loads in the background; until the model is in, inference and readiness answer 503.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { listen, type Listening } from '../http/listen.js';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { inferRequest, shapeSize, type ModelMetadata, type V2Error } from '../../shared/kserve/protocol.js';
import { checkYoloSession } from '../../shared/objects/yolo-session.js';
import { YoloModelError, decodeYoloBoxes, yoloPreprocess, type YoloLayout } from '../../shared/objects/yolo.js';
import { ApiError } from '../http/errors.js';
import { allowedHostsFor, protectService, refuseAsV2 } from '../http/security.js';
import { decodeImage } from '../imaging/decode.js';
import { createLogger, type Logger } from '../logger.js';
import { parseUltralyticsNames } from './class-names.js';
import { readOnnxMetadata } from './onnx-metadata.js';

export { ClassNamesError, parseClassNameList, parseUltralyticsNames } from './class-names.js';
export { readOnnxMetadata } from './onnx-metadata.js';

export const DEFAULT_PPE_MODEL_NAME = 'yolo-ppe';
export const DEFAULT_PPE_CONFIDENCE = 0.25;
export const DEFAULT_PPE_NMS_IOU = 0.45;
/** Ultralytics' default `imgsz`, used when the export's input height/width are symbolic (`dynamic=True`). */
export const DEFAULT_PPE_INPUT_SIZE = 640;
export const DEFAULT_PPE_MAX_BODY_BYTES = 32 * 1024 * 1024;
/** A V2 request carries the input tensor as JSON numbers: 1.2 M of them for 640x640, ~25 MB. */
export const DEFAULT_PPE_MAX_INFER_BODY_BYTES = 256 * 1024 * 1024;
export const DEFAULT_PPE_MAX_IMAGE_PIXELS = 40_000_000;
const VERSION = '1';

export type PpeModelState = 'LOADING' | 'AVAILABLE' | 'FAILED';

export interface PpeServerOptions {
  /** The YOLOv8 `.onnx` export. */
  modelPath: string;
  /** Name the model is served under in the V2 paths (default `yolo-ppe`). */
  modelName?: string;
  /** Class names in the model's class order; default: the `names` metadata property of the export. */
  classNames?: readonly string[];
  /** Keep detections scoring strictly above this (0..1; default 0.25, Ultralytics' `conf`). */
  confidence?: number;
  /** Per-class NMS IoU threshold (default 0.45). */
  iou?: number;
  /** Input side when the model's height/width are symbolic (default 640). */
  defaultInputSize?: number;
  /** Largest `/v1/predict` body, bytes (default 32 MiB; larger: 413). */
  maxBodyBytes?: number;
  /** Largest V2 infer body, bytes (default 256 MiB). */
  maxInferBodyBytes?: number;
  /** Largest accepted image, pixels (default 40 M; larger: 413). */
  maxImagePixels?: number;
  logger?: Logger;
  /** Replaces onnxruntime-node's `InferenceSession.create` (tests: a slow or failing load). */
  createSession?: (model: Uint8Array) => Promise<InferenceSession>;
  /** Host names it answers for (ALLOWED_HOSTS; default localhost and the loopback addresses); others get 421. */
  allowedHosts?: readonly string[];
  /** Its port, for its own origin (server/http/security.ts). */
  port?: number;
}

/** The loaded model, as the server describes it. */
export interface PpeModelInfo {
  /** The file's name, e.g. `best.onnx`. */
  file: string;
  classNames: readonly string[];
  /** Where the class names came from. */
  classSource: 'options' | 'metadata';
  inputName: string;
  outputName: string;
  inputWidth: number;
  inputHeight: number;
  /** The declared output shape, -1 for a symbolic dimension. */
  outputShape: number[];
  /** Undefined while the declared output shape leaves it open (settled on the first run). */
  layout?: YoloLayout;
}

export interface PpeBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

export interface PpeDetection {
  class_id: number;
  class_name: string;
  /** 0..1. */
  confidence: number;
  /** Integer corners in the submitted image's pixels (x2, y2 exclusive: width = x2 - x1), clipped to it. */
  bbox: PpeBox;
}

export interface PpePrediction {
  detections: PpeDetection[];
  count: number;
}

export interface PpeServer {
  app: Hono;
  state(): PpeModelState;
  /** The loaded model, or null while loading or after a failure. */
  info(): PpeModelInfo | null;
  /** Why loading failed, in words (undefined unless FAILED). */
  failure(): string | undefined;
  /** Settles when loading ends: true when the model is AVAILABLE, false when loading failed. */
  loaded: Promise<boolean>;
  close(): Promise<void>;
}

// ---- the server -------------------------------------------------------------------------------------

const require = createRequire(import.meta.url);
type Ort = typeof import('onnxruntime-node');
let ortModule: Ort | null = null;

/** Loaded on first use, so importing this module does not load the native runtime. */
function ort(): Ort {
  ortModule ??= require('onnxruntime-node') as Ort;
  return ortModule;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A failure answered with `{ error }` and its status. */
class HttpFailure extends Error {
  constructor(
    readonly status: 400 | 404 | 413 | 415 | 500 | 503,
    message: string,
  ) {
    super(message);
  }
}

interface Loaded extends PpeModelInfo {
  session: InferenceSession;
}

async function openModel(options: PpeServerOptions): Promise<Loaded> {
  const file = path.basename(options.modelPath);
  let bytes: Uint8Array;
  try {
    const buf = await readFile(options.modelPath);
    bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } catch (err) {
    throw new YoloModelError(`cannot read the PPE model ${options.modelPath}: ${(err as NodeJS.ErrnoException).code ?? errorText(err)}`);
  }
  const create =
    options.createSession ??
    ((model: Uint8Array) => ort().InferenceSession.create(model, { executionProviders: ['cpu'], graphOptimizationLevel: 'all' }));
  let session: InferenceSession;
  try {
    session = await create(bytes);
  } catch (err) {
    throw new YoloModelError(`${file} is not a valid ONNX model (onnxruntime: ${errorText(err)})`);
  }
  try {
    let classNames: readonly string[];
    let classSource: PpeModelInfo['classSource'];
    if (options.classNames) {
      classNames = options.classNames;
      classSource = 'options';
    } else {
      const names = readOnnxMetadata(bytes).names;
      if (names === undefined) {
        throw new YoloModelError(
          `${file} has no "names" metadata (Ultralytics exports write it): give the class names in model order in PPE_CLASS_NAMES`,
        );
      }
      try {
        classNames = parseUltralyticsNames(names);
      } catch (err) {
        throw new YoloModelError(`${file}: the "names" metadata is not readable (${errorText(err)}); give the names in PPE_CLASS_NAMES`);
      }
      classSource = 'metadata';
    }
    let io: ReturnType<typeof checkYoloSession>;
    try {
      io = checkYoloSession(session, file, options.defaultInputSize ?? DEFAULT_PPE_INPUT_SIZE, classNames.length);
    } catch (err) {
      const from = classSource === 'options' ? 'PPE_CLASS_NAMES' : 'the "names" metadata';
      throw new YoloModelError(`${errorText(err)}; the class count (${classNames.length}) comes from ${from}`);
    }
    const declared = session.outputMetadata.find((o) => o.name === io.outputName);
    const outputShape = declared?.isTensor ? declared.shape.map((d) => (typeof d === 'number' && d > 0 ? d : -1)) : [];
    return {
      session,
      file,
      classNames,
      classSource,
      inputName: io.inputName,
      outputName: io.outputName,
      inputWidth: io.width,
      inputHeight: io.height,
      outputShape,
      ...(io.layout ? { layout: io.layout } : {}),
    };
  } catch (err) {
    await session.release().catch(() => undefined);
    throw err;
  }
}

/** A KServe V2 infer request's body, nested `data` flattened, checked against the V2 schema. */
function parseInferBody(text: string) {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new HttpFailure(400, 'the body is not JSON (a KServe V2 inference request)');
  }
  const inputs = (doc as { inputs?: unknown } | null)?.inputs;
  if (Array.isArray(inputs)) {
    for (const t of inputs) {
      const data = (t as { data?: unknown } | null)?.data;
      if (Array.isArray(data) && data.some(Array.isArray)) (t as { data: unknown[] }).data = data.flat(Infinity);
    }
  }
  const parsed = inferRequest.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpFailure(400, `not a KServe V2 inference request: ${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  return parsed.data;
}

export function createPpeServer(options: PpeServerOptions): PpeServer {
  const modelName = options.modelName ?? DEFAULT_PPE_MODEL_NAME;
  const log = options.logger ?? createLogger('silent');
  const defaultConfidence = options.confidence ?? DEFAULT_PPE_CONFIDENCE;
  const iou = options.iou ?? DEFAULT_PPE_NMS_IOU;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_PPE_MAX_BODY_BYTES;
  const maxInferBodyBytes = options.maxInferBodyBytes ?? DEFAULT_PPE_MAX_INFER_BODY_BYTES;
  const maxPixels = options.maxImagePixels ?? DEFAULT_PPE_MAX_IMAGE_PIXELS;

  let state: PpeModelState = 'LOADING';
  let model: Loaded | null = null;
  let failure: string | undefined;
  let closed = false;
  const started = Date.now();
  const loaded = openModel(options).then(
    async (m) => {
      if (closed) {
        await m.session.release().catch(() => undefined);
        return false;
      }
      model = m;
      state = 'AVAILABLE';
      log.info(
        `model ${modelName} (${m.file}) AVAILABLE after ${Date.now() - started} ms: input ${m.inputWidth}x${m.inputHeight}, ` +
          `${m.classNames.length} classes from ${m.classSource} (${m.classNames.join(', ')})`,
      );
      return true;
    },
    (err: unknown) => {
      state = 'FAILED';
      failure = errorText(err);
      log.error(`model ${modelName} failed to load: ${failure}`);
      return false;
    },
  );

  const ready = (): Loaded => {
    if (model) return model;
    throw new HttpFailure(503, state === 'FAILED' ? `model ${modelName} failed to load: ${failure}` : `model ${modelName} is loading`);
  };
  const servable = (c: Context): Loaded => {
    const name = c.req.param('name');
    if (name !== modelName) throw new HttpFailure(404, `model "${name}" is not served here; this server serves "${modelName}"`);
    const version = c.req.param('version');
    if (version !== undefined && version !== VERSION) throw new HttpFailure(404, `model ${modelName} has no version "${version}"`);
    return ready();
  };

  async function run(m: Loaded, data: Float32Array): Promise<Tensor> {
    const { Tensor } = ort();
    const results = await m.session.run({ [m.inputName]: new Tensor('float32', data, [1, 3, m.inputHeight, m.inputWidth]) }, [
      m.outputName,
    ]);
    const out = results[m.outputName];
    if (out.type !== 'float32') throw new YoloModelError(`output "${m.outputName}" is ${out.type}, expected float32`);
    return out;
  }

  const fail = (c: Context, err: unknown): Response => {
    if (err instanceof HttpFailure) return c.json({ error: err.message } satisfies V2Error, err.status);
    if (err instanceof ApiError) return c.json({ error: err.message } satisfies V2Error, err.status as 400);
    log.error(`ppe server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json({ error: 'internal error' } satisfies V2Error, 500);
  };
  const tooLarge = (limit: number) => (c: Context) =>
    c.json({ error: `the request body is larger than ${limit} bytes` } satisfies V2Error, 413, { connection: 'close' });

  const app = new Hono();
  // Against DNS rebinding and other web pages, with this server's (V2) error body.
  protectService(app, {
    allowedHosts: options.allowedHosts ?? allowedHostsFor(undefined, undefined),
    port: options.port,
    refuse: refuseAsV2,
  });

  app.get('/health', (c) => c.json({ status: 'ok', model: modelName, ready: state === 'AVAILABLE' }));

  app.post('/v1/predict', bodyLimit({ maxSize: maxBodyBytes, onError: tooLarge(maxBodyBytes) }), async (c) => {
    try {
      const type = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (type !== '' && type !== 'application/octet-stream' && !type.startsWith('image/')) {
        throw new HttpFailure(
          415,
          `send the image itself as the body (Content-Type image/jpeg, image/png or application/octet-stream), not ${type}`,
        );
      }
      let confidence = defaultConfidence;
      const header = c.req.header('x-confidence');
      if (header !== undefined) {
        confidence = header.trim() === '' ? Number.NaN : Number(header);
        if (!(confidence >= 0 && confidence <= 1))
          throw new HttpFailure(400, `X-Confidence: must be a number from 0 to 1, not "${header}"`);
      }
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      if (bytes.length === 0) throw new HttpFailure(400, 'the body is empty: send a JPEG or PNG image');
      const m = ready();
      const { rgb } = await decodeImage(bytes, { maxPixels });
      const input = yoloPreprocess(rgb, m.inputWidth, m.inputHeight);
      const out = await run(m, input.data);
      const boxes = decodeYoloBoxes(out.data as Float32Array, out.dims.map(Number), input.letterbox, {
        confidence,
        iou,
        numClasses: m.classNames.length,
      });
      const detections = boxes.map(
        (b): PpeDetection => ({
          class_id: b.class_id,
          class_name: m.classNames[b.class_id],
          confidence: b.confidence,
          bbox: { x1: b.x, y1: b.y, x2: b.x + b.w, y2: b.y + b.h },
        }),
      );
      return c.json({ detections, count: detections.length } satisfies PpePrediction);
    } catch (err) {
      return fail(c, err);
    }
  });

  // ---- KServe V2 ----
  app.get('/v2/health/live', (c) => c.json({ live: true }));
  app.get('/v2/health/ready', (c) =>
    state === 'AVAILABLE' ? c.json({ ready: true }) : c.json({ error: `model ${modelName} is not loaded` } satisfies V2Error, 503),
  );
  app.get('/v2', (c) => c.json({ name: 'lookout-ppe-server', version: VERSION, extensions: [] }));

  const metadata = (c: Context) => {
    try {
      const m = servable(c);
      const descriptor: ModelMetadata = {
        name: modelName,
        versions: [VERSION],
        platform: 'onnxruntime_onnx',
        inputs: [{ name: m.inputName, datatype: 'FP32', shape: [1, 3, m.inputHeight, m.inputWidth] }],
        outputs: [{ name: m.outputName, datatype: 'FP32', shape: m.outputShape }],
      };
      return c.json(descriptor);
    } catch (err) {
      return fail(c, err);
    }
  };
  const modelReady = (c: Context) => {
    try {
      servable(c);
      return c.json({ name: modelName, ready: true });
    } catch (err) {
      return fail(c, err);
    }
  };
  const infer = async (c: Context) => {
    try {
      const body = parseInferBody(await c.req.text());
      const m = servable(c);
      const shape = [1, 3, m.inputHeight, m.inputWidth];
      if (body.inputs.length !== 1) throw new HttpFailure(400, `expected 1 input ("${m.inputName}"), got ${body.inputs.length}`);
      const input = body.inputs[0];
      if (input.name !== m.inputName) throw new HttpFailure(400, `unknown input "${input.name}"; the model's input is "${m.inputName}"`);
      if (input.datatype !== 'FP32') throw new HttpFailure(400, `input "${input.name}" must be FP32, not ${input.datatype}`);
      if (input.shape.length !== shape.length || input.shape.some((d, i) => d !== shape[i])) {
        throw new HttpFailure(400, `input "${input.name}" must have shape [${shape.join(', ')}], not [${input.shape.join(', ')}]`);
      }
      if (input.data.length !== shapeSize(shape)) {
        throw new HttpFailure(
          400,
          `input "${input.name}" of shape [${shape.join(', ')}] needs ${shapeSize(shape)} values, got ${input.data.length}`,
        );
      }
      for (const o of body.outputs ?? []) {
        if (o.name !== m.outputName) throw new HttpFailure(400, `unknown output "${o.name}"; the model's output is "${m.outputName}"`);
      }
      const out = await run(m, Float32Array.from(input.data));
      return c.json({
        model_name: modelName,
        model_version: VERSION,
        ...(body.id !== undefined ? { id: body.id } : {}),
        outputs: [{ name: m.outputName, datatype: 'FP32', shape: out.dims.map(Number), data: Array.from(out.data as Float32Array) }],
      });
    } catch (err) {
      return fail(c, err);
    }
  };
  const inferLimit = bodyLimit({ maxSize: maxInferBodyBytes, onError: tooLarge(maxInferBodyBytes) });

  app.get('/v2/models/:name', metadata);
  app.get('/v2/models/:name/versions/:version', metadata);
  app.get('/v2/models/:name/ready', modelReady);
  app.get('/v2/models/:name/versions/:version/ready', modelReady);
  app.post('/v2/models/:name/infer', inferLimit, infer);
  app.post('/v2/models/:name/versions/:version/infer', inferLimit, infer);

  app.notFound((c) => c.json({ error: `not found: ${c.req.method} ${c.req.path}` } satisfies V2Error, 404));
  app.onError((err, c) => fail(c, err));

  return {
    app,
    state: () => state,
    info: () => {
      if (!model) return null;
      const { session: _session, ...info } = model;
      return info;
    },
    failure: () => failure,
    loaded,
    async close() {
      closed = true;
      await loaded;
      const m = model;
      model = null;
      await m?.session.release().catch(() => undefined);
    },
  };
}

export interface RunningPpeServer {
  server: PpeServer;
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a PPE server listening on host:port (port 0 picks a free one); the model loads in the background. */
export async function listenPpeServer(options: PpeServerOptions & { port?: number; host?: string }): Promise<RunningPpeServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createPpeServer({ ...options, allowedHosts: allowedHostsFor(options.allowedHosts, host) });
  let http: Listening;
  try {
    http = await listen(server.app.fetch, host, options.port ?? 0);
  } catch (err) {
    await server.close();
    throw err;
  }
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
