/**
 * A vision worker thread: runs the shared/ Haar cascade, LBPH and the embedding recognizer on images sent by
 * the API thread, so every core works on requests while the event loop stays free for I/O. Jobs arrive one at
 * a time (the pool waits for each reply), so async jobs never interleave.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { predictEmbedding, type EmbeddingModel } from '../../shared/embedding/matcher.js';
import type { GrayImage, Rect } from '../../shared/image/types.js';
import { lbpHistogram, predictLbph, type LbphModel } from '../../shared/lbph/lbph.js';
import { largestBox, normalizeFace } from '../../shared/vision/face-region.js';
import { detectMultiScale, parseHaarCascade } from '../../shared/vision/haar-cascade.js';
import { NodeEmbeddingEngine, type EmbeddingAvailability } from './embedding-node.js';
import type { RecognizedBox, VisionJob, VisionResult, VisionWorkerData, WorkerReply, WorkerRequest } from './vision-protocol.js';

const config = workerData as VisionWorkerData;
const cascade = parseHaarCascade(config.cascadeXml);
const options = {
  scaleFactor: config.cascade.scaleFactor,
  minNeighbors: config.cascade.minNeighbors,
  minSize: { width: config.cascade.minSize, height: config.cascade.minSize },
};
const embedding = config.embeddingModelDir ? new NodeEmbeddingEngine({ modelDir: config.embeddingModelDir }) : null;
const embeddingReady: Promise<EmbeddingAvailability> = embedding
  ? embedding.load()
  : Promise.resolve({ available: false, reason: 'the embedding recognizer is switched off', loadMs: 0 });

let lbphModel: LbphModel | null = null;
let embeddingModel: EmbeddingModel | null = null;
let modelVersion = 0;

function detect(gray: GrayImage, boxes?: Rect[]): Rect[] {
  return boxes ?? detectMultiScale(cascade, gray, options);
}

async function handle(job: VisionJob): Promise<VisionResult> {
  switch (job.op) {
    case 'detect':
      return { op: 'detect', boxes: detect(job.gray) };
    case 'recognize': {
      const boxes = detect(job.gray, job.boxes);
      let faces: RecognizedBox[];
      if (job.recognizer === 'embedding') {
        const model = embeddingModel;
        const descriptors = model && boxes.length && job.rgb ? await embedding!.describeFaces(job.rgb, boxes) : [];
        faces = boxes.map((box, i) => {
          const p = model && descriptors[i] ? predictEmbedding(model, descriptors[i]) : null;
          return p && p.label >= 0 ? { box, labelId: p.label, distance: p.distance } : { box, labelId: null, distance: null };
        });
      } else {
        const model = lbphModel;
        faces = boxes.map((box) => {
          const p = model ? predictLbph(model, lbpHistogram(normalizeFace(job.gray, box))) : null;
          return p && p.label >= 0 ? { box, labelId: p.label, distance: p.distance } : { box, labelId: null, distance: null };
        });
      }
      return { op: 'recognize', faces, modelVersion };
    }
    case 'trainSample': {
      const boxes = detect(job.gray, job.boxes);
      const face = largestBox(boxes);
      if (!face) return { op: 'trainSample', boxes, histogram: null, descriptor: null };
      const histogram = lbpHistogram(normalizeFace(job.gray, face));
      const canDescribe = job.rgb && (await embeddingReady).available;
      const descriptor = canDescribe ? ((await embedding!.describeFaces(job.rgb!, [face]))[0] ?? null) : null;
      return { op: 'trainSample', boxes, histogram, descriptor };
    }
    case 'setModels':
      lbphModel = job.lbph;
      embeddingModel = job.embedding;
      modelVersion = job.version;
      return { op: 'setModels' };
    case 'status':
      return { op: 'status', embedding: await embeddingReady };
  }
}

parentPort!.on('message', ({ id, job }: WorkerRequest) => {
  handle(job).then(
    (result) => parentPort!.postMessage({ id, ok: true, result } satisfies WorkerReply),
    (err: unknown) => parentPort!.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) } satisfies WorkerReply),
  );
});
