/// <reference lib="webworker" />
/**
 * An object lane (object-pool.ts): a worker holding only an object detector (NanoDet or the operator's YOLO)
 * on onnxruntime-web's WASM provider with the threads it is given, so two frames are detected at once on two
 * cores. Same graph and session options as the engine worker's detector: the same detections.
 *
 * The GPU lane (`gpu`): NanoDet on onnxruntime-web's WebGPU provider, created and warmed up here, off the engine
 * worker, so detection and recognition go on there meanwhile. It fails with the reason rather than fall back.
 */
import { errorText } from '../../../shared/recognition/worker-messages';
import { detectPixels, loadNanoDet, loadYolo, type ObjectDetector } from './objects';
import { serveOps } from './ops-worker';
import type { DetectObjectsResult, FramePixels } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

export interface ObjectLaneOps {
  load: {
    args: { nanodet: string; yolo?: string; threads: number; gpu?: boolean };
    /** `loadMs`: fetching the graph, creating its session and the warm-up pass. */
    result: { detector: string; runtime: string; loadMs: number };
  };
  detect: { args: { frame: FramePixels; confidence?: number }; result: DetectObjectsResult };
}

let detector: ObjectDetector | null = null;

serveOps<ObjectLaneOps>(
  self,
  {
    async load({ nanodet, yolo, threads, gpu }) {
      const t0 = performance.now();
      try {
        if (gpu) detector = await loadNanoDet(nanodet, 'webgpu');
        else detector = await (yolo ? loadYolo(yolo, threads) : loadNanoDet(nanodet, 'wasm', threads));
      } catch (err) {
        throw new Error(gpu ? errorText(err) : `the object lane could not load its detector: ${errorText(err)}`);
      }
      return { detector: detector.name, runtime: detector.runtime, loadMs: performance.now() - t0 };
    },
    detect({ frame, confidence }) {
      if (!detector) throw new Error('the object lane has no detector; call load() first');
      return detectPixels(detector, frame, confidence);
    },
  },
  true,
);
