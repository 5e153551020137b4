/**
 * Runtime settings, read once from the environment at start-up.
 *
 * Every setting of the service spec's table is an environment variable named by its path in upper snake case
 * (`remoteDetector.confidenceThreshold` -> `REMOTE_DETECTOR_CONFIDENCE_THRESHOLD`). A bad value stops the
 * server with a message naming the variable and what it accepts: a typo must not silently fall back.
 */
import path from 'node:path';
import { z } from 'zod';
import { CASCADE_DEFAULTS } from '../../shared/recognition/pipeline.js';

const boolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']))
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const number = (min: number, max: number) => z.coerce.number().min(min).max(max);

/** Sizes as Kubernetes writes them (`1Gi`, `500Mi`, `10M`) or plain bytes. */
const quantity = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/, 'a size such as 1Gi, 500Mi or 1048576');

/** Recognition model identifiers, with the original service's alias accepted on input. */
export const recognitionModelInput = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => (v === 'dlib' ? 'embedding' : v))
  .pipe(z.enum(['lbph', 'embedding']));

/** Detection method identifiers, with the original service's aliases accepted on input. */
export const detectionMethodInput = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => (v === 'opencv' ? 'local' : v === 'openvino' ? 'remote' : v))
  .pipe(z.enum(['local', 'remote']));

interface SettingSpec {
  env: string;
  schema: z.ZodType;
  default: string | undefined;
  /** What the README says about it. */
  doc: string;
}

/**
 * The table of settings: the single source for parsing, validation messages and the README's list.
 * Defaults are strings, parsed like any value from the environment.
 */
