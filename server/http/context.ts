/** What the route modules need, built once by the composition root (server/app.ts). */
import type { Settings } from '../config/settings.js';
import type { ChatService } from '../chat/chat-service.js';
import type { ChatStatus } from '../chat/chat-status.js';
import type { Database } from '../db/database.js';
import type { FaceService } from '../engines/faces/face-service.js';
import type { ImageDecoder } from '../imaging/decode.js';
import type { ObjectService } from '../engines/objects/object-service.js';
import type { ProcessorStatus } from '../events/processor-status.js';
import type { RemoteEngine } from '../engines/remote/remote-engine.js';
import type { Logger } from '../logger.js';
import type { PpeService } from '../ppe/ppe-service.js';
import type { ImageStore } from '../storage/image-store.js';
import type { ResultStore } from '../storage/result-store.js';

export interface AppContext {
  settings: Settings;
  faces: FaceService;
  remote: RemoteEngine;
  objects: ObjectService;
  chat: ChatService;
  chatStatus: ChatStatus;
  ppe: PpeService;
  processorStatus: ProcessorStatus;
  images: ImageStore;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts): every route that decodes goes through it. */
  decoder: ImageDecoder;
  results: ResultStore;
  /** Rows (sightings, review, corrections, results, audit, people): embedded PGlite or DATABASE_URL, opened on first use. */
  db: Database;
  log: Logger;
  version: string;
  startedAt: number;
  workers: number;
}
