/// <reference lib="webworker" />
/**
 * A cascade helper thread of the engine worker: runs detectMultiScale on the part of the pyramid it is given
 * (shared/vision/cascade-split.ts) and returns the raw windows. Started by cascade-pool.ts.
 */
import type { GrayImage, Rect } from '../../../shared/image/types';
import { detectMultiScale, parseHaarCascade, type DetectOptions, type HaarCascade } from '../../../shared/vision/haar-cascade';
import { serveOps } from './ops-worker';

declare const self: DedicatedWorkerGlobalScope;

export interface CascadeOps {
  load: { args: { xml: string }; result: void };
  detect: { args: { gray: GrayImage; options: DetectOptions }; result: Rect[] };
}

let cascade: HaarCascade | null = null;

serveOps<CascadeOps>(self, {
  load: ({ xml }) => {
    cascade = parseHaarCascade(xml);
  },
  detect: ({ gray, options }) => {
    if (!cascade) throw new Error('the cascade is not loaded');
    return detectMultiScale(cascade, gray, options);
  },
});
