/**
 * A vision worker thread: runs the shared/ Haar cascade and LBPH on images sent by the API thread, so every
 * core works on requests while the event loop stays free for I/O.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { GrayImage, Rect } from '../../../shared/image/types.js';
import { lbpHistogram, predictLbph, type LbphModel } from '../../../shared/lbph/lbph.js';
import { largestBox, normalizeFace } from '../../../shared/vision/face-region.js';
import { detectMultiScale, parseHaarCascade } from '../../../shared/vision/haar-cascade.js';
import type { WorkerReply } from '../workers/worker-pool.js';
import type { VisionJob, VisionResult, VisionWorkerData } from './vision-protocol.js';

const config = workerData as VisionWorkerData;
const cascade = parseHaarCascade(config.cascadeXml);
const options = {
  scaleFactor: config.cascade.scaleFactor,
  minNeighbors: config.cascade.minNeighbors,
  minSize: { width: config.cascade.minSize, height: config.cascade.minSize },
};
let model: LbphModel | null = null;
let modelVersion = 0;

function detect(gray: GrayImage, boxes?: Rect[]): Rect[] {
  return boxes ?? detectMultiScale(cascade, gray, options);
}

function handle(job: VisionJob): VisionResult {
  switch (job.op) {
    case 'detect':
      return { op: 'detect', boxes: detect(job.gray) };
    case 'recognize': {
      const faces = detect(job.gray, job.boxes).map((box) => {
        const p = model ? predictLbph(model, lbpHistogram(normalizeFace(job.gray, box))) : null;
        return p && p.label >= 0 ? { box, labelId: p.label, distance: p.distance } : { box, labelId: null, distance: null };
      });
      return { op: 'recognize', faces, modelVersion };
    }
    case 'trainSample': {
      const boxes = detect(job.gray, job.boxes);
      const face = largestBox(boxes) ?? null;
      return { op: 'trainSample', boxes, face, histogram: face ? lbpHistogram(normalizeFace(job.gray, face)) : null };
    }
    case 'setModel':
      model = job.model;
      modelVersion = job.version;
      return { op: 'setModel' };
  }
}

parentPort!.on('message', ({ id, job }: { id: number; job: VisionJob }) => {
  let reply: WorkerReply<VisionResult>;
  try {
    reply = { id, ok: true, result: handle(job) };
  } catch (err) {
    reply = { id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
