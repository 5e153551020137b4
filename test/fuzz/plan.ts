/**
 * How many cases each generator gets in one CI run (times FUZZ_SCALE), and the seed. The counts lean on the
 * routes that take input (bodies, labels, images) and stay low where a valid case is costly (object detection,
 * chat and PPE checks run real models on valid images; training runs over every stored image).
 */
import type { FuzzRoute } from './routes.js';

export const RUNS: Record<FuzzRoute | 'undocumented', number> = {
  health: 80,
  metrics: 40,
  ready: 80,
  authConfig: 40,
  labels: 150,
  trainStatus: 80,
  modelsConfig: 80,
  modelsAvailable: 80,
  thresholds: 80,
  objectClasses: 80,
  objectStatus: 80,
  chatStatus: 80,
  processorStatus: 80,
  ppeStatus: 80,
  ppeDataset: 40,
  openapi: 40,
  docs: 80,
  docsAsset: 150,
  results: 600,
  // #26 deletion
  deletedPeople: 200,
  ppeEvents: 300,
  // In this order: uploads first, so the readers, recognition and training meet stored images; deletes last.
  uploadImage: 2000,
  labelImages: 700,
  imageFile: 700,
  recognize: 1500,
  // #29: each valid case also runs object detection, as detectObjects does
  analyze: 150,
  // #26 enrollment
  checkImage: 300,
  verify: 400,
  train: 10,
  trainedModels: 200,
  trainedLbph: 200,
  trainedEmbedding: 200,
  trainedCorrections: 200,
  trainedCompact: 200,
  trainedCompactSegments: 200,
  deleteImage: 250,
  deleteLabel: 250,
  setModelsConfig: 500,
  setDetection: 500,
  setThresholds: 500,
  previewThresholds: 200,
  detectObjects: 250,
  storeResults: 1200,
  // #26 sightings
  sightings: 200,
  sighting: 100,
  sightingCrop: 100,
  deleteSighting: 80,
  purgeSightings: 40,
  sightingsStatus: 40,
  // #26 review
  reviewGroups: 150,
  reviewPeople: 150,
  reviewActions: 80,
  reviewAssign: 250,
  reviewDismiss: 150,
  reviewUndo: 150,
  reviewApart: 150,
  // #26 audit
  auditLog: 150,
  updatePerson: 150,
  // #36 2
  personPage: 100,
  renamePerson: 100,
  setPersonCover: 80,
  mergePerson: 100,
  movePhotos: 100,
  undoPersonAction: 80,
  searchFaces: 100,
  // #26 corrections
  createCorrection: 150,
  corrections: 80,
  deleteCorrection: 80,
  chat: 250,
  ppeDetect: 250,
  undocumented: 600,
};

/** Cases of the interleaved run over every route (state built by one route met by the others). */
export const MIXED_RUNS = 2000;
/** Documented requests from another web page (a foreign Origin): each must be a 403. */
export const FOREIGN_ORIGIN_RUNS = 300;
/** Raw-socket cases. */
export const RAW_RUNS = 500;
/** Cases per route (and outside the table) with the optional engines switched off. */
export const OFF_RUNS = 100;
/** The per-batch invariants (health, files beside DATA_DIR) are checked at least this often. */
export const BATCH = 250;

/** FUZZ_SCALE multiplies every count (0.1 for a quick local run, 10 for a long one). */
export const SCALE = Number(process.env.FUZZ_SCALE ?? '1');

export function runs(n: number): number {
  return Math.max(1, Math.round(n * SCALE));
}

/** FUZZ_SEED replays a run; otherwise a fresh seed, printed. */
export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
