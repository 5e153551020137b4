/**
 * The Haar cascade on several threads, with detectMultiScale's exact result (shared/vision/cascade-split.ts):
 * the engine worker scans one part of the pyramid itself while helper workers scan the others, then the
 * windows are grouped as one run would group them. The cascade is most of a frame's time (about 100 ms for
 * 640x480 on one core of a small machine); the server runs it at the same resolution and parameters.
 * A helper that fails is dropped and its part scanned by the engine worker itself.
 */
import type { GrayImage, Rect } from '../../../shared/image/types';
import { detectSplit, type PartRunner } from '../../../shared/vision/cascade-split';
import type { DetectOptions, HaarCascade } from '../../../shared/vision/haar-cascade';
import type { CascadeOps } from './cascade-worker';
import { OpsWorker } from './ops-worker';

type Helper = OpsWorker<CascadeOps>;

function startHelper(onBroken: (err: Error) => void): Helper {
  const worker = new Worker(new URL('./cascade-worker.ts', import.meta.url), { type: 'module', name: 'lookout-cascade' });
  return new OpsWorker<CascadeOps>(worker, 'cascade thread', onBroken);
}

export interface CascadeRunner {
  /** Threads scanning the pyramid (1: this worker alone). */
  readonly threads: number;
  detect(gray: GrayImage): Promise<Rect[]>;
  /** Stops the helpers. */
  dispose(): void;
}

/** Starts `threads - 1` helpers (fewer than 2 threads: none) and loads the cascade into each. */
export async function createCascadeRunner(
  cascade: HaarCascade,
  xml: string,
  options: DetectOptions,
  threads: number,
): Promise<CascadeRunner> {
  let helpers: Helper[] = [];
  const drop = () => {
    for (const h of helpers) h.terminate();
    helpers = [];
  };
  const wanted = Math.max(1, Math.floor(threads));
  if (wanted > 1 && typeof Worker !== 'undefined') {
    try {
      helpers = Array.from({ length: wanted - 1 }, () => startHelper(drop));
      await Promise.all(helpers.map((h) => h.run('load', { xml })));
    } catch {
      drop(); // no helpers: this worker scans alone
    }
  }
  return {
    get threads() {
      return helpers.length + 1;
    },
    detect(gray) {
      // A helper that fails is dropped (with the others) and its part scanned here: the same boxes either way.
      const runners: PartRunner[] = helpers.map((helper) => async ({ width, height, data }, part) => {
        const copy = data.slice(0, width * height);
        try {
          return await helper.run('detect', { gray: { width, height, data: copy }, options: part }, [copy.buffer]);
        } catch {
          drop();
          return null;
        }
      });
      return detectSplit(cascade, gray, options, runners);
    },
    dispose: drop,
  };
}
