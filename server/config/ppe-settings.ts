/** Protective equipment checks: the detector, the rule's items and aliases, the history, the training set and the checks' topics. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { boolean, httpUrlOrEmpty, integer, number, type SettingSpec } from './setting-schemas.js';

export const PPE_SETTINGS = {
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
} as const satisfies Record<string, SettingSpec>;
