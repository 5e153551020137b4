/**
 * Which face detection method the installed models were trained with (#29 §5). The Haar cascade and a remote SSD
 * detector draw different boxes around the same face (measured with server/model-server: the remote boxes are 70 to
 * 98% of the cascade's width and 92 to 129% of its height, shifted by up to 18% of the width), so the LBPH crops
 * of one method do not match a model trained with the other, and people are no longer recognised after a switch.
 * No fixed box transform fits (the ratios vary face to face, and another remote model draws its own boxes), so the
 * method a training used is kept, and the Models page says when the active one differs and offers a retraining.
 *
 * Kept in DATA_DIR/settings/trained-detection.json (atomic write, shared by replicas), tied to the training's time:
 * a record of another training (models trained before it was kept, or replaced since) says nothing.
 */
import path from 'node:path';
import type { DetectionMethod } from '../../../shared/api/index.js';
import { DETECTION_METHODS } from '../../../shared/api/index.js';
import { writeFileAtomic } from '../../storage/atomic.js';
import { readFileNoFollow } from '../../storage/no-follow.js';
import { LocalFiles, type SharedFiles } from '../../storage/shared-files.js';

const FILE = path.join('settings', 'trained-detection.json');
const FORMAT = 'lookout-trained-detection';

export interface TrainedDetection {
  detection_method: DetectionMethod;
  /** The training's `trained_at`, which the installed models carry (recognizerStatus). */
  trained_at: string;
}

/**
 * Records the method of a training that finished (its answer's `detection_method` and `trained_at`); `shared` (#37)
 * is told (DATA_DIR's own files when not given).
 */
export async function recordTrainedDetection(
  dataDir: string,
  trained: TrainedDetection,
  shared: SharedFiles = new LocalFiles(dataDir),
): Promise<void> {
  const body = { format: FORMAT, version: 1, detection_method: trained.detection_method, trained_at: trained.trained_at };
  await writeFileAtomic(path.join(dataDir, FILE), `${JSON.stringify(body)}\n`);
  await shared.wrote(path.join(dataDir, FILE));
}

/** The last training's record, or null when there is none or it cannot be read (then nothing is claimed). */
export async function readTrainedDetection(dataDir: string): Promise<TrainedDetection | null> {
  try {
    const parsed = JSON.parse((await readFileNoFollow(path.join(dataDir, FILE))).toString('utf8'));
    if (parsed?.format !== FORMAT || typeof parsed.trained_at !== 'string') return null;
    if (!(DETECTION_METHODS as readonly string[]).includes(parsed.detection_method)) return null;
    return { detection_method: parsed.detection_method, trained_at: parsed.trained_at };
  } catch {
    return null;
  }
}

/**
 * How long after its training's `trained_at` an installed model's own time may be and still be that training's.
 * After a restart the LBPH model's time is training.lbph's modification time, written moments after `trained_at`
 * (embeddings.json keeps `trained_at` itself); a later training writes its own record, an earlier one's models
 * are older than this record.
 */
const SAME_TRAINING_MS = 10 * 60_000;

/**
 * The method the installed models were trained with: the record when it belongs to one of them (its time from the
 * record's `trained_at` to SAME_TRAINING_MS after), else null (unknown).
 */
export function installedDetection(
  record: TrainedDetection | null,
  trainedAt: readonly (string | null | undefined)[],
): DetectionMethod | null {
  if (!record) return null;
  const recorded = Date.parse(record.trained_at);
  const ours = trainedAt.some((t) => {
    const after = t ? Date.parse(t) - recorded : Number.NaN;
    return after >= 0 && after <= SAME_TRAINING_MS;
  });
  return ours ? record.detection_method : null;
}