export const SETTINGS = {
  port: { env: 'PORT', schema: integer(0, 65535), default: '8080', doc: 'TCP port of the HTTP server.' },
  host: {
    env: 'HOST',
    schema: z.string().trim().min(1),
    default: '127.0.0.1',
    doc: 'Address to listen on (the container sets 0.0.0.0).',
  },
  dataDir: {
    env: 'DATA_DIR',
    schema: z.string().trim().min(1),
    default: './data',
    doc: 'Where training images (`images/<label>/`) and models (`models/`) are stored.',
  },
  recognitionModel: {
    env: 'RECOGNITION_MODEL',
    schema: recognitionModelInput,
    default: 'lbph',
    doc: 'Recognition model at start: `lbph` or `embedding` (`dlib` accepted).',
  },
  remoteDetectorEnabled: {
    env: 'REMOTE_DETECTOR_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Enables the `remote` face detection engine.',
  },
  remoteDetectorUrl: {
    env: 'REMOTE_DETECTOR_URL',
    schema: z.union([z.literal(''), z.url({ protocol: /^https?$/ })]),
    default: '',
    doc: 'Base URL of a KServe V2 model server (empty: none configured).',
  },
  remoteDetectorModelName: {
    env: 'REMOTE_DETECTOR_MODEL_NAME',
    schema: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._-]+$/, 'a model name of letters, digits, ".", "_" or "-"'),
    default: 'face-detection-retail-0005',
    doc: 'Detection model name on the remote server.',
  },
  remoteDetectorConfidenceThreshold: {
    env: 'REMOTE_DETECTOR_CONFIDENCE_THRESHOLD',
    schema: number(0, 1),
    default: '0.5',
    doc: 'Minimum detection confidence of the remote engine, 0 to 1.',
  },
  remoteDetectorDefaultMethod: {
    env: 'REMOTE_DETECTOR_DEFAULT_METHOD',
    schema: detectionMethodInput,
    default: 'local',
    doc: 'Detection method at start: `local` or `remote` (`opencv`/`openvino` accepted).',
  },
  remoteDetectorTimeoutMs: {
    env: 'REMOTE_DETECTOR_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '5000',
    doc: 'Timeout of one call to the remote model server, in milliseconds.',
  },
  remoteDetectorCheckIntervalMs: {
    env: 'REMOTE_DETECTOR_CHECK_INTERVAL_MS',
    schema: integer(200, 3_600_000),
    default: '10000',
    doc: "How often the remote model server's status is checked in the background, in milliseconds.",
  },
  chatEnabled: { env: 'CHAT_ENABLED', schema: boolean, default: 'true', doc: 'Enables the chat feature.' },
  chatEndpoint: {
    env: 'CHAT_ENDPOINT',
    schema: z.union([z.literal(''), z.url({ protocol: /^https?$/ })]),
    default: '',
    doc: 'Base URL of an OpenAI-compatible LLM server (`/v1/chat/completions` is appended); empty: chat not configured.',
  },
  chatModelPath: {
    env: 'CHAT_MODEL_PATH',
    schema: z.string().trim(),
    default: '',
    doc: 'A GGUF model file Lookout hosts itself for offline chat (node-llama-cpp, `npm run llama:install`); wins over CHAT_ENDPOINT.',
  },
  chatThreads: {
    env: 'CHAT_THREADS',
    schema: integer(1, 256),
    default: '2',
    doc: 'CPU threads of the offline chat model.',
  },
  chatModel: {
    env: 'CHAT_MODEL',
    schema: z.string().trim(),
    default: '',
    doc: 'Model name sent to the LLM; empty: the first model the server lists.',
  },
  chatApiKey: {
    env: 'CHAT_API_KEY',
    schema: z.string().trim(),
    default: '',
    doc: 'API key sent as a bearer token (never logged or returned).',
  },
  chatTokenFile: {
    env: 'CHAT_TOKEN_FILE',
    schema: z.string().trim(),
    default: '',
    doc: 'File holding a bearer token (e.g. the in-cluster service-account token), re-read when it changes.',
  },
  chatSystemPrompt: {
    env: 'CHAT_SYSTEM_PROMPT',
    schema: z.string(),
    default: '',
    doc: 'System text of every chat prompt; empty: the built-in one.',
  },
  chatMaxTokens: {
    env: 'CHAT_MAX_TOKENS',
    schema: integer(1, 32768),
    default: '512',
    doc: 'Largest reply, in tokens.',
  },
  chatTemperature: {
    env: 'CHAT_TEMPERATURE',
    schema: number(0, 2),
    default: '0.7',
    doc: 'Sampling temperature, 0 to 2.',
  },
  chatTimeoutMs: {
    env: 'CHAT_TIMEOUT_MS',
    schema: integer(100, 3_600_000),
    default: '60000',
    doc: 'Timeout of one LLM call, in milliseconds (for a streamed reply: the longest silence).',
  },
  chatMaxMessageChars: {
    env: 'CHAT_MAX_MESSAGE_CHARS',
    schema: integer(1, 100_000),
    default: '4000',
    doc: 'Longest chat message accepted, in characters (longer: 400).',
  },
  chatCheckIntervalMs: {
    env: 'CHAT_CHECK_INTERVAL_MS',
    schema: integer(200, 3_600_000),
    default: '30000',
    doc: 'How often the LLM endpoint is checked in the background, in milliseconds.',
  },
  persistenceEnabled: {
    env: 'PERSISTENCE_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Keep training data in `DATA_DIR`; `false` uses a temporary directory removed at exit.',
  },
  persistenceSize: {
    env: 'PERSISTENCE_SIZE',
    schema: quantity,
    default: '1Gi',
    doc: 'Size of the storage volume (deployment value; reported, not enforced by the server).',
  },
  resultsMax: {
    env: 'RESULTS_MAX',
    schema: integer(1, 100_000),
    default: '1000',
    doc: 'Results history (`/api/results`): records kept in `DATA_DIR/results/`, oldest dropped first; a re-sent record id is recognised among the last 2 x RESULTS_MAX received.',
  },
  maxBodyBytes: {
    env: 'MAX_BODY_BYTES',
    schema: integer(1024, 1024 * 1024 * 1024),
    default: String(10 * 1024 * 1024),
    doc: 'Largest accepted request body in bytes (larger: 413).',
  },
  maxImagePixels: {
    env: 'MAX_IMAGE_PIXELS',
    schema: integer(1, 1_000_000_000),
    default: String(40_000_000),
    doc: 'Largest accepted image in pixels (width x height); larger images are refused with 413.',
  },
  lbphDistanceMin: {
    env: 'LBPH_DISTANCE_MIN',
    schema: number(0, 1e6),
    default: '4',
    doc: 'LBPH: smallest chi-square distance accepted as a known face (the spec window 4 to 85).',
  },
  lbphDistanceMax: {
    env: 'LBPH_DISTANCE_MAX',
    schema: number(0, 1e6),
    default: '85',
    doc: 'LBPH: largest chi-square distance accepted as a known face.',
  },
  embeddingEnabled: {
    env: 'EMBEDDING_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Loads the `embedding` recognizer (face-api nets on tfjs WASM, one worker thread); `false` saves its memory.',
  },
  embeddingDistanceMax: {
    env: 'EMBEDDING_DISTANCE_MAX',
    schema: number(0, 2),
    default: '0.6',
    doc: 'Embedding: largest euclidean distance between face descriptors accepted as the same person.',
  },
  objectDetectionEnabled: {
    env: 'OBJECT_DETECTION_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Loads the object detector at start (in the background); `false` leaves /api/objects/detect answering 503.',
  },
  objectModel: {
    env: 'OBJECT_MODEL',
    schema: z
      .string()
      .trim()
      .regex(/^(nanodet|[A-Za-z0-9._-]+\.onnx)$/, '`nanodet` or the file name of a YOLO ONNX model in public/models/'),
    default: 'nanodet',
    doc: 'Object detector: `nanodet` (built in) or the file name of a YOLOv5/v8 ONNX model put in `public/models/`.',
  },
  objectConfidence: {
    env: 'OBJECT_CONFIDENCE',
    schema: number(0, 1),
    default: '0.4',
    doc: 'Default minimum object confidence, 0 to 1 (a request may send its own `confidence`).',
  },
  objectNmsIou: {
    env: 'OBJECT_NMS_IOU',
    schema: number(0, 1),
    default: '0.4',
    doc: 'IoU above which two boxes of one class are the same object (non-maximum suppression).',
  },
  objectWorkers: {
    env: 'OBJECT_WORKERS',
    schema: integer(1, 16),
    default: '1',
    doc: 'Worker threads running the object detector.',
  },
  cascadeFile: {
    env: 'CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_frontalface_alt2.xml',
    doc: 'OpenCV Haar cascade XML of the `local` detector (relative to the app directory or absolute).',
  },
  cascadeScaleFactor: {
    env: 'CASCADE_SCALE_FACTOR',
    schema: number(1.01, 10),
    default: String(CASCADE_DEFAULTS.scaleFactor),
    doc: 'Haar cascade pyramid step (`scaleFactor`).',
  },
  cascadeMinNeighbors: {
    env: 'CASCADE_MIN_NEIGHBORS',
    schema: integer(0, 100),
    default: String(CASCADE_DEFAULTS.minNeighbors),
    doc: 'Haar cascade grouping threshold (`minNeighbors`).',
  },
  cascadeMinSize: {
    env: 'CASCADE_MIN_SIZE',
    schema: integer(1, 10000),
    default: String(CASCADE_DEFAULTS.minSize),
    doc: 'Smallest face in pixels (square `minSize`).',
  },
  workers: {
    env: 'WORKERS',
    schema: integer(0, 64),
    default: '0',
    doc: 'Vision worker threads; 0 means one per CPU core.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
    default: 'info',
    doc: 'Log level: debug, info, warn, error or silent.',
  },
} as const satisfies Record<string, SettingSpec>;

