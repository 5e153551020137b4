/**
 * The Haar cascade on several threads, with detectMultiScale's exact result (shared/vision/cascade-split.ts):
 * the engine worker scans one part of the pyramid itself while helper workers scan the others, then the
 * windows are grouped as one run would group them. The cascade is most of a frame's time (about 100 ms for
 * 640x480 on one core of a small machine); the server runs it at the same resolution and parameters.
 * Any helper failure falls back to the plain single-thread detectMultiScale.
 */
import type { GrayImage, Rect } from '../../../shared/image/types';
import { mergeParts, splitPyramid } from '../../../shared/vision/cascade-split';
import { detectMultiScale, type DetectOptions, type HaarCascade } from '../../../shared/vision/haar-cascade';
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
  const single = (gray: GrayImage) => detectMultiScale(cascade, gray, options);
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
    async detect(gray) {
      const team = helpers;
      if (team.length === 0) return single(gray);
      const plan = splitPyramid(cascade, gray.width, gray.height, options, team.length + 1);
      if (!plan || plan.length < 2) return single(gray);
      // Helpers take the later parts (each gets its own copy of the pixels); this worker the first.
      const remote = plan.slice(1).map((part, i) => {
        const copy = gray.data.slice(0, gray.width * gray.height);
        return team[i].run('detect', { gray: { width: gray.width, height: gray.height, data: copy }, options: part }, [copy.buffer]);
      });
      const local = detectMultiScale(cascade, gray, plan[0]);
      let parts: Rect[][];
      try {
        parts = [local, ...(await Promise.all(remote))];
      } catch {
        drop();
        return single(gray);
      }
      // Null: a window at the bottom-right corner whose size cannot be restored; one plain run decides.
      return mergeParts(parts, gray.width, gray.height, options.minNeighbors ?? 5) ?? single(gray);
    },
    dispose: drop,
  };
}
