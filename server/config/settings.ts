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
import { defaultRule } from '../../shared/recognition/rules.js';
import { DEFAULT_ALLOWED_HOSTS, parseHostList, parseOriginList } from '../http/security.js';

/** A yes/no setting: true/false, 1/0, yes/no, on/off (any case). Shared with the IdP's settings. */
export const boolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']))
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');

/** A comma-separated list, parsed by a function that throws a message naming the bad entry. */
const listOf = (parse: (text: string) => string[]) =>
  z.string().transform((text, ctx) => {
    try {
      return parse(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  });

const httpUrlOrEmpty = z.union([z.literal(''), z.url({ protocol: /^https?$/ })]);
/** A whole number setting within a range. */
export const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
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
  allowedHosts: {
    env: 'ALLOWED_HOSTS',
    schema: listOf(parseHostList),
    default: DEFAULT_ALLOWED_HOSTS.join(','),
    doc: 'Host names the server answers for, comma separated (HOST is added; IP addresses always pass); another `Host` is refused with 421, against DNS rebinding.',
  },
  allowedOrigins: {
    env: 'ALLOWED_ORIGINS',
    schema: listOf(parseOriginList),
    default: '',
    doc: "Origins (`https://host[:port]`) of other web pages that may call the API, comma separated; a browser request from any other origin but the server's own is refused with 403.",
  },
  dataDir: {
    env: 'DATA_DIR',
    schema: z.string().trim().min(1),
    default: './data',
    doc: 'Where training images (`images/<label>/`), models (`models/`), the results history (`results/`) and the choices made through the API (`settings/runtime.json`: recognizer, detection method, thresholds) are stored.',
  },
  recognitionModel: {
    env: 'RECOGNITION_MODEL',
    schema: recognitionModelInput,
    default: 'lbph',
    doc: 'Recognition model at the first start: `lbph` or `embedding` (`dlib` accepted); once one is chosen with `PUT /api/models/config` (the Models page), the saved choice wins.',
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
    doc: 'Detection method at the first start: `local` or `remote` (`opencv`/`openvino` accepted); once one is chosen with `PUT /api/models/detection`, the saved choice wins.',
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
    doc: 'Results history (`/api/results`): records kept in the database, oldest dropped first; a re-sent record id is recognised among the last 2 x RESULTS_MAX received.',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    schema: z.union([
      z.literal(''),
      z
        .string()
        .trim()
        .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL'),
    ]),
    default: '',
    doc: 'PostgreSQL for the rows (sightings, review, corrections, results, audit log, people): `postgres://user:password@host:5432/lookout`. Empty: the embedded database (PGlite) in `DATA_DIR/db`, one process only; replicas on one DATA_DIR share a PostgreSQL server. Never logged.',
  },
  sightingsEnabled: {
    env: 'SIGHTINGS_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Keep a sighting (a small JPEG face crop, the time, the source and the decision) of the faces recognitions find, for the Faces page; `false` keeps none.',
  },
  sightingsSources: {
    env: 'SIGHTINGS_SOURCES',
    schema: z
      .string()
      .trim()
      .transform((v) =>
        v
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(['api', 'page', 'camera', 'browser', 'verify']))),
    default: 'api,page,camera,browser,verify',
    doc: 'Which recognitions keep sightings, comma separated: `api` (POST /api/recognize by an API client), `page` (a photo on a page, on the server), `camera` (live frames on the server), `browser` (results recognised in a browser and synced), `verify` (POST /api/verify: the second factor).',
  },
  sightingsRetentionDays: {
    env: 'SIGHTINGS_RETENTION_DAYS',
    schema: number(0.001, 3650),
    default: '30',
    doc: 'Sightings older than this many days are removed (crops too) by a purge that runs every hour and at start.',
  },
  sightingsMax: {
    env: 'SIGHTINGS_MAX',
    schema: integer(1, 10_000_000),
    default: '100000',
    doc: 'At most this many sightings are kept; the oldest go first.',
  },
  sightingsIntervalS: {
    env: 'SIGHTINGS_INTERVAL_S',
    schema: number(0, 86_400),
    default: '10',
    doc: "A face tracked across a camera's frames keeps one sighting per this many seconds (0: every frame).",
  },
  auditRetentionDays: {
    env: 'AUDIT_RETENTION_DAYS',
    schema: integer(1, 36_500),
    default: '365',
    doc: 'Audit log entries (biometric operations: enroll, delete, train, verify, template download, sighting access) older than this many days are purged.',
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
  maxInflightPixels: {
    env: 'MAX_INFLIGHT_PIXELS',
    schema: integer(1_000_000, 10_000_000_000),
    default: String(48_000_000),
    doc: 'Pixels decoded at once over all requests (about 4 bytes each while in use); beyond it requests wait up to MAX_INFLIGHT_WAIT_MS, then get 503 with Retry-After. A larger image runs alone.',
  },
  maxInflightWaitMs: {
    env: 'MAX_INFLIGHT_WAIT_MS',
    schema: integer(0, 600_000),
    default: '5000',
    doc: 'How long a request waits for room in MAX_INFLIGHT_PIXELS before the 503, in milliseconds (training always waits).',
  },
  lbphDistanceMin: {
    env: 'LBPH_DISTANCE_MIN',
    schema: number(0, 1e6),
    default: '4',
    doc: 'LBPH: smallest chi-square distance accepted as a known face (the spec window 4 to 85); closer is `copy_of_training_image`.',
  },
  lbphDistanceMax: {
    env: 'LBPH_DISTANCE_MAX',
    schema: z.union([z.literal(''), number(0, 1e6)]),
    default: '',
    doc: "LBPH: the default limit, the largest chi-square distance that may be named; empty: the calibrated 80 (the spec's window ended at 85, which names about 21% of strangers on photos taken at another moment: bench/RESULTS.md). Saved thresholds (`PUT /api/models/thresholds`) win over it.",
  },
  embeddingEnabled: {
    env: 'EMBEDDING_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Loads the `embedding` recognizer (face-api nets on tfjs WASM, one worker thread); `false` saves its memory.',
  },
  embeddingDescriptor: {
    env: 'EMBEDDING_DESCRIPTOR',
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['faceapi-128', 'faceres-1024'])),
    default: 'faceapi-128',
    doc: "Embedding: the descriptor model, `faceapi-128` (face-api's 128-d net) or `faceres-1024` (Human's faceres, 1024-d, L2-normalised, about 2.5x the time per face). A trained model records its descriptor model; after a change the embedding recognizer answers as untrained until it is trained again.",
  },
  embeddingDistanceMax: {
    env: 'EMBEDDING_DISTANCE_MAX',
    schema: z.union([z.literal(''), number(0, 2)]),
    default: '',
    doc: "Embedding: largest euclidean distance between face descriptors that may be named as the same person; empty: the descriptor model's calibrated limit (0.48 for face-api's descriptor, 0.83 for faceres: bench/RESULTS.md). Saved thresholds (`PUT /api/models/thresholds`) win over it.",
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
  eyeCascadeFile: {
    env: 'EYE_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_eye.xml',
    doc: "OpenCV eye cascade XML of the chat analysis' facial features (relative to the app directory or absolute).",
  },
  eyeglassesCascadeFile: {
    env: 'EYEGLASSES_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_eye_tree_eyeglasses.xml',
    doc: "OpenCV eye-with-eyeglasses cascade XML of the chat analysis' facial features (relative to the app directory or absolute).",
  },
  smileCascadeFile: {
    env: 'SMILE_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_smile.xml',
    doc: "OpenCV smile cascade XML of the chat analysis' facial features (relative to the app directory or absolute).",
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
  logFormat: {
    env: 'LOG_FORMAT',
    schema: z.enum(['text', 'json']),
    default: 'text',
    doc: '`text`: readable lines (`time LEVEL message key=value`); `json`: one JSON object per line (`time`, `level`, `msg` and fields such as `request_id`).',
  },
  kafkaBrokers: {
    env: 'KAFKA_BROKERS',
    schema: z.string().trim(),
    default: '',
    doc: 'Kafka bootstrap brokers, comma separated (`host:port,...`); empty: the processor uses an in-process queue on disk (one processor) and PPE checks stay in the local history.',
  },
  kafkaClientId: {
    env: 'KAFKA_CLIENT_ID',
    schema: z.string().trim().min(1),
    default: 'lookout',
    doc: 'Kafka client id (the API server publishes PPE checks, the processor face events).',
  },
  kafkaSsl: { env: 'KAFKA_SSL', schema: boolean, default: 'false', doc: 'Connect to the brokers over TLS.' },
  kafkaSslCaFile: {
    env: 'KAFKA_SSL_CA_FILE',
    schema: z.string().trim(),
    default: '',
    doc: "PEM file of a private CA to trust for the brokers' certificates (implies TLS).",
  },
  kafkaSaslMechanism: {
    env: 'KAFKA_SASL_MECHANISM',
    schema: z.enum(['', 'plain', 'scram-sha-256', 'scram-sha-512']),
    default: '',
    doc: 'SASL mechanism: `scram-sha-512` (the spec cluster), `scram-sha-256` or `plain`; empty: none.',
  },
  kafkaUsername: { env: 'KAFKA_USERNAME', schema: z.string().trim(), default: '', doc: 'SASL user name.' },
  kafkaPassword: {
    env: 'KAFKA_PASSWORD',
    schema: z.string(),
    default: '',
    doc: 'SASL password (never logged or returned).',
  },
  kafkaPasswordFile: {
    env: 'KAFKA_PASSWORD_FILE',
    schema: z.string().trim(),
    default: '',
    doc: 'File holding the SASL password (e.g. a mounted secret); wins over KAFKA_PASSWORD.',
  },
  kafkaRequestTimeoutMs: {
    env: 'KAFKA_REQUEST_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '10000',
    doc: 'Timeout of one request to a broker, in milliseconds (a publish that times out is tried again at the next poll).',
  },
  ppeEnabled: {
    env: 'PPE_ENABLED',
    schema: boolean,
    default: 'false',
    doc: 'Enables PPE compliance checks (`/api/ppe/*`, the Safety page).',
  },
  ppeEndpoint: {
    env: 'PPE_ENDPOINT',
    schema: httpUrlOrEmpty,
    default: '',
    doc: 'Base URL of the PPE detector (`/v1/predict` is appended), e.g. `npm run ppe-server` on `http://127.0.0.1:9100`.',
  },
  ppeConfidence: {
    env: 'PPE_CONFIDENCE',
    schema: number(0, 1),
    default: '0.5',
    doc: 'Default lowest detector confidence of a PPE check, 0 to 1 (a request may send its own `confidence`).',
  },
  ppeTimeoutMs: {
    env: 'PPE_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '10000',
    doc: 'Timeout of one call to the PPE detector, in milliseconds (past it: 504).',
  },
  ppeExpected: {
    env: 'PPE_EXPECTED',
    schema: z
      .string()
      .trim()
      .regex(/^[a-z0-9-]+(,[a-z0-9-]+)*$/, 'a comma-separated list of item names such as hardhat,safety-vest,goggles'),
    default: 'hardhat,safety-vest,goggles',
    doc: 'The protective items every person must wear.',
  },
  ppeClassAliases: {
    env: 'PPE_CLASS_ALIASES',
    schema: z.string().trim(),
    default: 'Hardhat=hardhat,helmet=hardhat,hard-hat=hardhat,Safety Vest=safety-vest,vest=safety-vest,Goggles=goggles,glasses=goggles',
    doc: 'Detector class name -> expected item, `name=item` comma separated (case-insensitive); `NO-<name>` classes mark the item missing.',
  },
  ppeLlmTimeoutMs: {
    env: 'PPE_LLM_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '20000',
    doc: "Budget of the LLM's safety analysis on a violation, in milliseconds; past it the check completes without one (and a dead letter says so).",
  },
  ppeHistoryMax: {
    env: 'PPE_HISTORY_MAX',
    schema: integer(1, 100_000),
    default: '1000',
    doc: 'PPE checks kept in `DATA_DIR/ppe/` for `GET /api/ppe/events` and the charts, oldest dropped first.',
  },
  ppeDatasetDir: {
    env: 'PPE_DATASET_DIR',
    schema: z.string().trim(),
    default: '',
    doc: 'When set, each checked frame is saved there with a YOLO-format label file (training data for the next model).',
  },
  ppeCheckIntervalMs: {
    env: 'PPE_CHECK_INTERVAL_MS',
    schema: integer(200, 3_600_000),
    default: '10000',
    doc: "How often the PPE detector's `/health` is checked in the background, in milliseconds.",
  },
  kafkaTopicPpe: {
    env: 'KAFKA_TOPIC_PPE',
    schema: z.string().trim().min(1),
    default: 'cv.ppe.detections',
    doc: 'Topic of the PPE compliance checks.',
  },
  kafkaTopicPpeDlq: {
    env: 'KAFKA_TOPIC_PPE_DLQ',
    schema: z.string().trim().min(1),
    default: 'dlq.ppe-errors',
    doc: 'Dead-letter topic of failed PPE checks (`ppe_processing_failed`).',
  },
  processorUrl: {
    env: 'PROCESSOR_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "Base URL of the event processor's health server (e.g. `http://127.0.0.1:8090`); when set, the dashboard shows its state.",
  },
  processorCheckIntervalMs: {
    env: 'PROCESSOR_CHECK_INTERVAL_MS',
    schema: integer(100, 3_600_000),
    default: '5000',
    doc: "How often the event processor's `/ready` is read in the background (PROCESSOR_URL set), in milliseconds.",
  },
  authMode: {
    env: 'AUTH_MODE',
    schema: z.enum(['off', 'oidc']),
    default: 'off',
    doc: '`off`: the API takes no token; `oidc`: every endpoint but the probes, the docs and `/api/auth/config` needs a bearer token of OIDC_ISSUER with the role it names (README, "Authentication").',
  },
  oidcIssuer: {
    env: 'OIDC_ISSUER',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "The OpenID issuer whose access tokens the API accepts, exactly as its tokens' `iss` (e.g. `https://idp.example/realms/lookout`); required with AUTH_MODE=oidc.",
  },
  oidcAudience: {
    env: 'OIDC_AUDIENCE',
    schema: z.string().trim().min(1),
    default: 'lookout-backend',
    doc: 'The audience (`aud`) an access token must name: the bearer-only backend client of the realm.',
  },
  oidcClientId: {
    env: 'OIDC_CLIENT_ID',
    schema: z.string().trim().min(1),
    default: 'lookout-app',
    doc: "The web app's public client at the issuer (PKCE), told to the app by `GET /api/auth/config`.",
  },
  oidcJwksUrl: {
    env: 'OIDC_JWKS_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "Where the issuer's signing keys (JWKS) are; empty: the `jwks_uri` of `<OIDC_ISSUER>/.well-known/openid-configuration`.",
  },
  oidcJwksCooldownMs: {
    env: 'OIDC_JWKS_COOLDOWN_MS',
    schema: integer(0, 3_600_000),
    default: '10000',
    doc: "Least time between two fetches of the issuer's keys for a token with an unknown `kid`, in milliseconds.",
  },
} as const satisfies Record<string, SettingSpec>;

/**
 * The event processor's own settings (`npm run processor`). It reads the table above as well (DATA_DIR, HOST,
 * LOG_LEVEL, LOG_FORMAT, REMOTE_DETECTOR_URL, REMOTE_DETECTOR_MODEL_NAME, REMOTE_DETECTOR_TIMEOUT_MS); the API server does
 * not read this one, so a processor setting can never stop the API server.
 */
export const PROCESSOR_SETTINGS = {
  processorPort: {
    env: 'PROCESSOR_PORT',
    schema: integer(0, 65535),
    default: '8090',
    doc: "TCP port of the processor's health server (`/health`, `/ready`), on `HOST`.",
  },
  processorBackendUrl: {
    env: 'PROCESSOR_BACKEND_URL',
    schema: z.url({ protocol: /^https?$/ }),
    default: 'http://127.0.0.1:8080',
    doc: 'Base URL of the Lookout API the processor polls (`/api/labels`, `/api/models/config`).',
  },
  processorOidcTokenUrl: {
    env: 'PROCESSOR_OIDC_TOKEN_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: "Token endpoint of the issuer (e.g. `<OIDC_ISSUER>/protocol/openid-connect/token`) for the processor's client-credentials token, sent on its polls when the API runs with `AUTH_MODE=oidc`; empty: no token.",
  },
  processorOidcClientId: {
    env: 'PROCESSOR_OIDC_CLIENT_ID',
    schema: z.string().trim().min(1),
    default: 'lookout-service',
    doc: 'Confidential client the processor asks a token for (it needs role `biometric-user` at least).',
  },
  processorOidcClientSecret: {
    env: 'PROCESSOR_OIDC_CLIENT_SECRET',
    schema: z.string(),
    default: '',
    doc: "That client's secret (never logged).",
  },
  processorOidcClientSecretFile: {
    env: 'PROCESSOR_OIDC_CLIENT_SECRET_FILE',
    schema: z.string().trim(),
    default: '',
    doc: 'File holding the secret instead (a mounted Secret, read at each token fetch); wins over `PROCESSOR_OIDC_CLIENT_SECRET`.',
  },
  processorPollIntervalMs: {
    env: 'PROCESSOR_POLL_INTERVAL_MS',
    schema: integer(100, 86_400_000),
    default: '30000',
    doc: 'Time between two polls of the labels and of the remote model server, in milliseconds.',
  },
  processorCameraId: {
    env: 'PROCESSOR_CAMERA_ID',
    schema: z.string().trim().min(1),
    default: 'default',
    doc: '`camera_id` of every event the processor publishes.',
  },
  processorSource: {
    env: 'PROCESSOR_SOURCE',
    schema: z.string().trim().min(1),
    default: 'lookout-processor',
    doc: '`source` of every event the processor publishes.',
  },
  processorStateDir: {
    env: 'PROCESSOR_STATE_DIR',
    schema: z.string().trim(),
    default: '',
    doc: "The processor's state (labels announced, mail ledger, last mailed model states, the in-process queue); empty: `<DATA_DIR>/processor`. Processors of one consumer group share it.",
  },
  processorAnnounceExisting: {
    env: 'PROCESSOR_ANNOUNCE_EXISTING',
    schema: boolean,
    default: 'false',
    doc: 'On the very first start, announce the labels that already exist (default: record them silently).',
  },
  processorExitAfterMails: {
    env: 'PROCESSOR_EXIT_AFTER_MAILS',
    schema: integer(0, 1_000_000),
    default: '0',
    doc: 'Fault injection for tests: exit (code 70) right after the N-th mail is accepted and recorded, before its offset is committed; 0: off.',
  },
  kafkaGroupId: {
    env: 'KAFKA_GROUP_ID',
    schema: z.string().trim().min(1),
    default: 'lookout-processor',
    doc: 'Consumer group of the processors (they share the partitions; one of them polls).',
  },
  kafkaTopicFace: {
    env: 'KAFKA_TOPIC_FACE',
    schema: z.string().trim().min(1),
    default: 'cv.face.detections',
    doc: 'Topic of the face pipeline events.',
  },
  kafkaTopicFaceDlq: {
    env: 'KAFKA_TOPIC_FACE_DLQ',
    schema: z.string().trim().min(1),
    default: 'dlq.face-notifications',
    doc: 'Dead-letter topic: events whose mail failed `MAIL_MAX_ATTEMPTS` times (or could not be read), with the error; in-process: files in `<state>/queue/<topic>/`.',
  },
  kafkaSessionTimeoutMs: {
    env: 'KAFKA_SESSION_TIMEOUT_MS',
    schema: integer(1000, 600_000),
    default: '30000',
    doc: 'Consumer session timeout: how long a silent processor keeps its partitions before the group takes them over.',
  },
  mailTransport: {
    env: 'MAIL_TRANSPORT',
    schema: z.enum(['file', 'mailpit', 'smtp']),
    default: 'file',
    doc: '`file` (each mail an `.eml` file in `<DATA_DIR>/outbox/`), `mailpit` (its HTTP send API) or `smtp`.',
  },
  mailUrl: {
    env: 'MAIL_URL',
    schema: httpUrlOrEmpty,
    default: '',
    doc: 'Base URL of Mailpit for `MAIL_TRANSPORT=mailpit` (`/api/v1/send` is appended).',
  },
  mailSmtpUrl: {
    env: 'MAIL_SMTP_URL',
    schema: z.union([z.literal(''), z.url({ protocol: /^smtps?$/ })]),
    default: '',
    doc: 'SMTP server for `MAIL_TRANSPORT=smtp`, e.g. `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://` (never logged).',
  },
  mailSmtpCaFile: {
    env: 'MAIL_SMTP_CA_FILE',
    schema: z.string().trim(),
    default: '',
    doc: "PEM file of a private CA to trust for the SMTP server's certificate (STARTTLS or smtps://).",
  },
  mailFrom: {
    env: 'MAIL_FROM',
    schema: z.string().trim().min(3),
    default: 'Lookout <lookout@localhost>',
    doc: 'Sender of every mail (`Name <address>` or an address).',
  },
  mailSecurityTo: {
    env: 'MAIL_SECURITY_TO',
    schema: z.string().trim().min(3),
    default: 'security@localhost',
    doc: 'Recipient of `person_registered` mails (the security administrators), comma separated.',
  },
  mailMlopsTo: {
    env: 'MAIL_MLOPS_TO',
    schema: z.string().trim().min(3),
    default: 'mlops@localhost',
    doc: 'Recipient of `remote_model_status` mails (ML operations), comma separated.',
  },
  mailRemoteStatus: {
    env: 'MAIL_REMOTE_STATUS',
    schema: z.enum(['changes', 'every']),
    default: 'changes',
    doc: '`changes`: mail a model status only when its state changed since the last mail; `every`: every status event.',
  },
  mailMaxAttempts: {
    env: 'MAIL_MAX_ATTEMPTS',
    schema: integer(1, 1000),
    default: '10',
    doc: 'Tries of one mail before its event goes to the dead-letter topic.',
  },
  mailRetryBaseMs: {
    env: 'MAIL_RETRY_BASE_MS',
    schema: integer(1, 3_600_000),
    default: '1000',
    doc: 'Wait before the second try of a mail, in milliseconds; doubled after each failure.',
  },
  mailRetryMaxMs: {
    env: 'MAIL_RETRY_MAX_MS',
    schema: integer(1, 3_600_000),
    default: '60000',
    doc: 'Longest wait between two tries of a mail, in milliseconds.',
  },
  mailTimeoutMs: {
    env: 'MAIL_TIMEOUT_MS',
    schema: integer(100, 600_000),
    default: '10000',
    doc: 'Timeout of one mail delivery, in milliseconds.',
  },
} as const satisfies Record<string, SettingSpec>;

type Parsed<T extends Record<string, SettingSpec>> = { -readonly [K in keyof T]: z.output<T[K]['schema']> };
export type Settings = Parsed<typeof SETTINGS> & {
  /** Absolute application directory (where `public/` lives). */
  appDir: string;
};
export type ProcessorSettings = Settings & Parsed<typeof PROCESSOR_SETTINGS>;

/** Thrown when one or more environment variables are invalid; the message lists each. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function describe(spec: SettingSpec, issue: z.core.$ZodIssue): string {
  return `${spec.env}: ${issue.message}. ${spec.doc}`;
}

function parseTable(table: Record<string, SettingSpec>, env: NodeJS.ProcessEnv, out: Record<string, unknown>, problems: string[]): void {
  for (const [key, spec] of Object.entries(table)) {
    const raw = env[spec.env] ?? spec.default;
    const result = spec.schema.safeParse(raw);
    if (result.success) out[key] = result.data;
    else problems.push(describe(spec, result.error.issues[0]));
  }
}

/** Parses and validates every setting; throws SettingsError naming each bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv, appDir: string): Settings {
  const problems: string[] = [];
  const out: Record<string, unknown> = { appDir };
  parseTable(SETTINGS, env, out, problems);
  if (problems.length === 0) {
    const s = out as Settings;
    if (s.lbphDistanceMin > (s.lbphDistanceMax === '' ? defaultRule('lbph').max : s.lbphDistanceMax)) {
      problems.push('LBPH_DISTANCE_MIN: must not be larger than LBPH_DISTANCE_MAX.');
    }
    if (s.kafkaSaslMechanism && !s.kafkaUsername) problems.push('KAFKA_USERNAME: must be set with KAFKA_SASL_MECHANISM.');
    if (s.authMode === 'oidc' && !s.oidcIssuer) problems.push(`OIDC_ISSUER: must be set with AUTH_MODE=oidc. ${SETTINGS.oidcIssuer.doc}`);
    // The entry is not echoed: a mistaken `user:password@host:port` must not reach the log.
    const bad = kafkaBrokerList(s).findIndex((b) => !/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/.test(b));
    if (bad >= 0) problems.push(`KAFKA_BROKERS: entry ${bad + 1} is not host:port. ${SETTINGS.kafkaBrokers.doc}`);
    s.dataDir = path.resolve(s.dataDir);
    s.cascadeFile = path.resolve(appDir, s.cascadeFile);
    for (const key of ['eyeCascadeFile', 'eyeglassesCascadeFile', 'smileCascadeFile'] as const) s[key] = path.resolve(appDir, s[key]);
  }
  if (problems.length) throw new SettingsError(problems);
  return out as Settings;
}

/** KAFKA_BROKERS as a list (empty: no Kafka). */
export function kafkaBrokerList(s: Pick<Settings, 'kafkaBrokers'>): string[] {
  return s.kafkaBrokers
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
}

/** The processor's settings: the common table and its own; throws SettingsError naming each bad variable. */
export function loadProcessorSettings(env: NodeJS.ProcessEnv, appDir: string): ProcessorSettings {
  const problems: string[] = [];
  let common: Settings | null = null;
  try {
    common = loadSettings(env, appDir);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    problems.push(...err.problems);
  }
  const own: Record<string, unknown> = {};
  parseTable(PROCESSOR_SETTINGS, env, own, problems);
  if (problems.length === 0) {
    const s = { ...common, ...own } as ProcessorSettings;
    if (s.mailTransport === 'mailpit' && !s.mailUrl) problems.push('MAIL_URL: must be set when MAIL_TRANSPORT=mailpit.');
    if (s.mailTransport === 'smtp' && !s.mailSmtpUrl) problems.push('MAIL_SMTP_URL: must be set when MAIL_TRANSPORT=smtp.');
    if (s.mailRetryBaseMs > s.mailRetryMaxMs) problems.push('MAIL_RETRY_BASE_MS: must not be larger than MAIL_RETRY_MAX_MS.');
    if (s.processorOidcTokenUrl && !s.processorOidcClientSecret && !s.processorOidcClientSecretFile)
      problems.push('PROCESSOR_OIDC_CLIENT_SECRET: must be set (or PROCESSOR_OIDC_CLIENT_SECRET_FILE) when PROCESSOR_OIDC_TOKEN_URL is.');
    s.processorStateDir = path.resolve(s.processorStateDir || path.join(s.dataDir, 'processor'));
    if (problems.length === 0) return s;
  }
  throw new SettingsError(problems);
}
