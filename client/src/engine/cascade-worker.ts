/// <reference lib="webworker" />
/**
 * A cascade helper thread of the engine worker: runs detectMultiScale on the part of the pyramid it is given
 * (shared/vision/cascade-split.ts) and returns the raw windows. Started by cascade-pool.ts.
 */
import type { GrayImage, Rect } from '../../../shared/image/types';
import { detectMultiScale, parseHaarCascade, type DetectOptions, type HaarCascade } from '../../../shared/vision/haar-cascade';

declare const self: DedicatedWorkerGlobalScope;

export type CascadeJob = { op: 'load'; xml: string } | { op: 'detect'; gray: GrayImage; options: DetectOptions };
export type CascadeReply = { id: number; ok: true; boxes: Rect[] } | { id: number; ok: false; error: string };

let cascade: HaarCascade | null = null;

self.onmessage = (event: MessageEvent<{ id: number; job: CascadeJob }>) => {
  const { id, job } = event.data;
  let reply: CascadeReply;
  try {
    if (job.op === 'load') {
      cascade = parseHaarCascade(job.xml);
      reply = { id, ok: true, boxes: [] };
    } else {
      if (!cascade) throw new Error('the cascade is not loaded');
      reply = { id, ok: true, boxes: detectMultiScale(cascade, job.gray, job.options) };
    }
  } catch (err) {
    reply = { id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  self.postMessage(reply);
};
