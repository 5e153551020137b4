/**
 * A vision worker thread: the shared recognition pipeline (Haar cascade + LBPH) on images sent by the API
 * thread, so every core works on requests while the event loop stays free for I/O.
 */
import { workerData } from 'node:worker_threads';
import { detectOptionsOf, FacePipeline } from '../../../shared/recognition/pipeline.js';
import { detectMultiScale, parseHaarCascade } from '../../../shared/vision/haar-cascade.js';
import { serveOps } from '../workers/worker-host.js';
import type { VisionOps, VisionWorkerData } from './vision-protocol.js';

const config = workerData as VisionWorkerData;
const cascade = parseHaarCascade(config.cascadeXml);
const options = detectOptionsOf(config.cascade);
const pipeline = new FacePipeline({ detect: (gray) => detectMultiScale(cascade, gray, options) });

serveOps<VisionOps>({
  detect: ({ gray }) => pipeline.detect(gray),
  recognize: ({ gray, boxes, window }) => pipeline.recognize({ gray }, { recognizer: 'lbph', window, boxes }),
  trainSample: ({ gray, boxes }) => pipeline.sample({ gray }, { boxes }),
  setModel: (lbph) => pipeline.setModels({ lbph }),
});
