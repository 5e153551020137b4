/** What the route modules need, built once by the composition root (server/app.ts). */
import type { Settings } from '../config/settings.js';
import type { FaceService } from '../engines/face-service.js';
import type { RemoteEngine } from '../engines/remote-engine.js';
import type { Logger } from '../logger.js';
import type { ImageStore } from '../storage/image-store.js';

export interface AppContext {
  settings: Settings;
  faces: FaceService;
  remote: RemoteEngine;
  images: ImageStore;
  log: Logger;
  version: string;
  startedAt: number;
  workers: number;
}
