/**
 * `npm run ppe-server`: the PPE detector server (app.ts) for an operator's YOLOv8 PPE model exported to ONNX.
 * Settings from the environment: PPE_MODEL_PATH (required, the .onnx file), PORT (9100), HOST (127.0.0.1),
 * PPE_MODEL_NAME (yolo-ppe), PPE_CLASS_NAMES (comma-separated, model order; default: the export's `names`
 * metadata), PPE_CONFIDENCE (0.25), PPE_NMS_IOU (0.45), ALLOWED_HOSTS (localhost and the loopback addresses, HOST
 * added), LOG_LEVEL (info), LOG_FORMAT (text).
 *
 * Exit codes: 2 for a bad setting, a model file that cannot be read, or a model that cannot be served (not
 * ONNX, not a YOLO detector, no class names); 1 when the port cannot be opened. It listens at once and loads
 * the model in the background (readiness and inference answer 503 until then).
 */
// First: before anything can load onnxruntime-node.
import '../telemetry-off.js';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { allowedHostsVariable } from '../http/security.js';
import { exitOnSignals } from '../shutdown.js';
import { createLogger } from '../logger.js';
import { DEFAULT_PPE_CONFIDENCE, DEFAULT_PPE_MODEL_NAME, DEFAULT_PPE_NMS_IOU, listenPpeServer, parseClassNameList } from './app.js';

const fraction = (name: string, fallback: number) =>
  z.coerce
    .number({ message: `${name}: must be a number from 0 to 1` })
    .min(0, `${name}: must be a number from 0 to 1`)
    .max(1, `${name}: must be a number from 0 to 1`)
    .default(fallback);

const SETTINGS = z.object({
  PORT: z.coerce
    .number({ message: 'PORT: must be a number' })
    .int('PORT: must be an integer')
    .min(0, 'PORT: must be 0 to 65535')
    .max(65535, 'PORT: must be 0 to 65535')
    .default(9100),
  HOST: z.string().trim().min(1, 'HOST: must not be empty').default('127.0.0.1'),
  PPE_MODEL_PATH: z
    .string({
      message: 'PPE_MODEL_PATH: required: the path of the YOLOv8 PPE model exported to ONNX (yolo export model=best.pt format=onnx)',
    })
    .trim()
    .min(1, 'PPE_MODEL_PATH: must not be empty'),
  PPE_MODEL_NAME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]+$/, 'PPE_MODEL_NAME: must be a model name of letters, digits, ".", "_" or "-"')
    .default(DEFAULT_PPE_MODEL_NAME),
  PPE_CLASS_NAMES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      try {
        return parseClassNameList(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'PPE_CLASS_NAMES: must be non-empty class names in model order, separated by commas' });
        return z.NEVER;
      }
    }),
  PPE_CONFIDENCE: fraction('PPE_CONFIDENCE', DEFAULT_PPE_CONFIDENCE),
  PPE_NMS_IOU: fraction('PPE_NMS_IOU', DEFAULT_PPE_NMS_IOU),
  ALLOWED_HOSTS: allowedHostsVariable,
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'], { message: 'LOG_LEVEL: must be debug, info, warn, error or silent' })
    .default('info'),
  LOG_FORMAT: z.enum(['text', 'json'], { message: 'LOG_FORMAT: must be text or json' }).default('text'),
});

function refuse(lines: string[]): never {
  process.stderr.write(`${lines.join('\n')}\nThe PPE server was not started.\n`);
  process.exit(2);
}

// Unset and empty variables both mean "use the default".
const env = Object.fromEntries(Object.keys(SETTINGS.shape).map((k) => [k, process.env[k] === '' ? undefined : process.env[k]]));
const parsed = SETTINGS.safeParse(env);
if (!parsed.success) refuse(['Invalid settings:', ...parsed.error.issues.map((i) => `  - ${i.message}`)]);
const settings = parsed.data;
const modelPath = path.resolve(settings.PPE_MODEL_PATH);

try {
  if (!(await stat(modelPath)).isFile()) refuse([`PPE_MODEL_PATH: ${modelPath} is not a file (expected the .onnx model)`]);
  await access(modelPath, constants.R_OK);
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? String(err));
  refuse([`PPE_MODEL_PATH: cannot read ${modelPath} (${why})`]);
}

const log = createLogger(settings.LOG_LEVEL, undefined, settings.LOG_FORMAT);

try {
  const running = await listenPpeServer({
    port: settings.PORT,
    host: settings.HOST,
    modelPath,
    modelName: settings.PPE_MODEL_NAME,
    classNames: settings.PPE_CLASS_NAMES,
    confidence: settings.PPE_CONFIDENCE,
    iou: settings.PPE_NMS_IOU,
    allowedHosts: settings.ALLOWED_HOSTS,
    logger: log,
  });
  log.info(`PPE server listening on ${running.url}, serving ${settings.PPE_MODEL_NAME} from ${modelPath} (loading)`);
  const stopping = exitOnSignals(log, () => running.close());
  if (!(await running.server.loaded) && !stopping()) {
    process.stderr.write(`PPE model ${modelPath} cannot be served: ${running.server.failure()}\nThe PPE server was stopped.\n`);
    await running.close();
    process.exit(2);
  }
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  log.error(`cannot listen on ${settings.HOST}:${settings.PORT}: ${code ?? (err instanceof Error ? err.message : String(err))}`);
  process.exit(1);
}