type SettingKey = keyof typeof SETTINGS;
export type Settings = { [K in SettingKey]: z.output<(typeof SETTINGS)[K]['schema']> } & {
  /** Absolute application directory (where `public/` lives). */
  appDir: string;
};

/** Thrown when one or more environment variables are invalid; the message lists each. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function describe(spec: SettingSpec, issue: z.core.$ZodIssue): string {
  return `${spec.env}: ${issue.message}. ${spec.doc}`;
}

/** Parses and validates every setting; throws SettingsError naming each bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv, appDir: string): Settings {
  const problems: string[] = [];
  const out: Record<string, unknown> = { appDir };
  for (const [key, spec] of Object.entries(SETTINGS) as [SettingKey, SettingSpec][]) {
    const raw = env[spec.env] ?? spec.default;
    const result = spec.schema.safeParse(raw);
    if (result.success) out[key] = result.data;
    else problems.push(describe(spec, result.error.issues[0]));
  }
  if (problems.length === 0) {
    const s = out as Settings;
    if (s.lbphDistanceMin > s.lbphDistanceMax) {
      problems.push('LBPH_DISTANCE_MIN: must not be larger than LBPH_DISTANCE_MAX.');
    }
    s.dataDir = path.resolve(s.dataDir);
    s.cascadeFile = path.resolve(appDir, s.cascadeFile);
  }
  if (problems.length) throw new SettingsError(problems);
  return out as Settings;
}
