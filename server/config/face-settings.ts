/** Faces: the detection engines (the local Haar cascade, a remote KServe V2 model server) and the recognizers (LBPH, embedding) with their limits. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { CASCADE_DEFAULTS } from '../../shared/recognition/pipeline.js';
import { boolean, detectionMethodInput, integer, number, recognitionModelInput, type SettingSpec } from './setting-schemas.js';

export const FACE_SETTINGS = {
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
    doc: "Embedding: the descriptor model, `faceapi-128` (face-api's 128-d net) or `faceres-1024` (Human's faceres, 1024-d, L2-normalised, about 2.5 to 3x the time per face). A trained model records its descriptor model; after a change the embedding recognizer answers as untrained until it is trained again. Unknown faces are grouped for review by face-api's 128-d descriptor whatever this is: with `faceres-1024` a second one is computed per unknown face kept (docs/recognition.md).",
  },
  thresholdBounds: {
    env: 'THRESHOLD_BOUNDS',
    schema: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(['calibrated', 'off'])),
    default: 'calibrated',
    doc: "`calibrated`: `PUT /api/models/thresholds` refuses a limit (`max`, `sure_max`, `verify_max`) past the calibrated bound of the recognizer and descriptor model (LBPH 85, faceapi-128 0.55, faceres-1024 0.92: about where 1% of the bench's impostor pairs pass, docs/recognition.md), and a start with LBPH_DISTANCE_MAX or EMBEDDING_DISTANCE_MAX past it is refused; `off`: the whole distance range, for a lab or a test that needs a stranger named, never for a site.",
  },
  embeddingDistanceMax: {
    env: 'EMBEDDING_DISTANCE_MAX',
    schema: z.union([z.literal(''), number(0, 2)]),
    default: '',
    doc: "Embedding: largest euclidean distance between face descriptors that may be named as the same person; empty: the descriptor model's calibrated limit (0.515 for face-api's descriptor, 0.88 for faceres: bench/RESULTS.md; each person's own limit may be stricter, docs/recognition.md). Saved thresholds (`PUT /api/models/thresholds`) win over it.",
  },
} as const satisfies Record<string, SettingSpec>;
