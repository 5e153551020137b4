/** What the route modules need, built once by the composition root (server/app.ts). */
import type { Settings } from '../config/settings.js';
import type { ChatService } from '../chat/chat-service.js';
import type { ChatStatus } from '../chat/chat-status.js';
import type { Database } from '../db/database.js';
// #26 audit
import type { AuditLog } from '../audit/audit-log.js';
import type { FaceService } from '../engines/faces/face-service.js';
import type { ImageDecoder } from '../imaging/decode.js';
import type { ObjectService } from '../engines/objects/object-service.js';
import type { EmbeddingHost } from '../engines/faces/embedding-host.js';
import type { ProcessorStatus } from '../events/processor-status.js';
import type { RemoteEngine } from '../engines/remote/remote-engine.js';
import type { Logger } from '../logger.js';
import type { PpeService } from '../ppe/ppe-service.js';
import type { ImageStore } from '../storage/image-store.js';
import type { SharedFiles } from '../storage/shared-files.js';
import type { ResultStore } from '../storage/result-store.js';
// #26 deletion
import type { ModelStore } from '../storage/model-store.js';
import type { SightingRecorder } from '../sightings/sighting-recorder.js';
import type { SightingStore } from '../sightings/sighting-store.js';
// #26 corrections
import type { CorrectionStore } from '../review/corrections.js';
// #26 review
import type { ReviewStore } from '../review/review-store.js';
// #26 enrollment
import type { PeopleStore } from '../people/people-store.js';
import type { PhotoChecker } from '../people/photo-checker.js';

export interface AppContext {
  settings: Settings;
  faces: FaceService;
  remote: RemoteEngine;
  objects: ObjectService;
  /** #38 2: the embedding worker, started on first use (null when EMBEDDING_ENABLED=false); /api/ready reports its state. */
  embedding?: EmbeddingHost | null;
  chat: ChatService;
  chatStatus: ChatStatus;
  ppe: PpeService;
  processorStatus: ProcessorStatus;
  images: ImageStore;
  /** #37: where the file stores' state is shared (server/storage/shared-files.ts): told of every change, and the cluster locks. */
  shared: SharedFiles;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts): every route that decodes goes through it. */
  decoder: ImageDecoder;
  results: ResultStore;
  /** The saved trained models (a person's deletion rewrites them without that person). */
  models: ModelStore;
  /** Rows (sightings, review, corrections, results, audit, people): embedded PGlite or DATABASE_URL, opened on first use. */
  db: Database;
  // #26 sightings: the faces recognitions saw (rows and crops), and what decides which are kept.
  sightings: SightingStore;
  sightingRecorder: SightingRecorder;
  /** #26 audit: the append-only log of biometric operations (server/audit). */
  audit: AuditLog;
  /** #26 corrections: "not this person" templates the recognizers apply (server/review/corrections.ts). */
  corrections: CorrectionStore;
  /** #26 review: groups of unknown faces, assign / dismiss / undo (server/review/review-store.ts). */
  review: ReviewStore;
  /** #26 enrollment: display names and training images' metadata (server/people/people-store.ts). */
  people: PeopleStore;
  /** #26 enrollment: the photo check in the vision workers, and the training image of a picked face. */
  photoChecks: PhotoChecker;
  log: Logger;
  version: string;
  startedAt: number;
  workers: number;
}
